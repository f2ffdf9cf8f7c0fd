"""A built-in check that says it does not apply to a case finds nothing in any answer to it,
so the scorer may leave it out (``those_that_apply``) without changing a verdict."""

import itertools
from typing import Any

from tests.grade.conftest import make_suite
from toolproof.grade import SINGLE_STEP_CHECKS, Scorer
from toolproof.grade._answer import analyse, inspect_call
from toolproof.grade._checks import run_checks, those_that_apply
from toolproof.records import tool_call_from_raw
from toolproof.types import Response

EXPECTS: list[dict[str, Any]] = [
    {"call": "lookup_order", "args": {"order_id": "ORD-123456"}},
    {"calls": [{"tool": "lookup_order", "args": {"order_id": "ORD-123456"}}, {"tool": "search"}]},
    {"call": "search", "forbidden": ["cancel_order"]},
    {"kind": "call", "count": {"min": 1, "max": 2}},
    {"call": "search", "count": 1},
    {"kind": "none"},
    {"kind": "none", "forbidden": ["cancel_order"]},
    {"kind": "none", "count": 0},
    {"kind": "text"},
    {"kind": "text", "text": {"contains": "order"}},
    {"kind": "clarify"},
    {"kind": "clarify", "forbidden": ["cancel_order"]},
    {"kind": "confirm", "forbidden": ["cancel_order"]},
    {"kind": "refuse"},
]

CALLS = [
    ("lookup_order", '{"order_id": "ORD-123456"}'),
    ("lookup_order", '{"order_id": "ORD-1"}'),  # breaks the schema
    ("lookup_order", '{"order_id": "ORD-654321"}'),  # a wrong value
    ("search", '{"q": "x"}'),
    ("cancel_order", '{"order_id": "ORD-123456"}'),
    ("nope", "{}"),  # an unknown tool
    ("search", '{"q": '),  # not JSON
]


def _answers() -> list[Response]:
    out = [Response(text=""), Response(text="Which order do you mean?"), Response(refusal="no")]
    for n in (1, 2, 3):
        for picked in itertools.permutations(CALLS, n):
            calls = [tool_call_from_raw(t, raw, f"c{i}") for i, (t, raw) in enumerate(picked)]
            out.append(Response(text="Your order", tool_calls=calls))
    return out


def test_a_check_that_does_not_apply_finds_nothing_and_leaving_it_out_changes_nothing() -> None:
    cases = [{"id": f"c{i}", "prompt": "p", "expect": e} for i, e in enumerate(EXPECTS)]
    scorer = Scorer(make_suite(cases))
    answers = _answers()
    left_out = 0
    for case in cases:
        cc = scorer.cases[case["id"]]
        kept = those_that_apply(SINGLE_STEP_CHECKS, cc)
        left = [c for c in SINGLE_STEP_CHECKS if c not in kept]
        left_out += len(left)
        for response in answers:
            infos = [inspect_call(c, cc.offered, scorer._validators) for c in response.tool_calls]
            answer = analyse(cc, response, infos)
            for check in left:
                assert check.evaluate(cc, answer) == (), (case, check.name, response)
            everything = run_checks(SINGLE_STEP_CHECKS, cc, answer)
            assert run_checks(kept, cc, answer) == everything
    # (the test is not empty: checks are left out of some cases, and never the first stages)
    assert left_out >= 10
    assert all(
        c in those_that_apply(SINGLE_STEP_CHECKS, scorer.cases[case["id"]])
        for c in SINGLE_STEP_CHECKS[:3]
        for case in cases
    )


def test_a_check_without_applies_is_always_run() -> None:
    class Own:
        name = "own"

        def evaluate(self, case: Any, answer: Any) -> tuple[()]:
            return ()

    cases = [{"id": "n", "prompt": "p", "expect": {"kind": "none"}}]
    scorer = Scorer(make_suite(cases))
    own = Own()
    assert own in those_that_apply((*SINGLE_STEP_CHECKS, own), scorer.cases["n"])
