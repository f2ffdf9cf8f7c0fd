"""The figures the gate checks, computed from verdicts, and per-case outcomes."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from toolproof.stats import Rate, rate
from toolproof.types import Kind, Verdict

#: Rate metrics the gate knows: name -> (applies to verdict, verdict is ok).
RATE_METRICS: dict[str, tuple[Callable[[Verdict], bool], Callable[[Verdict], bool]]] = {
    "strict_pass": (lambda v: True, lambda v: v.passed),
    "selection": (lambda v: v.kind is Kind.call, lambda v: bool(v.selection_ok)),
    "arguments": (
        lambda v: v.kind is Kind.call and bool(v.selection_ok),
        lambda v: bool(v.values_ok),
    ),
    "schema_adherence": (
        lambda v: v.calls_checked > 0,
        lambda v: v.calls_schema_valid == v.calls_checked,
    ),
    "no_call_accuracy": (lambda v: v.kind is not Kind.call, lambda v: v.decision_ok),
}

LABELS = {
    "strict_pass": "strict pass",
    "selection": "tool selection",
    "arguments": "argument accuracy",
    "schema_adherence": "schema adherence",
    "no_call_accuracy": "no-call accuracy",
    "pass_at_k": "pass@k",
    "pass_hat_k": "pass^k",
    "unsafe_calls": "unsafe calls",
    "failures": "failed cases",
    "forbidden_calls": "forbidden tool calls",
}


def metric_rate(name: str, verdicts: Iterable[Verdict]) -> Rate:
    """A rate metric over attempts. Schema adherence counts calls, as in Summary."""
    vs = list(verdicts)
    if name == "schema_adherence":
        return rate(sum(v.calls_schema_valid for v in vs), sum(v.calls_checked for v in vs))
    applies, ok = RATE_METRICS[name]
    chosen = [v for v in vs if applies(v)]
    return rate(sum(1 for v in chosen if ok(v)), len(chosen))


def unsafe_calls(verdicts: Iterable[Verdict]) -> int:
    return sum(getattr(v, "unsafe_calls", 0) for v in verdicts)


def failed_cases(verdicts: Iterable[Verdict]) -> list[str]:
    """Cases with at least one failed attempt, sorted."""
    return sorted({v.case_id for v in verdicts if not v.passed})


def case_outcomes(name: str, verdicts: Iterable[Verdict]) -> dict[str, bool]:
    """Per case: did every attempt the metric applies to succeed?"""
    applies, ok = RATE_METRICS[name]
    out: dict[str, bool] = {}
    for v in verdicts:
        if applies(v):
            out[v.case_id] = out.get(v.case_id, True) and ok(v)
    return out
