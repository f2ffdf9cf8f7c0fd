"""The scorer with judge-decided arguments: pure, reading the judge's answers as data."""

from __future__ import annotations

from tests.judges.judges_support import record
from toolproof.gate._thresholds import judge_derived
from toolproof.grade import Scorer
from toolproof.match import Decisions, Question
from toolproof.types import Case, Expect, Suite, SuiteTool

NOTE = SuiteTool(
    name="add_note",
    description="Add a note to a ticket.",
    parameters={
        "type": "object",
        "properties": {"ticket": {"type": "string"}, "note": {"type": "string"}},
        "required": ["ticket", "note"],
    },
)
EXPECTED = "refund because the item arrived damaged"


def suite() -> Suite:
    args = {"ticket": "T-1", "note": {"semantic": EXPECTED, "judge": True}}
    case = Case(id="c0", prompt="Note it.", expect=Expect(call="add_note", args=args))
    return Suite(name="s", tools=[NOTE], cases=[case])


def answer(note: str, ticket: str = "T-1"):  # type: ignore[no-untyped-def]
    return record("c0", call="add_note", args={"ticket": ticket, "note": note}, target="t")


def grade(note: str, answers: dict[str, bool] | None = None, ticket: str = "T-1"):  # type: ignore[no-untyped-def]
    table = Decisions(answers=dict(answers or {}))
    scorer = Scorer(suite(), decisions=table)
    return scorer, scorer.grade(answer(note, ticket))


def subject(note: str) -> str:
    return Question("add_note", "note", EXPECTED, note).subject


def test_undecided_is_neither_pass_nor_failure_and_its_question_is_kept() -> None:
    scorer, v = grade("money back, broken product")
    assert v is not None
    assert (v.passed, v.failure, v.values_ok, v.undecided, v.judge_decided) == (
        False, None, None, 1, False,
    )  # fmt: skip
    [q] = scorer.questions[("t", "c0", 0)]
    assert (q.tool, q.param, q.expected, q.actual) == (
        "add_note",
        "note",
        EXPECTED,
        "money back, broken product",
    )
    assert any("left to the judge, undecided" in n for n in v.notes)


def test_the_judges_answer_decides() -> None:
    note = "money back, broken product"
    _, same = grade(note, {subject(note): True})
    assert same is not None and same.passed and same.judge_decided and not same.undecided
    scorer, different = grade(note, {subject(note): False})
    assert different is not None and not different.passed
    assert different.failure is not None and different.failure.value == "wrong_arguments"
    assert different.judge_decided
    # had the judge said "same", it would have passed: kept for the gate
    assert scorer.if_same[("t", "c0", 0)].passed
    assert ("t", "c0", 0) not in scorer.if_different


def test_a_pass_the_judge_decided_keeps_its_other_outcome() -> None:
    note = "money back, broken product"
    scorer, v = grade(note, {subject(note): True})
    assert v is not None and v.passed and v.judge_decided
    # had the judge said "different", it would have failed: kept for the baseline comparison
    other = scorer.if_different[("t", "c0", 0)]
    assert not other.passed and other.failure is not None and other.judge_decided
    assert ("t", "c0", 0) not in scorer.if_same


def test_an_outcome_that_does_not_turn_on_the_judge_is_not_judge_derived() -> None:
    scorer, v = grade("anything", ticket="T-9")
    assert v is not None and v.failure is not None and v.failure.value == "wrong_arguments"
    assert not v.judge_decided and not v.undecided and not scorer.questions
    # a value of the wrong type fails before any judge is needed
    scorer, _ = grade("x")
    bad = scorer.grade(record("c0", call="add_note", args={"ticket": "T-1", "note": 5}, target="t"))
    assert bad is not None and bad.failure is not None
    assert bad.failure.value == "schema_mismatch" and not bad.judge_decided and not bad.undecided


def test_judge_derived_findings_are_those_the_judge_alone_fails() -> None:
    note = "a new colour"
    scorer, v = grade(note, {subject(note): False})
    assert v is not None
    derived = judge_derived(suite(), [v], scorer.if_same)
    assert any(m.startswith("all: strict pass") for m in derived)
    # another, deterministic failure is not judge-derived
    scorer2, v2 = grade(note, {subject(note): False}, ticket="T-9")
    assert v2 is not None and judge_derived(suite(), [v2], scorer2.if_same) == set()
