"""How an expected call is written in reports: no stray comma when only extra arguments are allowed."""

from __future__ import annotations

from typing import Any

import pytest

from tests.grade.conftest import make_suite
from toolproof.grade import Scorer
from toolproof.grade._compile import (
    ArgMemo,
    ToolIndex,
    compile_case,
    compile_expectations,
    describe_calls,
    value_key,
)
from toolproof.match import SpecError, context
from toolproof.types import Case, Response, Suite, SuiteTool, ToolCall

PET = SuiteTool(
    name="createPet",
    parameters={
        "type": "object",
        "properties": {"name": {"type": "string"}, "tag": {"type": "string"}},
    },
)


def _suite(expect: dict[str, Any]) -> Suite:
    case = Case.model_validate({"id": "c", "prompt": "Add Rex.", "expect": expect})
    return Suite(name="s", tools=[PET], cases=[case])


@pytest.mark.parametrize(
    ("expect", "shown"),
    [
        ({"call": "createPet", "extra_args": True}, "createPet(...)"),
        ({"call": "createPet"}, "createPet()"),
        ({"call": "createPet", "args": {"name": "Rex"}}, 'createPet(name="Rex")'),
        (
            {"call": "createPet", "args": {"name": "Rex"}, "extra_args": True},
            'createPet(name="Rex", ...)',
        ),
    ],
)
def test_expected_calls_are_written_without_a_stray_comma(
    expect: dict[str, Any], shown: str
) -> None:
    suite = _suite(expect)
    compiled = compile_case(suite.cases[0], suite, {"createPet": PET}, context(suite))
    assert compiled.single is not None and compiled.single.describe() == shown


def test_the_report_diff_of_a_template_case_has_no_stray_comma() -> None:
    suite = _suite({"call": "createPet", "extra_args": True})
    wrong = Response(tool_calls=[ToolCall(name="deletePet", arguments={})])
    scorer = Scorer(suite)
    diff = scorer.diff(scorer.grade_response("c", wrong))
    assert diff == "expected: createPet(...)\nactual:   deletePet()"


# Compiling with a memo: each distinct expected value is compiled once per suite.

ORDER = SuiteTool(
    name="find_order",
    parameters={
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "count": {"type": "integer"},
            "note": {"type": "string"},
            "when": {"type": "string"},
        },
    },
    match={"note": "normalized"},
)

#: Expected values, some repeated across cases, some wrong in ways that differ only by type.
VALUES: list[dict[str, Any]] = [
    {"id": "A-1", "count": 1, "note": "Rex"},
    {"id": "A-2", "count": True, "note": "Rex"},
    {"id": "A-3", "count": 1.0, "note": {"exact": "Rex"}},
    {"id": "A-4", "count": {"range": {"min": 1}}, "note": "Rex"},
    {"id": "A-5", "count": {"range": [5, 1]}},
    {"id": "A-6", "count": {"ignore": False}},
    {"id": {"regx": "^A"}, "count": 1},
    {"id": {"one_of": ["A-1", {"regex": "("}]}},
    {"when": {"date": "tomorrow"}},
    {"when": {"date": "in 3 blorps"}},
    {"count": float("nan")},
    {"count": -0.0, "note": {"soft": "Rex", "threshold": 2}},
    {"count": 0.0, "note": {"soft": "Rex", "threshold": 0.5}},
]


def _outcome(fn: Any, *args: Any) -> tuple[str, Any]:
    try:
        result = fn(*args)
    except SpecError as exc:
        return "error", (str(exc), exc.path)
    if result is None:
        return "ok", None
    return "ok", [[c.describe() for c in cs] for cs in result.call_sets]


def test_a_memo_changes_neither_the_matchers_nor_the_errors() -> None:
    cases = [
        Case.model_validate(
            {
                "id": f"c{i}",
                "prompt": "Find it.",
                "expect": {"calls": [{"tool": "find_order", "args": args}]},
            }
        )
        for i, args in enumerate(VALUES * 3)
    ]
    suite = Suite(name="s", tools=[ORDER], cases=cases)
    by_name = ToolIndex(suite.tools)
    ctx = context(suite)
    memo = ArgMemo(by_name, ctx)
    outcomes = set()
    for case in cases:
        plain = _outcome(compile_case, case, suite, by_name, ctx)
        memoised = _outcome(compile_case, case, suite, by_name, ctx, memo)
        checked = _outcome(compile_expectations, case, suite, by_name, ctx, memo)
        assert memoised == plain
        assert checked == (plain if plain[0] == "error" else ("ok", None))
        outcomes.add(repr(plain))
    assert len(outcomes) == len(VALUES)  # 1, 1.0, True, 0.0 and -0.0 stay apart
    assert memo.entries  # the repeated values were compiled once and kept


def test_a_memo_made_for_other_tools_or_context_is_not_used() -> None:
    case = Case.model_validate(
        {"id": "c", "prompt": "Find it.", "expect": {"call": "find_order", "args": {"note": "Rex"}}}
    )
    suite = Suite(name="s", tools=[ORDER], cases=[case])
    by_name = ToolIndex(suite.tools)
    other = ArgMemo(ToolIndex([ORDER]), context(suite))
    compile_case(case, suite, by_name, context(suite), other)
    assert not other.entries


@pytest.mark.parametrize(
    ("a", "b"),
    [(1, 1.0), (1, True), (0.0, -0.0), ("1", 1), ({"a": 1, "b": 2}, {"b": 2, "a": 1}), ([1], (1,))],
)
def test_values_written_differently_have_different_keys(a: Any, b: Any) -> None:
    assert value_key(a) != value_key(b)
    assert value_key(a) == value_key(a if not isinstance(a, dict | list) else type(a)(a))


def test_a_call_sets_description_is_worked_out_once_and_is_describe_calls() -> None:
    expect = {
        "alternatives": [
            [{"tool": "lookup_order", "args": {"order_id": "ORD-123456"}}],
            [{"tool": "search", "args": {"q": "x"}}, {"tool": "search"}],
        ]
    }
    cc = Scorer(make_suite([{"id": "a", "prompt": "p", "expect": expect}])).cases["a"]
    for i, calls in enumerate(cc.call_sets):
        first = cc.describe_set(i)
        assert first == describe_calls(calls)
        assert cc.describe_set(i) is first  # (kept, not made again)
    assert cc.describe_set(0) != cc.describe_set(1)
