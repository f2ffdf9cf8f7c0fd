"""``toolproof coverage``: per tool, what a suite's cases exercise."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from toolproof.cli._app import app
from toolproof.suite import suite_coverage
from toolproof.types import Suite

ROOT = Path(__file__).resolve().parents[2]

TOOLS = [
    {
        "name": "cancel",
        "effect": "destructive",
        "parameters": {
            "type": "object",
            "properties": {
                "order": {"type": "string"},
                "reason": {"type": "string", "enum": ["late", "damaged", "other"]},
            },
            "required": ["order", "reason"],
        },
    },
    {"name": "lookup", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}},
]
CASES = [
    {
        "id": "a",
        "prompt": "p",
        "expect": {"call": "cancel", "args": {"order": "1", "reason": "late"}},
    },
    {
        "id": "b",
        "prompt": "p",
        "expect": {
            "call": "cancel",
            "args": {"order": "2", "reason": {"one_of": ["other", "late"]}},
        },
        "tags": ["edge:dates"],
    },
    {"id": "c", "prompt": "p", "expect": {"kind": "confirm", "forbidden": ["cancel"]}},
    {
        "id": "d",
        "prompt": "p",
        "expect": {"kind": "clarify", "forbidden": ["cancel"]},
        "tags": ["multilingual"],
    },
    {"id": "e", "prompt": "p", "expect": {"kind": "text"}},
    {"id": "f", "prompt": "p", "tools": ["lookup"], "expect": {"kind": "none"}},
    {
        "id": "g",
        "prompt": "p",
        "expect": {"call": "cancel", "args": {"order": "3", "reason": {"ignore": True}}},
    },
]


def test_counts_and_gaps_per_tool() -> None:
    suite = Suite.model_validate({"name": "s", "tools": TOOLS, "cases": CASES})
    report = suite_coverage(suite)
    rows = {r.tool: r for r in report.tools}
    cancel = rows["cancel"]
    assert (cancel.positive, cancel.no_call, cancel.clarify, cancel.confirm, cancel.edge) == (
        3,
        0,
        1,
        1,
        2,
    )
    assert cancel.required_unpinned == []
    assert cancel.enum_unused == {"reason": ["damaged"]}
    lookup = rows["lookup"]
    assert (lookup.positive, lookup.no_call) == (0, 1)
    assert rows["(no tool named)"].no_call == 1
    assert [r.tool for r in report.tools][-1] == "(no tool named)"


def test_required_never_pinned_and_case_level_tools() -> None:
    own = dict(TOOLS[0], name="refund")
    cases = [
        {
            "id": "x",
            "prompt": "p",
            "tools": [own],
            "expect": {
                "call": "refund",
                "args": {"order": "1", "reason": {"ignore": True}},
                "extra_args": True,
            },
        }
    ]
    report = suite_coverage(Suite.model_validate({"name": "s", "tools": [], "cases": cases}))
    (row,) = report.tools
    assert row.tool == "refund" and row.positive == 1
    assert row.required_unpinned == ["reason"]
    assert row.enum_unused == {"reason": ["late", "damaged", "other"]}


def test_cli_prints_the_table_of_the_example_suite() -> None:
    result = CliRunner().invoke(app, ["coverage", str(ROOT / "examples" / "support")])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("suite 'support': ")
    assert lines[1].split() == ["tool", "positive", "no-call", "clarify", "confirm", "edge"]
    assert any(line.startswith("lookup_order ") for line in lines)
    assert "enum values never used" in result.output


def test_cli_json() -> None:
    result = CliRunner().invoke(app, ["coverage", "--json", str(ROOT / "examples" / "support")])
    assert result.exit_code == 0, result.output
    assert '"required_unpinned"' in result.output
