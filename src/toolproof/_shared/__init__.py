"""The shared machinery every layer may use: safe file reading, key redaction,
JSON text and numbers, schema validators, suite regexes, located errors.

Nothing here is public API; each module is in a layer of the import contract."""
