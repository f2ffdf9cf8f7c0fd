"""The raw view: a call printed as text and recovered by the adapter counts as no call."""

from __future__ import annotations

from typing import Any

from tests.grade.conftest import make_suite
from toolproof.grade import Scorer, raw_view, recovered_calls
from toolproof.types import FailureClass, Message, Record, Response, Suite, ToolCall

LOOKUP = {"call": "lookup_order", "args": {"order_id": "ORD-104821"}}


def _call(recovered: bool, **args: Any) -> ToolCall:
    args = args or {"order_id": "ORD-104821"}
    return ToolCall(id="c1", name="lookup_order", arguments=args, extracted_from_text=recovered)


def _suite() -> Suite:
    return make_suite([{"id": "a", "prompt": "Where is ORD-104821?", "expect": LOOKUP}])


def test_a_recovered_call_passes_repaired_and_is_a_missed_call_raw() -> None:
    scorer = Scorer(_suite())
    record = Record(case_id="a", response=Response(tool_calls=[_call(True)]))
    repaired = scorer.grade(record)
    raw = scorer.grade_raw(record)
    assert repaired is not None and repaired.passed
    assert raw is not None and not raw.passed
    assert raw.failure is FailureClass.missed_call
    # the record itself is untouched
    assert record.response is not None and record.response.tool_calls[0].extracted_from_text
    # the raw failure shows what the model printed instead of calling
    diff = scorer.diff(raw)
    assert "actual:   (no call)" in diff
    assert (
        'printed as text, not called (counts only when repaired): lookup_order(order_id="ORD-104821")'
        in diff
    )


def test_only_the_raw_failure_shows_the_printed_call() -> None:
    scorer = Scorer(_suite())
    record = Record(case_id="a", response=Response(tool_calls=[_call(True, order_id="ORD-1")]))
    raw = scorer.grade_raw(record)
    repaired = scorer.grade(record)
    assert raw is not None and repaired is not None and not repaired.passed
    assert (
        'printed as text, not called (counts only when repaired): lookup_order(order_id="ORD-1")'
        in scorer.diff(raw)
    )
    # the repaired view called it: its diff shows the call as the answer's, with no such line
    assert "printed as text" not in scorer.diff(repaired)
    assert 'actual:   lookup_order(order_id="ORD-1")' in scorer.diff(repaired)


def test_native_calls_have_no_raw_view() -> None:
    scorer = Scorer(_suite())
    record = Record(case_id="a", response=Response(tool_calls=[_call(False)]))
    assert raw_view(record) is None and scorer.grade_raw(record) is None
    assert recovered_calls(record) == 0


def _multi_suite(**case: Any) -> Suite:
    return make_suite(
        [
            {
                "id": "m",
                "prompt": "Where is ORD-104821?",
                "max_steps": 3,
                "mocks": {"lookup_order": {"default": {"result": {"status": "shipped"}}}},
                "expect": LOOKUP,
                **case,
            }
        ]
    )


def _multi_record(first_recovered: bool, **extra: Any) -> Record:
    transcript = [
        Message(role="user", content="Where is ORD-104821?"),
        Message(role="assistant", content=None, tool_calls=[_call(first_recovered)]),
        Message(role="tool", content='{"status": "shipped"}', tool_call_id="c1"),
        Message(role="assistant", content="It has shipped."),
    ]
    return Record(
        case_id="m",
        response=Response(text="It has shipped."),
        transcript=transcript,
        **extra,
    )


def test_a_multi_step_attempt_ends_where_the_call_was_printed() -> None:
    scorer = Scorer(_multi_suite())
    record = _multi_record(True)
    view = raw_view(record)
    assert view is not None and view.stopped_at == 1
    assert view.record.transcript is not None and len(view.record.transcript) == 2
    assert recovered_calls(record) == 1
    repaired, raw = scorer.grade(record), scorer.grade_raw(record)
    assert repaired is not None and repaired.passed
    assert raw is not None and raw.failure is FailureClass.missed_call
    assert scorer.grade_raw(_multi_record(False)) is None


def test_an_end_state_the_raw_attempt_never_reached_fails_and_says_why() -> None:
    suite = _multi_suite(
        expect={"kind": "text"},
        end_state={"state": {"orders": {"ORD-104821": {"status": "shipped"}}}},
    )
    scorer = Scorer(suite)
    state = {"orders": {"ORD-104821": {"status": "shipped"}}}
    record = _multi_record(True, end_state=state)
    repaired, raw = scorer.grade(record), scorer.grade_raw(record)
    assert repaired is not None and repaired.passed
    assert raw is not None and not raw.passed
    assert raw.multistep is not None and raw.multistep.end_state_ok is False
    reasons = [c.message for c in raw.checks]
    assert any("ends at step 1" in r and "not recorded" in r for r in reasons), reasons
