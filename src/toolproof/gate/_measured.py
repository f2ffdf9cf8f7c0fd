"""The figures the gate checks, computed from verdicts, and per-case outcomes."""

from __future__ import annotations

from collections.abc import Iterable

from toolproof.stats._metrics import METRICS, RATE_METRICS, metric_rate
from toolproof.types import Verdict

__all__ = ["LABELS", "RATE_METRICS", "case_outcomes", "failed_cases", "metric_rate", "unsafe_calls"]

#: metric name -> label, from the one metric table (stats._metrics.METRICS).
LABELS = {m.name: m.label for m in METRICS}


def unsafe_calls(verdicts: Iterable[Verdict]) -> int:
    return sum(v.unsafe_calls for v in verdicts)


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
