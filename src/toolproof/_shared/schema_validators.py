"""JSON Schema validators for untrusted tool schemas: no network, no files, bounded regexes.

Tool schemas come from suite files. Left to their defaults, both JSON Schema
libraries toolproof uses would follow a ``$ref`` out of the document:
``jsonschema-rs`` reads ``file://`` references and fetches ``http(s)://``
ones, and ``jsonschema`` reads both too (with a deprecation warning). Here a
``$ref`` resolves only within the document: ``jsonschema-rs`` runs with
retrieval off, and ``jsonschema`` with a registry whose retrieve refuses.

``pattern`` keywords run on ``jsonschema-rs``'s engine: the linear-time
``regex`` crate, or ``fancy-regex`` with a backtracking limit for patterns
that need lookaround, so a hostile pattern cannot hang a run.

:func:`schema_problems` lists what is wrong with a schema, each at its path,
so that ``validate`` can point at the line instead of raising a traceback.

Both the meta-schema check and the compiled validator are cached by the
schema's content (a hash of its ``repr``, which tells ``1`` from ``1.0``
and ``True``, and keeps key order, on which the first problem reported
depends): a schema that many tools or cases share is checked and compiled
once, and two schemas that differ are never confused, whatever they are
called.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import math
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import jsonschema_rs

if TYPE_CHECKING:
    from jsonschema import FormatChecker
    from referencing import Registry

__all__ = [
    "check_value",
    "content_key",
    "rs_validator",
    "schema_problems",
    "surely_meta_valid",
    "value_checker",
]

#: Steps fancy-regex may backtrack before it gives up on a match.
BACKTRACK_LIMIT = 1_000_000
_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")
_ALIASES = {
    "int": "integer",
    "bool": "boolean",
    "float": "number",
    "str": "string",
    "dict": "object",
    "list": "array",
    "none": "null",
    "double": "number",
}

Path_ = tuple[str | int, ...]
_RS_ERRORS = (ValueError, RecursionError, jsonschema_rs.ReferencingError)


def _refuse(uri: str) -> Any:
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


# ``jsonschema`` (with ``referencing``) is imported only for what needs it: the
# meta-schema check of a schema jsonschema-rs cannot vouch for, and the format
# check of a ``$ref``. A run whose tool schemas are plain starts without it.


@functools.cache
def _registry() -> Registry[Any]:
    """The registry whose retrieve refuses every reference outside the document."""
    from referencing import Registry

    return Registry(retrieve=_refuse)  # type: ignore[call-arg]


@functools.cache
def _formats() -> FormatChecker:
    """The format checker of ``jsonschema``'s 2020-12 meta-schema check."""
    import jsonschema

    return jsonschema.Draft202012Validator.FORMAT_CHECKER


#: Entries each cache keeps before it starts afresh (a bound for long-lived processes).
CACHE_SIZE = 4096


def content_key(schema: Any) -> bytes | None:
    """A digest of a schema's content: equal for equal schemas written alike.

    None for a schema nested too deeply to write out (it is not cached).
    """
    try:
        text = repr(schema)
    except RecursionError:
        return None
    return hashlib.sha256(text.encode("utf-8", "backslashreplace")).digest()


class _Cache:
    """Results by content key, bounded: at CACHE_SIZE entries it is emptied."""

    def __init__(self) -> None:
        self.entries: dict[bytes, Any] = {}

    def get(self, schema: Any, make: Callable[[Any], Any]) -> Any:
        key = content_key(schema)
        if key is None:
            return make(schema)
        try:
            return self.entries[key]
        except KeyError:
            pass
        value = make(schema)
        if len(self.entries) >= CACHE_SIZE:
            self.entries.clear()
        self.entries[key] = value
        return value


