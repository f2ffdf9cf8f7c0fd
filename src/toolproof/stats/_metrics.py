"""The metrics, defined once: the report, the slices and the gate all read this table.

Each metric has a name, a label for people, what it applies to, and the field
of a suite's ``thresholds`` that bounds it (``None``: it is reported, never
gated by a threshold). Rate metrics also say which attempts they are measured
on and which count as a success; one of them counts calls, not attempts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from toolproof.stats._rates import Rate, rate
from toolproof.types import Kind, Verdict

__all__ = [
    "METRICS",
    "RATE_METRICS",
    "RATE_NAMES",
    "Metric",
    "expects_call",
    "label",
    "metric_rate",
]


@dataclass(frozen=True, slots=True)
class Metric:
    name: str
    label: str
    applies_to: str
    """In words: what the metric is measured on."""
    threshold: str | None
    """The field of ``Thresholds`` that bounds it, if any."""
    applies: Callable[[Verdict], bool] | None = None
    """A rate's denominator (None: not a rate)."""
    success: Callable[[Verdict], bool] | None = None
    counts_calls: bool = False
    """A rate over calls (schema adherence), not over attempts."""


def expects_call(v: Verdict) -> bool | None:
    """What an attempt's contract expects: a tool call (True), none (False), or either
    (None). One step: a call exactly when the kind is ``call``. Multi-step: over the
    whole conversation, as its grading found (``MultiStep.expects_call``; see
    docs/metrics-multistep.md)."""
    ms = v.multistep
    return v.kind is Kind.call if ms is None else ms.expects_call


def _expects_call(v: Verdict) -> bool:
    return expects_call(v) is True


def _expects_none(v: Verdict) -> bool:
    return expects_call(v) is False


METRICS: tuple[Metric, ...] = (
    Metric("strict_pass", "strict pass", "every attempt", "strict_pass",
           lambda v: True, lambda v: v.passed),
    Metric("selection", "tool selection", "attempts that expect a call", "selection",
           _expects_call, lambda v: bool(v.selection_ok)),
    Metric("arguments", "argument accuracy", "attempts whose tools were right", "arguments",
           lambda v: _expects_call(v) and bool(v.selection_ok) and v.values_ok is not None,
           lambda v: bool(v.values_ok)),
    Metric("schema_adherence", "schema adherence", "calls to a known tool", "schema_adherence",
           lambda v: v.calls_checked > 0, lambda v: v.calls_schema_valid == v.calls_checked,
           counts_calls=True),
    Metric("no_call_accuracy", "no-call accuracy", "attempts that expect no call",
           "no_call_accuracy", _expects_none, lambda v: v.decision_ok),
    Metric("pass_at_k", "pass@k", "cases, over k attempts", None),
    Metric("pass_hat_k", "pass^k", "cases, over k attempts", None),
    Metric("unsafe_calls", "unsafe calls", "guarded calls made without confirmation",
           "unsafe_calls"),
    Metric("failures", "failed cases", "cases with a failed attempt", "failures"),
    Metric("forbidden_calls", "forbidden tool calls", "calls to a forbidden tool", None),
)  # fmt: skip

_BY_NAME = {m.name: m for m in METRICS}

#: Rate metric -> (the attempts it is measured on, the attempts that count as a success).
RATE_METRICS: dict[str, tuple[Callable[[Verdict], bool], Callable[[Verdict], bool]]] = {
    m.name: (m.applies, m.success)
    for m in METRICS
    if m.applies is not None and m.success is not None
}

#: The rate metrics in report order.
RATE_NAMES = tuple(RATE_METRICS)


def label(name: str) -> str:
    """A metric's label for people (the name itself for an unknown metric)."""
    metric = _BY_NAME.get(name)
    return metric.label if metric is not None else name


def metric_rate(name: str, verdicts: Iterable[Verdict]) -> Rate:
    """A rate metric with its Wilson interval, over attempts (or calls, for some)."""
    vs = list(verdicts)
    metric = _BY_NAME[name]
    if metric.counts_calls:
        return rate(sum(v.calls_schema_valid for v in vs), sum(v.calls_checked for v in vs))
    applies, ok = RATE_METRICS[name]
    chosen = [v for v in vs if applies(v)]
    return rate(sum(1 for v in chosen if ok(v)), len(chosen))
