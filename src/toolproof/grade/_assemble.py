"""One assembler for every verdict: facts about the answer plus findings -> Verdict.

The facts (what was called, how it paired, the per-stage figures) come from the
analysed answer; the findings come from the checks. One-turn and multi-step
verdicts are built here alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from toolproof.grade._answer import NO_CALL, SetResult, SingleAnswer
from toolproof.grade._compile import CompiledCase
from toolproof.types import (
    NO_EVIDENCE,
    Check,
    Evidence,
    FailureClass,
    Kind,
    MultiStep,
    Order,
    Record,
    Stage,
    Verdict,
)

__all__ = ["ANY_CALL", "Facts", "assemble", "cross_pairs", "order_pairs", "single_facts"]

#: The expected label of a call the contract allows without naming it: not counted in
#: the confusion matrix (docs/metrics-multistep.md).
ANY_CALL = "(any)"

_STAGE_RANK = {s: n for n, s in enumerate(Stage)}


class Facts(NamedTuple):
    """What an answer did, independent of whether it passed."""

    kind: Kind
    selection_ok: bool | None
    structure_ok: bool | None
    values_ok: bool | None
    reply_judged: bool
    expected_tools: tuple[str, ...]
    actual_tools: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...]
    calls_checked: int
    calls_schema_valid: int
    forbidden_called: tuple[str, ...]
    unsafe_calls: int
    multistep: MultiStep | None = None


def assemble(
    cc: CompiledCase,
    facts: Facts,
    findings: Sequence[Check],
    record: Record | None = None,
    notes: tuple[str, ...] = (),
    evidence: Evidence = NO_EVIDENCE,
) -> Verdict:
    """The verdict; ``evidence`` (what a diff needs) is kept only when a check failed."""
    if findings:
        checks = tuple(sorted(findings, key=_rank))
        stages = {c.stage for c in checks}
        reply_ok = not any(c.failure is FailureClass.wrong_reply for c in checks)
    else:
        checks, stages, reply_ok, evidence = (), set(), True, NO_EVIDENCE
    return Verdict(
        case_id=cc.case.id,
        kind=facts.kind,
        risk=cc.risk,
        tags=cc.tags,
        passed=not checks,
        failure=checks[0].failure if checks else None,
        checks=checks,
        decision_ok=Stage.decision not in stages,
        selection_ok=facts.selection_ok,
        structure_ok=facts.structure_ok,
        values_ok=facts.values_ok,
        contract_ok=Stage.contract not in stages,
        reply_ok=reply_ok if facts.reply_judged else None,
        expected_tools=facts.expected_tools,
        actual_tools=facts.actual_tools,
        pairs=facts.pairs,
        calls_checked=facts.calls_checked,
        calls_schema_valid=facts.calls_schema_valid,
        forbidden_called=facts.forbidden_called,
        unsafe_calls=facts.unsafe_calls,
        target=record.target if record is not None else None,
        attempt=record.attempt if record is not None else 0,
        multistep=facts.multistep,
        notes=notes,
        evidence=evidence,
    )


def _rank(check: Check) -> int:
    return _STAGE_RANK[check.stage]


def single_facts(cc: CompiledCase, answer: SingleAnswer) -> Facts:
    calls, best = answer.infos, answer.best
    unsafe = 0
    if cc.guarded:
        asked_for = {j for _, j in best.pairs} if best is not None and best.selection_ok else set()
        unsafe = sum(
            1 for j, i in enumerate(calls) if i.call.name in cc.guarded and j not in asked_for
        )
    structure_ok: bool | None = None
    checked = valid = 0
    for info in calls:
        if info.known or info.failure is not None:
            checked += 1
        if info.known:
            ok = info.failure is None
            valid += ok
            structure_ok = ok if structure_ok is None else structure_ok and ok
    if calls and structure_ok is None:
        structure_ok = True
    actual = tuple(i.call.name for i in calls)
    selection_ok = best.selection_ok if best is not None else None
    if selection_ok is None and calls and cc.kind is Kind.call:
        # a call of any tool was asked for: every tool called is offered
        selection_ok = all(i.known for i in calls)
    return Facts(  # positional: this is on the scorer's hot path
        cc.kind,
        selection_ok,
        structure_ok,
        best.values_ok if best is not None else None,
        cc.reply_judged,
        cc.expected_tools,
        actual,
        tuple(_pairs(cc, answer)),
        checked,
        valid,
        tuple(n for n in actual if n in cc.forbidden) if cc.forbidden else (),
        unsafe,
    )


def _pairs(cc: CompiledCase, answer: SingleAnswer) -> list[tuple[str, str]]:
    """(expected, actual) tool labels for the confusion matrix; '(none)' for no call."""
    calls, best = answer.infos, answer.best
    if best is None:
        if not calls:
            return [(cc.expected_tools[0] if cc.expected_tools else NO_CALL, NO_CALL)]
        return [(NO_CALL, i.call.name) for i in calls]
    if len(best.expected) == 1 and len(calls) == 1:
        name = calls[0].call.name
        return [(name if best.pairs else best.expected[0].tools[0], name)]
    return _set_pairs(cc, answer, best)


def _set_pairs(cc: CompiledCase, answer: SingleAnswer, best: SetResult) -> list[tuple[str, str]]:
    calls = answer.infos
    if not best.expected:
        return [(NO_CALL if cc.kind is not Kind.call else ANY_CALL, i.call.name) for i in calls]
    paired_e = {i for i, _ in best.pairs}
    paired_a = {j for _, j in best.pairs}
    return order_pairs(
        [(calls[j].call.name, calls[j].call.name) for _, j in best.pairs],
        [e.tools[0] for i, e in enumerate(best.expected) if i not in paired_e],
        [info.call.name for j, info in enumerate(calls) if j not in paired_a],
        cc.order,
    )


def order_pairs(
    kept: list[tuple[str, str]], missing: list[str], extra: list[str], order: Order
) -> list[tuple[str, str]]:
    """The confusion-matrix labels of paired calls (``kept``), expected calls not made
    (``missing``) and calls not expected (``extra``): a missing and an extra call, in
    their orders, make one confusion (wrong tool); what is left is a missed call
    (expected, (none)) or an unwanted one ((none), called), unless the order allows
    it: an expected call may be left out under ``subset``, a call added under
    ``superset``, and neither is counted then."""
    out = cross_pairs(kept + [(t, NO_CALL) for t in missing] + [(NO_CALL, a) for a in extra])
    if order is Order.subset:
        return [p for p in out if p[1] != NO_CALL or p[0] == NO_CALL]
    if order is Order.superset:
        return [p for p in out if p[0] != NO_CALL or p[1] == NO_CALL]
    return out


def cross_pairs(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Turn an unpaired expected and an unpaired actual into one confusion (wrong tool)."""
    missing = [e for e, a in pairs if a == NO_CALL]
    extra = [a for e, a in pairs if e == NO_CALL]
    kept = [(e, a) for e, a in pairs if e != NO_CALL and a != NO_CALL]
    while missing and extra:
        kept.append((missing.pop(0), extra.pop(0)))
    kept.extend((e, NO_CALL) for e in missing)
    kept.extend((NO_CALL, a) for a in extra)
    return kept
