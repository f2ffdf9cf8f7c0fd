"""The structure stage in the ``bfcl`` profile: BFCL's own rules decide, the schema is noted."""

from __future__ import annotations

from typing import Any

from toolproof.grade import Scorer
from toolproof.types import FailureClass, Response, Suite, ToolCall

TOOL = {
    "name": "search",
    "parameters": {
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": ["plus", "comfort"]},
            "price_max": {"type": "number"},
            "stars": {"type": "integer"},
            "city": {"type": "string"},
        },
        "required": ["kind", "city"],
    },
}
# as ``toolproof import bfcl`` writes BFCL's ground truth in the bfcl profile: a value
# outside the enum, a null, and a "variable" of another type than the schema's
ARGS = {
    "kind": "PLUS",
    "price_max": None,
    "stars": {"optional": {"exact": "dontcare"}},
    "city": {"optional": "Berlin"},
}


def _scorer(matching: str) -> Scorer:
    case = {"id": "c", "prompt": "p", "tools": [TOOL], "expect": {"call": "search", "args": ARGS}}
    return Scorer(
        Suite.model_validate(
            {"name": "s", "tools": [], "cases": [case], "defaults": {"matching": matching}}
        )
    )


def _grade(scorer: Scorer, args: dict[str, Any]) -> Any:
    return scorer.grade_response(
        "c", Response(tool_calls=[ToolCall(id="1", name="search", arguments=args)])
    )


GOOD = {"kind": "plus", "price_max": None, "stars": "dontcare", "city": "berlin"}


def test_schema_breaks_are_noted_not_deciding_in_the_bfcl_profile() -> None:
    verdict = _grade(_scorer("bfcl"), GOOD)
    assert verdict.passed and verdict.structure_ok
    assert verdict.calls_checked == 1 and verdict.calls_schema_valid == 0
    (note,) = verdict.notes
    assert note.startswith("schema (reported, not deciding in the bfcl profile): search: /")


def test_a_wrong_value_fails_on_values_with_the_schema_still_noted() -> None:
    verdict = _grade(_scorer("bfcl"), {**GOOD, "city": "x"})
    assert not verdict.passed and verdict.failure is FailureClass.wrong_arguments
    assert verdict.notes and verdict.calls_schema_valid == 0


def test_bfcl_structural_rules_still_decide() -> None:
    scorer = _scorer("bfcl")
    missing = _grade(scorer, {k: v for k, v in GOOD.items() if k != "city"})
    assert missing.failure is FailureClass.schema_mismatch
    assert "missing required parameter 'city'" in missing.checks[0].detail
    unknown = _grade(scorer, {**GOOD, "limit": 3})
    assert unknown.failure is FailureClass.schema_mismatch
    assert "/limit: unexpected parameter" in unknown.checks[0].detail


def test_types_are_decided_by_the_expected_values() -> None:
    scorer = _scorer("bfcl")
    # "dontcare" compared exactly, as BFCL compares a variable; 3 is not the variable
    assert not _grade(scorer, {**GOOD, "stars": "DontCare"}).passed
    assert not _grade(scorer, {**GOOD, "stars": 3}).passed
    assert not _grade(scorer, {**GOOD, "price_max": 0}).passed


def test_the_strict_default_refuses_what_breaks_the_schema() -> None:
    verdict = _grade(_scorer("strict"), GOOD)
    assert not verdict.passed and verdict.failure is FailureClass.schema_mismatch
    assert verdict.notes == ()


def test_the_plans_noted_pass_is_the_general_paths() -> None:
    from toolproof.types import Record

    scorer = _scorer("bfcl")
    response = Response(tool_calls=[ToolCall(id="1", name="search", arguments=GOOD)])
    record = Record(case_id="c", response=response, target="m", attempt=2)
    planned = scorer._plans["c"].passed(response.tool_calls, "m", 2)
    assert planned is not None and planned.notes
    assert planned == scorer._analysed(scorer._routes["c"], response, record) == scorer.grade(record)
    # a call that fails BFCL's rules, or its values, gets nothing from the plan
    for args in ({k: v for k, v in GOOD.items() if k != "city"}, {**GOOD, "city": "x"}):
        calls = [ToolCall(id="1", name="search", arguments=args)]
        assert scorer._plans["c"].passed(calls, "m", 2) is None
