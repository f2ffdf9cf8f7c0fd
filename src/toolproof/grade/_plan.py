"""The fast route of a single-step case: an answer that makes exactly the expected calls.

A plan is built once per case whose verdict nothing but its calls decides:
one call set of one or more calls, each to its own tool; no reply matcher,
no count, no forbidden tool, no check of the suite's own, and matchers that
note nothing (``Matcher.pure``). An answer that makes those calls, each
with arguments that parse, validate against the schema the model was given
and match, passes; its verdict is built here from what the plan holds
already. Anything else returns None and takes the scorer's general path,
which reaches the same verdict for the answers the plan passes (a test
grades a generated mix both ways and compares every field).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from toolproof.grade._compile import CompiledCase
from toolproof.types import NO_EVIDENCE, Kind, Order, Response, Verdict

__all__ = ["Plan", "make_plan"]


class Plan:
    """What a passing verdict of one case holds, and how to recognise a passing answer."""

    __slots__ = ("_calls", "_head", "_index", "_strict", "_tail")

    def __init__(
        self,
        cc: CompiledCase,
        calls: tuple[tuple[str, Any, Any], ...],
    ) -> None:
        #: (tool, is_valid of its schema, argument matcher's ok), in expected order
        self._calls = calls
        self._index = {name: i for i, (name, _, _) in enumerate(calls)}
        self._strict = cc.order is Order.strict
        tools = tuple(name for name, _, _ in calls)
        n = len(calls)
        # Verdict fields, in order: case_id .. reply_ok, expected_tools
        self._head = (
            cc.case.id,
            cc.kind,
            cc.risk,
            cc.tags,
            True,  # passed
            None,  # failure
            (),  # checks
            True,  # decision_ok
            True,  # selection_ok
            True,  # structure_ok
            True,  # values_ok
            True,  # contract_ok
            None,  # reply_ok: not judged
            cc.expected_tools,
        )
        # pairs .. unsafe_calls
        self._tail = (tuple((t, t) for t in tools), n, n, (), 0)

    def quick(self, response: Response, target: str | None, attempt: int) -> Verdict | None:
        """The verdict when the answer makes exactly the expected calls; else None."""
        calls = response.tool_calls
        expected = self._calls
        if len(calls) != len(expected):
            return None
        if len(expected) == 1:
            call = calls[0]
            name, is_valid, ok = expected[0]
            if call.name != name or call.parse_error is not None:
                return None
            args = call.arguments
            try:
                if not is_valid(args):
                    return None
            except (ValueError, RecursionError):
                return None
            if not ok(args):
                return None
            actual: tuple[str, ...] = (name,)
        else:
            index = self._index
            seen = 0
            for position, call in enumerate(calls):
                i = index.get(call.name)
                if i is None or (self._strict and i != position):
                    return None
                bit = 1 << i
                if seen & bit or call.parse_error is not None:
                    return None
                seen |= bit
                _, is_valid, ok = expected[i]
                args = call.arguments
                try:
                    if not is_valid(args):
                        return None
                except (ValueError, RecursionError):
                    return None
                if not ok(args):
                    return None
            actual = tuple(call.name for call in calls)
        return Verdict(*self._head, actual, *self._tail, target, attempt, None, (), NO_EVIDENCE)


def make_plan(cc: CompiledCase, validator: Callable[[str], Any]) -> Plan | None:
    """The plan of a case, or None when its verdict may turn on more than its calls.

    ``validator(name)``: the schema validator of tool ``name`` as offered in the case.
    """
    if (
        cc.kind is not Kind.call
        or len(cc.call_sets) != 1
        or cc.text is not None
        or cc.count is not None
        or cc.forbidden
        or cc.reply_judged
    ):
        return None
    expected = cc.call_sets[0]
    names = [c.tools[0] for c in expected]
    if (
        not expected
        or any(len(c.tools) != 1 for c in expected)
        or len(set(names)) != len(names)
        or not cc.offered.issuperset(names)
        or not all(c.args.pure for c in expected)
    ):
        return None
    calls = tuple((c.tools[0], validator(c.tools[0]).is_valid, c.args.ok) for c in expected)
    return Plan(cc, calls)
