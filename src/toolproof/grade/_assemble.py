"""One assembler for every verdict: facts about the answer plus findings -> Verdict.

The facts (what was called, how it paired, the per-stage figures) come from the
analysed answer; the findings come from the checks. One-turn and multi-step
verdicts are built here alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

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
    Risk,
    Stage,
    Verdict,
)

__all__ = ["ANY_CALL", "Facts", "assemble", "cross_pairs", "order_pairs", "single_facts"]

#: The expected label of a call the contract allows without naming it: not counted in
#: the confusion matrix (docs/metrics-multistep.md).
ANY_CALL = "(any)"

_STAGE_RANK = {s: n for n, s in enumerate(Stage)}
# (an enum member read from its class costs about a call in Python 3.11: EnumType has a
# __getattr__; the assembler reads these for every verdict)
_DECISION, _CONTRACT, _WRONG_REPLY = Stage.decision, Stage.contract, FailureClass.wrong_reply
_CALL = Kind.call
_SUBSET, _SUPERSET = Order.subset, Order.superset


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
    in_order: bool = False,
) -> Verdict:
    """The verdict; ``evidence`` (what a diff needs) is kept only when a check failed.
    ``in_order``: the findings come in stage order already (as ``one_turn`` gives them)."""
    # (the facts unpacked at once: a named tuple's field costs more to read than a name)
    (
        kind,
        selection_ok,
        structure_ok,
        values_ok,
        reply_judged,
        expected_tools,
        actual_tools,
        pairs,
        calls_checked,
        calls_schema_valid,
        forbidden_called,
        unsafe_calls,
        multistep,
    ) = facts
    decision_ok = contract_ok = True
    reply_ok: bool | None = True if reply_judged else None  # None: not judged
    if findings:
        if in_order or len(findings) == 1:
            checks = tuple(findings)
        else:
            checks = tuple(sorted(findings, key=_rank))
        for stage, failure, _detail, _source in checks:
            if stage is _DECISION:
                decision_ok = False
            elif stage is _CONTRACT:
                contract_ok = False
            if reply_ok and failure is _WRONG_REPLY:
                reply_ok = False
    else:
        checks, evidence = (), NO_EVIDENCE
    return _new_tuple(  # (build_verdict, without a call of its own: the scorer's hot path)
        Verdict,
        verdict_head(
            case_id=cc.case_id,
            kind=kind,
            risk=cc.risk,
            tags=cc.tags,
            passed=not checks,
            failure=checks[0].failure if checks else None,
            checks=checks,
            decision_ok=decision_ok,
            selection_ok=selection_ok,
            structure_ok=structure_ok,
            values_ok=values_ok,
            contract_ok=contract_ok,
            reply_ok=reply_ok,
            expected_tools=expected_tools,
        )
        + verdict_tail(
            actual_tools=actual_tools,
            pairs=pairs,
            calls_checked=calls_checked,
            calls_schema_valid=calls_schema_valid,
            forbidden_called=forbidden_called,
            unsafe_calls=unsafe_calls,
            target=record.target if record is not None else None,
            attempt=record.attempt if record is not None else 0,
            multistep=multistep,
            notes=notes,
            evidence=evidence,
        ),
    )


# A verdict is built by name, in two halves: a call naming more than 15 arguments is
# compiled to build a dict of them (and a named tuple's constructor always takes one),
# which costs several times the tuple itself on the scorer's hot path. Each half names
# at most 15; ``tests/grade/test_assemble.py`` checks that they name every field of a
# Verdict, in its order.


def verdict_head(
    *,
    case_id: str,
    kind: Kind,
    risk: Risk,
    tags: tuple[str, ...],
    passed: bool,
    failure: FailureClass | None,
    checks: tuple[Check, ...],
    decision_ok: bool,
    selection_ok: bool | None,
    structure_ok: bool | None,
    values_ok: bool | None,
    contract_ok: bool,
    reply_ok: bool | None,
    expected_tools: tuple[str, ...],
) -> tuple[Any, ...]:
    """The first fields of a verdict: the case, and its outcome stage by stage."""
    return (
        case_id,
        kind,
        risk,
        tags,
        passed,
        failure,
        checks,
        decision_ok,
        selection_ok,
        structure_ok,
        values_ok,
        contract_ok,
        reply_ok,
        expected_tools,
    )


def verdict_tail(
    *,
    actual_tools: tuple[str, ...],
    pairs: tuple[tuple[str, str], ...],
    calls_checked: int,
    calls_schema_valid: int,
    forbidden_called: tuple[str, ...],
    unsafe_calls: int,
    target: str | None,
    attempt: int,
    multistep: MultiStep | None,
    notes: tuple[str, ...],
    evidence: Evidence,
    judge_decided: bool = False,
    undecided: int = 0,
    undecided_statements: int = 0,
) -> tuple[Any, ...]:
    """The other fields of a verdict: what the answer did, and which attempt it was."""
    return (
        actual_tools,
        pairs,
        calls_checked,
        calls_schema_valid,
        forbidden_called,
        unsafe_calls,
        target,
        attempt,
        multistep,
        notes,
        evidence,
        judge_decided,
        undecided,
        undecided_statements,
    )


def build_verdict(head: tuple[Any, ...], tail: tuple[Any, ...]) -> Verdict:
    """The verdict of the two halves :func:`verdict_head` and :func:`verdict_tail` name."""
    return _new_tuple(Verdict, head + tail)


_new_tuple = tuple.__new__


def _rank(check: Check) -> int:
    return _STAGE_RANK[check.stage]


def single_facts(cc: CompiledCase, answer: SingleAnswer) -> Facts:
    calls, best = answer.infos, answer.best
    if not calls:  # (then no call set is judged, and the case alone says the rest)
        expected_tools = cc.expected_tools
        missed = ((expected_tools[0] if expected_tools else NO_CALL, NO_CALL),)
        return Facts(
            cc.kind, None, None, None, cc.reply_judged, expected_tools, (), missed, 0, 0, (), 0
        )
    unsafe = 0
    if cc.guarded:
        asked_for = {j for _, j in best.pairs} if best is not None and best.selection_ok else set()
        unsafe = sum(
            1 for j, i in enumerate(calls) if i.name in cc.guarded and j not in asked_for
        )
    # structure: whether every call to an offered tool validated
    structure_ok = True
    checked = valid = 0
    names = []
    for info in calls:
        names.append(info.name)
        if info.known:
            checked += 1
            if info.failure is None:
                if not info.message:  # (a message alone: the schema broken, not deciding)
                    valid += 1
            else:
                structure_ok = False
        elif info.failure is not None:
            checked += 1
    actual = tuple(names)
    if best is None:
        selection_ok = values_ok = None
        pairs = tuple([(NO_CALL, name) for name in actual])
    else:
        selection_ok, values_ok = best.selection_ok, best.values_ok
        if len(actual) == 1 and len(best.expected) == 1 and best.pairs:
            name = actual[0]
            pairs = ((name, name),)  # (as _pairs makes it, without a call)
        else:
            pairs = _pairs(cc, best, actual)
    if selection_ok is None and cc.kind is _CALL:
        # a call of any tool was asked for (no call set says which): every tool called is offered
        selection_ok = all(i.known for i in calls)
    return Facts(  # positional: this is on the scorer's hot path
        cc.kind,
        selection_ok,
        structure_ok,
        values_ok,
        cc.reply_judged,
        cc.expected_tools,
        actual,
        pairs,
        checked,
        valid,
        tuple([n for n in actual if n in cc.forbidden]) if cc.forbidden else (),
        unsafe,
    )


def _pairs(
    cc: CompiledCase, best: SetResult, actual: tuple[str, ...]
) -> tuple[tuple[str, str], ...]:
    """(expected, actual) tool labels for the confusion matrix of calls paired as ``best``
    says; '(none)' for no call."""
    n = len(best.pairs)
    if n == len(actual) == len(best.expected) and NO_CALL not in actual:
        if n == 1:
            name = actual[0]
            return ((name, name),)
        # every call paired: nothing to cross (as _set_pairs would find)
        return tuple([(actual[j], actual[j]) for _, j in best.pairs])
    if len(best.expected) == 1 and len(actual) == 1:
        name = actual[0]
        return ((name if best.pairs else best.expected[0].tools[0], name),)
    if not best.expected:
        kind = NO_CALL if cc.kind is not _CALL else ANY_CALL
        return tuple(cross_pairs([(kind, name) for name in actual]))
    return _set_pairs(best, actual, cc.order)


def _set_pairs(
    best: SetResult, actual: tuple[str, ...], order: Order
) -> tuple[tuple[str, str], ...]:
    """The paired calls, then each unpaired expected call against an unpaired call in their
    orders (a wrong tool), then what is left of either against no call, unless the order
    allows it (as ``order_pairs`` would make of them)."""
    # (loops, not comprehensions: each comprehension is a call of its own, and this runs
    # for every failing answer of more than one call)
    pairs = best.pairs
    kept = []
    paired_e = set()
    paired_a = set()
    for i, j in pairs:
        kept.append((actual[j], actual[j]))
        paired_e.add(i)
        paired_a.add(j)
    if len(pairs) == len(best.expected) and NO_CALL not in actual:
        if len(pairs) == len(actual) or order is _SUPERSET:
            return tuple(kept)  # every call paired, or the calls left over allowed
        # every expected call paired: the calls left over, each against no call
        for j, a in enumerate(actual):
            if j not in paired_a:
                kept.append((NO_CALL, a))
        return tuple(kept)
    missing = []
    for i, e in enumerate(best.expected):
        if i not in paired_e:
            missing.append(e.tools[0])
    extra = []
    for j, name in enumerate(actual):
        if j not in paired_a:
            extra.append(name)
    if NO_CALL in actual or NO_CALL in missing:
        # a tool named like the label of no call: as order_pairs reads it
        return tuple(order_pairs(kept, missing, extra, order))
    crossed = min(len(missing), len(extra))
    kept += zip(missing[:crossed], extra[:crossed], strict=True)
    if order is not _SUBSET:  # (what the order allows is not counted)
        kept += [(t, NO_CALL) for t in missing[crossed:]]
    if order is not _SUPERSET:
        kept += [(NO_CALL, a) for a in extra[crossed:]]
    return tuple(kept)


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
    if order is _SUBSET:
        return [p for p in out if p[1] != NO_CALL or p[0] == NO_CALL]
    if order is _SUPERSET:
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