class _Failed:
    """A schema jsonschema-rs refused, kept so that the refusal is cached too."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


_VALIDATORS = _Cache()
_PROBLEMS = _Cache()


def _compile(schema: Any) -> Any:
    try:
        return jsonschema_rs.validator_for(
            schema,
            offline=True,
            pattern_options=jsonschema_rs.FancyRegexOptions(backtrack_limit=BACKTRACK_LIMIT),
        )
    except _RS_ERRORS as exc:
        return _Failed(exc)


def rs_validator(schema: Any) -> Any:
    """A ``jsonschema-rs`` validator that never retrieves a reference (network or file).

    Compiled once per distinct schema; a schema it refuses raises the same
    error each time it is asked for.
    """
    validator = _VALIDATORS.get(schema, _compile)
    if isinstance(validator, _Failed):
        raise validator.error.with_traceback(None)
    return validator


def check_value(schema: Any, value: Any) -> str | None:
    """The first reason ``value`` violates ``schema``, or None; same engine as the scorer."""
    return value_checker(schema)(value)


def value_checker(schema: Any) -> Callable[[Any], str | None]:
    """``check_value`` for one schema, compiled once: for checking many values against it."""
    try:
        validator = rs_validator(schema)
    except _RS_ERRORS as exc:
        message = _first_line(exc)
        return lambda value: message

    def check(value: Any) -> str | None:
        try:
            for error in validator.iter_errors(value):
                return str(error.message)
        except _RS_ERRORS as exc:
            return _first_line(exc)
        return None

    return check


def schema_problems(schema: Any) -> list[tuple[Path_, str]]:
    """What is wrong with a tool's parameters schema: (path inside it, message).

    Checked once per distinct schema (the meta-schema check is slow).
    """
    return list(_PROBLEMS.get(schema, _schema_problems))


def _schema_problems(schema: Any) -> list[tuple[Path_, str]]:
    if not isinstance(schema, dict):
        return [((), "the parameters schema must be a mapping")]
    problems = list(_type_problems(schema))
    problems.extend(_ref_problems(schema))
    if problems:
        return problems
    try:
        if not surely_meta_valid(schema):
            problem = _meta_problem(schema)
            if problem is not None:
                return [problem]
    except RecursionError:
        return [((), "the schema nests too deeply")]
    problems.extend(_pattern_problems(schema))
    if problems:
        return problems
    try:
        rs_validator(schema)
    except _RS_ERRORS as exc:
        return [((), f"invalid JSON Schema: {_first_line(exc)}")]
    return []


def _meta_problem(schema: dict[str, Any]) -> tuple[Path_, str] | None:
    """The first problem ``jsonschema``'s 2020-12 meta-schema check finds, or None."""
    import jsonschema
    from jsonschema.exceptions import SchemaError

    try:
        jsonschema.Draft202012Validator(schema, registry=_registry()).check_schema(schema)
    except SchemaError as exc:
        return tuple(exc.path), f"invalid JSON Schema: {exc.message}"
    return None


#: Keywords whose values the 2020-12 meta-schema checks with a ``format`` (test-checked).
#: A schema naming one of the first set goes the slow way; the others are checked here.
_META_FORMAT_KEYS = frozenset({"$schema", "$id", "$vocabulary", "$dynamicRef", "$recursiveRef"})
_LIMIT = 2**63


def surely_meta_valid(schema: dict[str, Any]) -> bool:
    """True when ``jsonschema``'s meta-schema check would find nothing, known fast.

    ``jsonschema``'s check is the reference (its first problem is the message
    toolproof shows), and it is slow: milliseconds a schema. ``jsonschema-rs``
    checks against the same 2020-12 meta-schema in microseconds, but skips the
    ``format`` checks and reads some values differently. So its "valid" is
    trusted only for a schema of plain JSON values (str keys, no tuples, no
    integers beyond 64 bits, no NaN), with no keyword that switches dialect or
    base URI, whose ``pattern`` and ``patternProperties`` keys compile as
    Python regexes and whose ``$ref`` values pass the format checks jsonschema
    would run. Anything else is left to jsonschema: False means "not known".
    """
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if not isinstance(key, str) or key in _META_FORMAT_KEYS:
                    return False
                stack.append(value)
            if not _formats_pass(node):
                return False
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, bool | str) or node is None:
            continue
        elif isinstance(node, int):
            if not -_LIMIT <= node < _LIMIT:
                return False
        elif not (isinstance(node, float) and math.isfinite(node)):
            return False  # a tuple, a set, a NaN, anything not read from JSON
    try:
        return bool(jsonschema_rs.meta.is_valid(schema))
    except (ValueError, RecursionError, TypeError, OverflowError):
        return False


