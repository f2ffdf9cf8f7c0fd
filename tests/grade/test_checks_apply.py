"""The built-in stages of a one-turn answer run in one pass (``one_turn``), the same through
the check interface as on the scorer's general path; a suite's own check that says it does
not apply to a case (``applies``) is left out of it (``those_that_apply``)."""

import itertools
from typing import Any

from tests.grade.conftest import make_suite
from toolproof.grade import SINGLE_STEP_CHECKS, Scorer
from toolproof.grade._answer import analyse, inspect_call
from toolproof.grade._assemble import assemble, single_facts
from toolproof.grade._checks import one_turn, run_checks, those_that_apply
from toolproof.records import tool_call_from_raw
from toolproof.types import Response, Stage

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


def test_the_built_in_stages_give_the_verdict_the_scorer_gives_in_stage_order() -> None:
    cases = [{"id": f"c{i}", "prompt": "p", "expect": e} for i, e in enumerate(EXPECTS)]
    scorer = Scorer(make_suite(cases))
    stages_seen: set[str] = set()
    for case in cases:
        cc = scorer.cases[case["id"]]
        for response in _answers():
            infos = [inspect_call(c, cc.offered, scorer._validators) for c in response.tool_calls]
            answer = analyse(cc, response, infos)
            found = one_turn(cc, answer)
            assert run_checks(SINGLE_STEP_CHECKS, cc, answer) == found
            ranks = [list(Stage).index(f.stage) for f in found]
            assert ranks == sorted(ranks), (case, response)
            stages_seen.update(f.stage.value for f in found)
            built = assemble(cc, single_facts(cc, answer), found)
            graded = scorer.grade_response(case["id"], response)
            assert (graded.passed, graded.checks) == (built.passed, built.checks), (case, response)
    # (the test is not empty: every stage finds something in some answer)
    assert stages_seen == {s.value for s in Stage}


def test_a_suite_check_that_does_not_apply_is_left_out() -> None:
    class Never:
        name = "never"

        def applies(self, case: Any) -> bool:
            return False

        def evaluate(self, case: Any, answer: Any) -> tuple[()]:
            raise AssertionError("a check that does not apply is never run")

    never = Never()
    cases = [{"id": "n", "prompt": "p", "expect": {"kind": "none"}}]
    scorer = Scorer(make_suite(cases), checks=[(never, None)])
    assert never not in those_that_apply((*SINGLE_STEP_CHECKS, never), scorer.cases["n"])
    assert scorer.grade_response("n", Response(text="ok")).passed


def test_a_check_without_applies_is_always_run() -> None:
    class Own:
        name = "own"

        def evaluate(self, case: Any, answer: Any) -> tuple[()]:
            return ()

    cases = [{"id": "n", "prompt": "p", "expect": {"kind": "none"}}]
    scorer = Scorer(make_suite(cases))
    own = Own()
    assert own in those_that_apply((*SINGLE_STEP_CHECKS, own), scorer.cases["n"])
