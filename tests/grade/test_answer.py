"""How ``grade._answer.schema_failure`` words a schema violation: the tool, the JSON
pointer of the first error (RFC 6901 escapes) and the validator's message."""

from toolproof._shared.schema_validators import rs_validator
from toolproof.grade._answer import schema_failure

SCHEMA = {
    "type": "object",
    "properties": {
        "a/b": {
            "type": "object",
            "properties": {"c~d": {"type": "array", "items": {"type": "integer"}}},
        }
    },
    "required": ["x"],
}


def test_an_error_at_the_root_points_at_the_root() -> None:
    message = schema_failure("t", rs_validator(SCHEMA), {})
    assert message == 't: /: "x" is a required property'


def test_a_nested_error_points_at_its_value_with_escapes() -> None:
    message = schema_failure("t", rs_validator(SCHEMA), {"x": 1, "a/b": {"c~d": [1, "2"]}})
    assert message == 't: /a~1b/c~0d/1: "2" is not of type "integer"'


def test_a_valid_value_has_no_failure_unless_already_refused() -> None:
    validator = rs_validator(SCHEMA)
    assert schema_failure("t", validator, {"x": 1}) is None
    assert schema_failure("t", validator, {}, checked=True) == 't: /: "x" is a required property'
