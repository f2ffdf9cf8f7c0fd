"""toolproof._shared.schema_validators: no reference leaves the document; bad schemas are located problems."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.subprocess_support import fresh_python
from toolproof._shared.schema_validators import (
    _META_FORMAT_KEYS,
    check_value,
    rs_validator,
    schema_problems,
    surely_meta_valid,
)


def _file_ref(tmp_path: Path) -> str:
    target = tmp_path / "int.json"
    target.write_text(json.dumps({"type": "integer"}))
    return target.as_uri()


def test_jsonschema_rs_never_reads_a_file_reference(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": _file_ref(tmp_path)}}}
    with pytest.raises(jsonschema_rs.ValidationError, match="Retrieval is disabled"):
        rs_validator(schema)
    # left to its defaults, jsonschema-rs would have read it:
    assert jsonschema_rs.validator_for(schema).is_valid({"a": 1})


def test_schema_problems_locate_refs_types_and_patterns(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"$ref": _file_ref(tmp_path)},
            "b": {"$ref": "http://127.0.0.1:9/s.json"},
            "c": {"type": "int"},
            "d": {"$ref": "#/$defs/d"},
        },
        "$defs": {"d": {"type": "string"}},
    }
    problems = dict(schema_problems(schema))
    assert set(problems) == {
        ("properties", "a", "$ref"),
        ("properties", "b", "$ref"),
        ("properties", "c", "type"),
    }
    assert "did you mean 'integer'" in problems[("properties", "c", "type")]
    bad = schema_problems({"type": "object", "properties": {"x": {"pattern": "("}}})
    assert bad and bad[0][0][:2] == ("properties", "x")


def test_local_refs_and_lookaround_patterns_work() -> None:
    schema = {
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/p"}},
        "$defs": {"p": {"type": "string", "pattern": "^(?=.*[0-9])[a-z0-9]+$"}},
    }
    assert schema_problems(schema) == []
    assert check_value(schema, {"p": "abc1"}) is None
    assert check_value(schema, {"p": "abc"}) is not None


def test_validators_and_checks_are_cached_by_content() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}
    same = json.loads(json.dumps(schema))  # equal content, another object
    assert rs_validator(same) is rs_validator(schema)
    assert schema_problems(same) == schema_problems(schema) == []
    assert rs_validator({**schema, "required": ["n"]}) is not rs_validator(schema)
    # schemas that compare equal in Python (1 == True == 1.0) are different schemas
    ones = {"enum": [1]}
    assert rs_validator({"enum": [True]}) is not rs_validator(ones)
    assert check_value({"enum": [True]}, True) is None
    assert check_value(ones, True) is not None
    assert check_value({"enum": [True]}, 1) is not None
    assert schema_problems({"properties": {"n": {"minimum": True}}}) == [
        (("properties", "n", "minimum"), "invalid JSON Schema: True is not of type 'number'")
    ]
    assert check_value({"minimum": 1}, 0.5) is not None
    assert check_value({"minimum": 0.5}, 0.5) is None


def test_a_refused_schema_is_refused_every_time() -> None:
    schema = {"$ref": "#/$defs/missing"}
    messages = set()
    for _ in range(3):
        with pytest.raises(ValueError) as info:
            rs_validator(schema)
        messages.add(str(info.value))
        assert check_value(schema, 1) == str(info.value).splitlines()[0]
    assert len(messages) == 1


# --- the fast meta-schema check: its "valid" must be jsonschema's "valid" ---------------

_KEYWORDS = [
    "type", "properties", "items", "prefixItems", "required", "enum", "const", "minimum",
    "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength",
    "pattern", "patternProperties", "additionalProperties", "allOf", "anyOf", "oneOf", "not",
    "if", "then", "else", "$ref", "$defs", "definitions", "dependencies", "dependentRequired",
    "dependentSchemas", "format", "default", "examples", "title", "description", "uniqueItems",
    "minItems", "maxItems", "contains", "minContains", "maxContains", "propertyNames",
    "unevaluatedProperties", "unevaluatedItems", "$anchor", "$comment", "readOnly",
    "deprecated", "contentMediaType", "contentEncoding", "contentSchema", "minProperties",
    "maxProperties", "x-custom",
]  # fmt: skip
_STRINGS = st.sampled_from(
    ["string", "object", "integer", "number", "array", "boolean", "null", "a", "", "#",
     "#/$defs/a", "(", "[a-z]+", "\\p{L}", "(?<n>a)", "a b", "http://x/ y", "^x$", "email"]
)  # fmt: skip
_NUMBERS = st.integers(-3, 3) | st.sampled_from([0.5, 1.0, -1.5, 2**64, -(2**64)])
_LEAVES = st.none() | st.booleans() | _NUMBERS | _STRINGS


def _schemas() -> st.SearchStrategy[Any]:
    values = st.recursive(
        _LEAVES,
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(st.sampled_from(_KEYWORDS) | _STRINGS, inner, max_size=4)
        ),
        max_leaves=12,
    )
    return st.dictionaries(st.sampled_from(_KEYWORDS), values, max_size=5)


def _jsonschema_accepts(schema: Any) -> bool:
    import jsonschema

    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError:
        return False
    return True


@settings(max_examples=600, deadline=None)
@given(_schemas())
def test_the_fast_meta_check_never_passes_what_jsonschema_refuses(schema: Any) -> None:
    if surely_meta_valid(schema):
        assert _jsonschema_accepts(schema), schema


@pytest.mark.parametrize(
    "schema",
    [
        {"pattern": "\\p{L}"},  # a regex for jsonschema-rs, not for Python
        {"patternProperties": {"(?<n>a)": {}}},
        {"properties": {"a": {"pattern": "("}}},
        {"$schema": "http://json-schema.org/draft-07/schema#", "items": [{}]},
        {"$id": "x"},
        {"enum": (1, 2)},
        {"minimum": float("nan")},
        {"maximum": 2**70},
    ],
)
def test_the_fast_meta_check_leaves_what_it_cannot_know_to_jsonschema(schema: Any) -> None:
    assert not surely_meta_valid(schema)
    assert schema_problems(schema) == _slow_problems(schema)


def _slow_problems(schema: Any) -> list[Any]:
    from toolproof._shared import schema_validators as _jsonschema

    saved = _jsonschema.surely_meta_valid
    _jsonschema.surely_meta_valid = lambda schema: False  # type: ignore[assignment]
    try:
        return _jsonschema._schema_problems(schema)
    finally:
        _jsonschema.surely_meta_valid = saved


def test_the_meta_schema_formats_are_the_ones_the_fast_check_knows() -> None:
    """If a jsonschema release puts a format on another keyword, the fast check must learn it."""
    from jsonschema_specifications import REGISTRY

    base = "https://json-schema.org/draft/2020-12/"
    docs = {uri: REGISTRY.contents(uri) for uri in REGISTRY if uri.startswith(base)}
    found: set[tuple[str, str]] = set()

    def formats(node: Any, doc: str, where: str) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("format"), str):
                found.add((where, node["format"]))
            ref = node.get("$ref")
            if isinstance(ref, str):  # "#/$defs/x" or "meta/core#/$defs/x"
                target, _, pointer = ref.partition("#")
                uri = base + target if target else doc
                sub: Any = docs[uri]
                for part in pointer.strip("/").split("/"):
                    sub = sub[part]
                formats(sub, uri, where)
            for key, value in node.items():
                formats(value, doc, where + " names" if key == "propertyNames" else where)
        elif isinstance(node, list):
            for value in node:
                formats(value, doc, where)

    for uri, doc in docs.items():
        for keyword, sub in doc.get("properties", {}).items():
            formats(sub, uri, keyword)
    assert found == {
        ("$id", "uri-reference"),
        ("$schema", "uri"),
        ("$ref", "uri-reference"),
        ("$dynamicRef", "uri-reference"),
        ("$recursiveRef", "uri-reference"),
        ("$vocabulary names", "uri"),
        ("pattern", "regex"),
        ("patternProperties names", "regex"),
    }
    # every keyword but these three sends a schema the slow way
    checked_here = {"$ref", "pattern", "patternProperties"}
    assert {k.split()[0] for k, _ in found} - checked_here == set(_META_FORMAT_KEYS)


@pytest.mark.parametrize(
    "pattern",
    [
        *["^ORD-[0-9]{6}$", "", "(", "[a-", "a{2,1}", "(?P<n>a)(?P=n)", "\\p{L}", "(?<n>a)", "*"],
        *["\\", 1, None, 2.5],  # patternProperties keys read from YAML need not be strings
    ],
)
def test_the_regex_format_check_is_jsonschemas(pattern: object) -> None:
    """The fast check's own regex test agrees with jsonschema's format checker."""
    import jsonschema

    from toolproof._shared.schema_validators import _is_regex

    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    assert _is_regex(pattern) is checker.conforms(pattern, "regex")


def test_a_non_string_pattern_key_is_left_to_jsonschema_as_before() -> None:
    schema = {"type": "object", "patternProperties": {1: {"type": "string"}}}
    assert not surely_meta_valid(schema)
    assert schema_problems(schema) == _slow_problems(schema)


def test_plain_schemas_are_checked_without_importing_jsonschema(tmp_path: Path) -> None:
    """Checking tool schemas with patterns (the usual kind) leaves jsonschema unloaded; a
    schema the fast check cannot vouch for still gets jsonschema's located problem."""
    code = (
        "import sys\n"
        "from toolproof._shared.schema_validators import schema_problems\n"
        "plain = {'type': 'object', 'properties': {'id': {'type': 'string', "
        "'pattern': '^ORD-[0-9]{6}$'}}, 'required': ['id']}\n"
        "print(schema_problems(plain), 'jsonschema' in sys.modules, 'referencing' in sys.modules)\n"
        "print(schema_problems({'properties': {'a': {'pattern': '('}}}))\n"
        "print(schema_problems({'$id': 'x', 'type': 'object'}), 'jsonschema' in sys.modules)\n"
    )
    out = fresh_python(code)
    lines = out.splitlines()
    assert lines[0] == "[] False False"
    assert lines[1] == str(_slow_problems({"properties": {"a": {"pattern": "("}}}))
    assert lines[2] == "[] True"
