"""Trajectory matching: every mode, ordered groups, argument overrides, optimal pairing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolproof.grade._trajectory import compile_trajectory, match_trajectory
from toolproof.match._matchers import Context
from toolproof.types import SuiteTool, ToolCall, Trajectory

CTX = Context(now=None, tz=None)
BY_NAME = {
    "lookup": SuiteTool(name="lookup"),
    "refund": SuiteTool(name="refund", match={"note": {"use": "ignore"}}),
    "search": SuiteTool(name="search", match={"q": {"use": "normalized"}}),
}


def call(name: str, **args: Any) -> ToolCall:
    return ToolCall(name=name, arguments=args, raw_arguments=json.dumps(args))


def traj(mode: str, steps: list[Any], match: dict[str, Any] | None = None) -> Any:
    t = Trajectory.model_validate({"mode": mode, "steps": steps, "match": match or {}})
    return compile_trajectory(t, BY_NAME, CTX, default_extra=False)


A = {"tool": "lookup", "args": {"id": "A"}}
B = {"tool": "lookup", "args": {"id": "B"}}
R = {"tool": "refund", "args": {"id": "A", "cents": 750}}


def test_strict_passes_in_order_and_fails_out_of_order() -> None:
    t = traj("strict", [A, R])
    assert match_trajectory(t, [call("lookup", id="A"), call("refund", id="A", cents=750)]).ok
    bad = match_trajectory(t, [call("refund", id="A", cents=750), call("lookup", id="A")])
    assert not bad.ok
    assert bad.tools_ok  # the right tools, only the order is wrong
    assert any("out of order" in r for r in bad.reasons)


def test_strict_rejects_extra_and_missing_calls() -> None:
    t = traj("strict", [A, R])
    extra = match_trajectory(
        t, [call("lookup", id="A"), call("lookup", id="A"), call("refund", id="A", cents=750)]
    )
    assert not extra.ok and any(r.startswith("unexpected") for r in extra.reasons)
    missing = match_trajectory(t, [call("lookup", id="A")])
    assert not missing.ok and any(r.startswith("missing") for r in missing.reasons)


def test_unordered_ignores_order_but_not_count() -> None:
    t = traj("unordered", [A, B])
    assert match_trajectory(t, [call("lookup", id="B"), call("lookup", id="A")]).ok
    assert not match_trajectory(t, [call("lookup", id="A")]).ok
    assert not match_trajectory(
        t, [call("lookup", id="A"), call("lookup", id="B"), call("lookup", id="C")]
    ).ok


def test_subset_allows_missing_expected_calls_but_no_others() -> None:
    t = traj("subset", [A, R])
    assert match_trajectory(t, [call("lookup", id="A")]).ok
    assert match_trajectory(t, []).ok
    assert not match_trajectory(t, [call("lookup", id="A"), call("search", q="x")]).ok


def test_superset_allows_extra_calls_but_needs_every_expected_one() -> None:
    t = traj("superset", [A])
    assert match_trajectory(t, [call("search", q="x"), call("lookup", id="A")]).ok
    assert not match_trajectory(t, [call("search", q="x")]).ok


def test_ordered_groups_of_unordered_calls() -> None:
    t = traj("strict", [[A, B], R])
    refund = call("refund", id="A", cents=750)
    assert match_trajectory(t, [call("lookup", id="A"), call("lookup", id="B"), refund]).ok
    assert match_trajectory(t, [call("lookup", id="B"), call("lookup", id="A"), refund]).ok
    assert not match_trajectory(t, [call("lookup", id="B"), refund, call("lookup", id="A")]).ok


def test_group_order_holds_in_superset_mode() -> None:
    t = traj("superset", [A, R])
    refund = call("refund", id="A", cents=750)
    assert match_trajectory(t, [call("lookup", id="A"), call("search", q="x"), refund]).ok
    assert not match_trajectory(t, [refund, call("lookup", id="A")]).ok


def test_wrong_arguments_are_reported_against_the_right_tool() -> None:
    t = traj("strict", [A])
    result = match_trajectory(t, [call("lookup", id="Z")])
    assert not result.ok
    assert result.tools_ok and result.values_ok is False
    assert any("wrong arguments" in r and "id" in r for r in result.reasons)


def test_per_tool_match_overrides_replace_the_default_matchers() -> None:
    spec = {"tool": "refund", "args": {"id": "A", "cents": 750, "reason": "damaged"}}
    strict = traj("strict", [spec])
    loose = traj("strict", [spec], match={"refund": {"reason": {"use": "ignore"}}})
    actual = [call("refund", id="A", cents=750, reason="broken")]
    assert not match_trajectory(strict, actual).ok
    assert match_trajectory(loose, actual).ok


def test_tool_default_matchers_apply() -> None:
    t = traj("strict", [{"tool": "search", "args": {"q": "Novák"}}])
    assert match_trajectory(t, [call("search", q="  novák ")]).ok


def test_pairing_is_optimal_not_greedy() -> None:
    # A greedy pass pairs the loose first expectation with the first call, id=A,
    # and then the second expectation (id=A only) finds nothing left.
    loose = {"tool": "lookup", "args": {"id": {"one_of": ["A", "B"]}}}
    t = traj("unordered", [loose, A])
    assert match_trajectory(t, [call("lookup", id="A"), call("lookup", id="B")]).ok


def test_identical_calls_in_two_groups_keep_their_order() -> None:
    t = traj("strict", [A, R, A])
    refund = call("refund", id="A", cents=750)
    assert match_trajectory(t, [call("lookup", id="A"), refund, call("lookup", id="A")]).ok


@pytest.mark.parametrize("mode", ["strict", "unordered", "subset", "superset"])
def test_an_unknown_tool_never_pairs(mode: str) -> None:
    t = traj(mode, [A])
    result = match_trajectory(t, [call("nope", id="A")])
    assert not result.ok
