"""Drift between a suite's tools and their source."""

from __future__ import annotations

from toolproof.importers import drift
from toolproof.types import SuiteTool


def _tool(name: str, **fields: object) -> SuiteTool:
    base: dict[str, object] = {
        "name": name,
        "description": "d",
        "parameters": {"type": "object", "properties": {"a": {"type": "string", "enum": ["x"]}}},
    }
    return SuiteTool.model_validate({**base, **fields})


def test_identical_tools_have_no_drift() -> None:
    assert drift([_tool("f")], [_tool("f")]) == []


def test_effect_and_risk_are_the_suites_own() -> None:
    assert drift([_tool("f", effect="destructive", risk="high")], [_tool("f")]) == []


def test_every_kind_of_difference_is_named_with_its_path() -> None:
    suite = [_tool("f", description="old"), _tool("gone")]
    source = [
        _tool(
            "f",
            parameters={
                "type": "object",
                "properties": {
                    "a": {"type": "string", "enum": ["x", "y"]},
                    "b": {"type": "integer"},
                },
            },
            strict=True,
        ),
        _tool("new"),
    ]
    found = [(d.tool, d.path, d.message) for d in drift(suite, source)]
    assert found == [
        ("f", ("description",), 'differs (suite: "old", source: "d")'),
        (
            "f",
            ("parameters", "properties", "a", "enum"),
            'differs (suite: ["x"], source: ["x", "y"])',
        ),
        (
            "f",
            ("parameters", "properties", "b"),
            'missing in the suite (source: {"type": "integer"})',
        ),
        ("f", ("strict",), "differs (suite: null, source: true)"),
        ("new", (), "in the source but not in the suite"),
        ("gone", (), "in the suite but no longer in the source"),
    ]


def test_a_property_only_in_the_suite() -> None:
    suite = [_tool("f", parameters={"type": "object", "properties": {}, "required": []})]
    source = [_tool("f", parameters={"type": "object", "properties": {}})]
    assert [(d.path, d.message) for d in drift(suite, source)] == [
        (("parameters", "required"), "not in the source (suite: [])")
    ]
