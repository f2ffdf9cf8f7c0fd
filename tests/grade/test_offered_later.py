"""What a failure says of a call of a tool a scripted user had not offered yet (``offer``):
the verdict stays ``unknown_tool``; its message and the diff's transcript say the tool was
held back and at which user turn it was offered."""

from __future__ import annotations

from pathlib import Path

from tests.late_tools import late_tools_run
from toolproof.grade import Scorer
from toolproof.types import FailureClass, Record, Suite, UserTurn


def _graded(suite: Suite, record: Record) -> tuple[list[str], FailureClass | None, str]:
    scorer = Scorer(suite)
    verdict = scorer.grade(record)
    return [c.detail for c in verdict.checks], verdict.failure, scorer.diff(verdict)


def test_a_call_before_its_offer_says_when_the_tool_was_offered(tmp_path: Path) -> None:
    suite, (early, _) = late_tools_run(tmp_path / "run")
    assert early.case_id == "calls-it-too-soon"
    details, failure, diff = _graded(suite, early)
    assert failure is FailureClass.unknown_tool  # the kind does not change
    assert details == ["called sort_file before it was offered (offered at user turn 2)"]
    lines = diff.splitlines()
    # the user turn that offered it shows the offer, right after its message
    at = lines.index(
        "  user   I have updated some more functions you can choose from. What about now?"
    )
    assert lines[at + 1] == "  offer  sort_file (user turn 2)"
    assert sum(1 for line in lines if line.startswith("  offer ")) == 1


def test_a_turn_that_offered_nothing_yet_says_it_was_never_offered(tmp_path: Path) -> None:
    suite, (early, _) = late_tools_run(tmp_path / "run")
    # the same conversation, recorded as ending before any turn offered it
    turns = [t.model_copy(update={"offered": None}) for t in early.user_turns or []]
    never = early.model_copy(update={"user_turns": turns})
    details, failure, diff = _graded(suite, never)
    assert failure is FailureClass.unknown_tool
    assert details == [
        "called sort_file before it was offered (no user turn of this conversation offered it)",
        "called sort_file before it was offered (no user turn of this conversation offered it)",
    ]
    assert "  offer " not in diff


def test_a_tool_the_case_never_offers_is_still_an_unknown_tool(tmp_path: Path) -> None:
    suite, (early, _) = late_tools_run(tmp_path / "run")
    transcript = [m.model_copy(deep=True) for m in early.transcript or []]
    for m in transcript:
        for c in m.tool_calls:
            c.name = "shred_file"
    other = early.model_copy(update={"transcript": transcript})
    details, failure, _ = _graded(suite, other)
    assert failure is FailureClass.unknown_tool
    called = [d for d in details if d.startswith("called")]
    assert called == ["called unknown tool shred_file", "called unknown tool shred_file"]


def test_a_stop_turn_that_offers_shows_its_offer_last(tmp_path: Path) -> None:
    suite, (early, _) = late_tools_run(tmp_path / "run")
    # a stop turn that offers (nothing follows it): the offer line closes the transcript
    turns = list(early.user_turns or [])
    turns[1] = turns[1].model_copy(update={"offered": None})
    turns[2] = UserTurn(
        text="Thanks.", stop="user_stop", source="script", at=9, offered=["sort_file"]
    )
    late = early.model_copy(update={"user_turns": turns})
    details, _, diff = _graded(suite, late)
    assert details[0] == "called sort_file before it was offered (offered at user turn 3)"
    assert diff.splitlines()[-1] == "  offer  sort_file (user turn 3)"


def test_a_records_files_long_list_of_offered_names_is_cut_in_the_diff(tmp_path: Path) -> None:
    suite, (early, _) = late_tools_run(tmp_path / "run")
    turns = list(early.user_turns or [])
    turns[1] = turns[1].model_copy(update={"offered": [f"tool_{i}" for i in range(500)]})
    _, _, diff = _graded(suite, early.model_copy(update={"user_turns": turns}))
    (line,) = [x for x in diff.splitlines() if x.startswith("  offer ")]
    assert line.startswith("  offer  tool_0, tool_1, ") and line.endswith("… (user turn 2)")
    assert len(line) < 240
