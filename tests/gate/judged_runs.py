"""Runs whose figures a judge decided, for the gate and report tests.

Two notes (c0, c1) are judge-decided arguments; c2… close a ticket, no judge.
The baseline's judge found both notes meant the same; this run's judge finds
c0's does not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tests.judges.judges_support import calibration_record, record
from toolproof.evaluate import Evaluation, evaluate
from toolproof.gate import GateOptions, run_gate
from toolproof.judges import Calibration, Judgement, record_digest
from toolproof.match import Question
from toolproof.types import (
    Case,
    Expect,
    Record,
    Suite,
    SuiteJudge,
    SuiteTool,
    Thresholds,
)

NOTE = SuiteTool(
    name="add_note",
    description="Add a note to a ticket.",
    parameters={
        "type": "object",
        "properties": {"ticket": {"type": "string"}, "note": {"type": "string"}},
        "required": ["ticket", "note"],
    },
)
OTHER = SuiteTool(name="close_ticket", description="Close a ticket.", parameters={"type": "object"})
EXPECTED = "refund because the item arrived damaged"
PARAPHRASE = "customer wants their money back, the product came broken"
JUDGE = "openai:judge-model"
FP = "fp-current"
LOW = Thresholds(selection=0, strict_pass=0, arguments=0, unsafe_calls=0)


def suite(judge: SuiteJudge | None = None, plain: int = 2) -> Suite:
    """c0, c1: a note whose meaning the judge decides; c2…: close the ticket, no judge."""
    cases = [
        Case(
            id=f"c{i}",
            prompt="Note it.",
            expect=Expect(
                call="add_note",
                args={"ticket": f"T-{i}", "note": {"semantic": EXPECTED, "judge": True}},
            ),
        )
        for i in range(2)
    ]
    cases += [
        Case(id=f"c{i}", prompt="Close it.", expect=Expect(call="close_ticket"))
        for i in range(2, 2 + plain)
    ]
    return Suite(
        name="s",
        tools=[NOTE, OTHER],
        cases=cases,
        thresholds={"default": LOW},
        judge=judge,
    )


def text(case: str) -> str:
    return f"{PARAPHRASE} ({case})"


def note(case: str, tool: str = "add_note") -> Record:
    args = {"ticket": f"T-{case[1:]}", "note": text(case)}
    return record(case, call=tool, args=args, target="m")


def said(
    rec: Record, same: bool, fp: str = FP, judge: str = JUDGE, reasoning: str = "compared"
) -> Judgement:
    return Judgement(
        case_id=rec.case_id,
        target=rec.target,
        record=record_digest(rec),
        rubric="argument_meaning",
        subject=Question("add_note", "note", EXPECTED, text(rec.case_id)).subject,
        judge=judge,
        fingerprint=fp,
        status="ok",
        fields={"same_meaning": same},
        reasoning=reasoning,
    )


def run(records: Sequence[Record], judgements: Sequence[Judgement], s: Suite) -> Evaluation:
    return evaluate(s, list(records), judgements=judgements)


def calibration(kappa: float, fingerprint: str = FP, rubric: str = "argument_meaning",
                field: str = "same_meaning") -> Calibration:  # fmt: skip
    return calibration_record(JUDGE, rubric, field, fingerprint, kappa)


def close(case: str, tool: str = "close_ticket") -> Record:
    return record(case, call=tool, args={}, target="m")


def runs(
    s: Suite, wrong: Sequence[str] = (), judge: str = JUDGE, reasoning: str = "compared"
) -> tuple[Evaluation, Evaluation]:
    """Baseline: both notes judged the same meaning, every ticket closed. This run: c0's
    note judged different, and the cases in ``wrong`` add a note instead of closing."""
    plain = [c.id for c in s.cases[2:]]
    b0, b1 = note("c0"), note("c1")
    base = run(
        [b0, b1, *map(close, plain)], [said(b0, True, "fp-base"), said(b1, True, "fp-base")], s
    )
    c0, c1 = note("c0"), note("c1")
    closed = [close(c, "add_note" if c in wrong else "close_ticket") for c in plain]
    answers = [said(c0, False, judge=judge, reasoning=reasoning), said(c1, True, judge=judge)]
    cur = run([c0, c1, *closed], answers, s)
    return base, cur


def gate(base: Evaluation, cur: Evaluation, *cals: Calibration) -> Any:
    return run_gate(cur, base, GateOptions(allow_partial=True, calibrations=cals))


#: The suite of :func:`suite` as a file (its calibration record: calibration.json beside it).
SUITE_YAML = f"""
suite: notes
tools:
  - name: add_note
    description: Add a note to a ticket.
    parameters:
      type: object
      properties: {{ticket: {{type: string}}, note: {{type: string}}}}
      required: [ticket, note]
  - name: close_ticket
    description: Close a ticket.
    parameters: {{type: object}}
thresholds:
  default: {{selection: 0, strict_pass: 0, arguments: 0}}
judge:
  calibration: [calibration.json]
cases:
  - {{id: c0, prompt: "Note it.", expect: {{call: add_note, args: {{ticket: T-0, note: {{semantic: "{EXPECTED}", judge: true}}}}}}}}
  - {{id: c1, prompt: "Note it.", expect: {{call: add_note, args: {{ticket: T-1, note: {{semantic: "{EXPECTED}", judge: true}}}}}}}}
  - {{id: c2, prompt: "Close it.", expect: {{call: close_ticket}}}}
  - {{id: c3, prompt: "Close it.", expect: {{call: close_ticket}}}}
"""