def _formats_pass(node: dict[str, Any]) -> bool:
    """The format checks the meta-schema puts on this mapping's keywords, over-applied.

    Every mapping is checked as if it were a subschema, so nothing the
    meta-schema would check is missed (checking more only sends a schema
    the slow way).
    """
    patterns = [node["pattern"]] if isinstance(node.get("pattern"), str) else []
    if isinstance(node.get("patternProperties"), dict):
        patterns.extend(node["patternProperties"])
    for pattern in patterns:
        if not _is_regex(pattern):
            return False
    ref = node.get("$ref")
    return not isinstance(ref, str) or _formats().conforms(ref, "uri-reference")


def _is_regex(pattern: object) -> bool:
    """``FORMAT_CHECKER.conforms(pattern, "regex")``, as jsonschema checks it (its
    ``is_regex``: a string compiles with ``re``; anything else passes), without
    importing jsonschema."""
    if not isinstance(pattern, str):
        return True
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _walk(node: Any, path: Path_ = ()) -> Iterator[tuple[Path_, dict[str, Any]]]:
    """Every subschema-like mapping in a schema, with its path (iterative, bounded)."""
    stack: list[tuple[Path_, Any]] = [(path, node)]
    while stack:
        where, item = stack.pop()
        if len(where) > 200:
            continue
        if isinstance(item, dict):
            yield where, item
            for key, value in item.items():
                if key not in ("enum", "const", "examples", "default"):
                    stack.append(((*where, str(key)), value))
        elif isinstance(item, list):
            stack.extend(((*where, i), value) for i, value in enumerate(item))


def _type_problems(schema: dict[str, Any]) -> Iterator[tuple[Path_, str]]:
    for where, node in _walk(schema):
        if where[-1:] == ("properties",) or where[-1:] == ("$defs",):
            continue  # a mapping of names, not a schema
        kind = node.get("type")
        names = kind if isinstance(kind, list) else [kind] if isinstance(kind, str) else []
        for name in names:
            if isinstance(name, str) and name not in _TYPES:
                guess = _ALIASES.get(name.lower()) or next(
                    iter(difflib.get_close_matches(name, _TYPES, n=1)), None
                )
                hint = f"; did you mean '{guess}'?" if guess else f" (known: {', '.join(_TYPES)})"
                yield (*where, "type"), f"unknown JSON Schema type '{name}'{hint}"


def _ref_problems(schema: dict[str, Any]) -> Iterator[tuple[Path_, str]]:
    for where, node in _walk(schema):
        if where[-1:] == ("properties",):
            continue
        for key in ("$ref", "$dynamicRef"):
            ref = node.get(key)
            if isinstance(ref, str) and not ref.startswith("#"):
                yield (
                    (*where, key),
                    f"'{ref}' refers outside the schema; toolproof resolves {key} only "
                    "within the document (#/$defs/...), never over the network or from files",
                )


def _pattern_problems(schema: dict[str, Any]) -> Iterator[tuple[Path_, str]]:
    for where, node in _walk(schema):
        if where[-1:] == ("properties",):
            continue
        patterns: list[tuple[Path_, Any]] = []
        if isinstance(node.get("pattern"), str):
            patterns.append(((*where, "pattern"), node["pattern"]))
        if isinstance(node.get("patternProperties"), dict):
            patterns.extend(
                ((*where, "patternProperties", k), k) for k in node["patternProperties"]
            )
        for at, pattern in patterns:
            try:
                rs_validator({"pattern": pattern})
            except _RS_ERRORS:
                yield at, f"invalid regular expression /{pattern}/"
