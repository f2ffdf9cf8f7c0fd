"""The shorter routes of ``match_set`` agree with the optimal pairing over the whole cost
matrix (``pair_by_cost``), field by field, on generated call sets and answers: one
expected call against several calls (the first that costs least), and expected calls
each to a tool of its own (the pairing forced by the tools)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from toolproof.grade._answer import CallInfo, SetResult, match_set, pair_by_cost
from toolproof.grade._compile import CompiledCall, tool_positions
from toolproof.match._matchers import Exact, ObjectMatcher
from toolproof.types import FailureClass, Order, ToolCall

TOOLS = ("a", "b", "c", "d")


def _info(name: str, arguments: dict[str, Any]) -> CallInfo:
    return CallInfo(ToolCall(name=name, arguments=arguments), True, None, "", name, arguments)


def _fields(result: SetResult) -> dict[str, Any]:
    return {f.name: getattr(result, f.name) for f in fields(result)}


@st.composite
def _case(draw: Any) -> tuple[list[CompiledCall], list[CallInfo], Order, bool]:
    # expected calls: mostly one tool each (often all different), sometimes two
    n = draw(st.integers(1, 4))
    distinct = draw(st.booleans())
    pool = list(TOOLS)
    expected = []
    for _ in range(n):
        if distinct and pool:
            tool = draw(st.sampled_from(pool))
            pool.remove(tool)
            tools: tuple[str, ...] = (tool,)
        elif draw(st.integers(0, 4)) == 0:
            tools = tuple(draw(st.lists(st.sampled_from(TOOLS), min_size=2, max_size=2)))
        else:
            tools = (draw(st.sampled_from(TOOLS)),)
        want = draw(st.integers(0, 2))
        expected.append(CompiledCall(tools, ObjectMatcher({"x": Exact(want)}, False)))
    # the calls: often the expected ones in some order (most of them matching), else any
    if draw(st.booleans()):
        made = draw(st.permutations([(e.tools[-1], e.args.fields["x"]) for e in expected]))
        made = [(name, exact.value) for name, exact in made]  # type: ignore[attr-defined]
        made += draw(st.lists(st.tuples(st.sampled_from(TOOLS), st.integers(0, 2)), max_size=1))
    else:
        made = draw(
            st.lists(
                st.tuples(st.sampled_from((*TOOLS, "zz")), st.integers(0, 2)),
                min_size=1,
                max_size=5,
            )
        )
    calls = []
    for name, x in made:
        arguments = {"x": x if draw(st.integers(0, 4)) else draw(st.integers(0, 2))}
        if draw(st.integers(0, 5)) == 0:
            arguments["y"] = 1  # an unexpected argument: a reason of its own
        known = name != "zz"
        failure = FailureClass.schema_mismatch if draw(st.integers(0, 5)) == 0 else None
        call = ToolCall(name=name, arguments=arguments)
        calls.append(CallInfo(call, known, failure, "broken" if failure else "", name, arguments))
    order = draw(st.sampled_from(list(Order)))
    return expected, calls, order, draw(st.booleans())


@settings(max_examples=400, deadline=None)
@given(_case())
def test_the_shorter_routes_agree_with_the_pairing_over_the_cost_matrix(
    case: tuple[list[CompiledCall], list[CallInfo], Order, bool],
) -> None:
    expected, calls, order, rank = case
    assume(len(expected) + len(calls) > 2)  # (one against one is _match_one's, tested apart)
    quick = match_set(3, expected, calls, order, rank, tool_positions(expected))
    assert _fields(quick) == _fields(pair_by_cost(3, expected, calls, order, rank))


def test_one_expected_call_pairs_with_the_first_call_that_matches_else_the_first() -> None:
    expected = [CompiledCall(("a",), ObjectMatcher({"x": Exact(1)}, False))]
    calls = [
        _info("a", {"x": 0}),
        _info("a", {"x": 2}),
    ]
    result = match_set(0, expected, calls, Order.unordered, False)
    assert result.pairs == [(0, 0)]
    assert result.value_reasons == ["a: x: expected 1, got 0"]
    calls.append(_info("a", {"x": 1}))
    assert match_set(0, expected, calls, Order.unordered, False).pairs == [(0, 2)]
