"""The rate metrics, defined once: the report, the slices and the gate all use these."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from toolproof.stats._rates import Rate, rate
from toolproof.types import Kind, Verdict

#: Rate metric -> (the attempts it is measured on, the attempts that count as a success).
#: Schema adherence is the exception: it counts calls, not attempts (see metric_rate).
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

#: The rate metrics in report order.
RATE_NAMES = tuple(RATE_METRICS)


def metric_rate(name: str, verdicts: Iterable[Verdict]) -> Rate:
    """A rate metric over attempts, with its Wilson interval. Schema adherence counts calls."""
    vs = list(verdicts)
    if name == "schema_adherence":
        return rate(sum(v.calls_schema_valid for v in vs), sum(v.calls_checked for v in vs))
    applies, ok = RATE_METRICS[name]
    chosen = [v for v in vs if applies(v)]
    return rate(sum(1 for v in chosen if ok(v)), len(chosen))
