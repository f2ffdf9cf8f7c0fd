"""toolproof._jsonschema: no reference leaves the document; bad schemas are located problems."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema_rs
import pytest

from toolproof._jsonschema import check_value, rs_validator, schema_problems


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
