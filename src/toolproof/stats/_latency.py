"""The latency distribution of attempts, binned for a chart. Pure: no I/O."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from toolproof.types import Record

__all__ = ["Bar", "Histogram", "histogram", "latencies"]


@dataclass(frozen=True)
class Bar:
    """One bar of an inline SVG chart (coordinates in the chart's viewBox)."""

    x: float
    y: float
    width: float
    height: float
    label: str
    count: int


@dataclass(frozen=True)
class Histogram:
    width: int
    height: int
    bars: list[Bar]
    ticks: list[tuple[float, str]]
    n: int


def histogram(values: Sequence[float], *, bins: int = 24, width: int = 480) -> Histogram | None:
    """A histogram of latencies on a log-spaced axis when they span a wide range.

    ``values`` is read twice and never copied (a million latencies stay one array).
    """
    n = 0
    lo = hi = 0.0
    isfinite = math.isfinite
    for v in values:
        if v >= 0 and isfinite(v):
            if not n:
                lo = hi = v
            elif v < lo:  # the first of equal lowest, the last of equal highest: as sorted
                lo = v
            elif v >= hi:
                hi = v
            n += 1
    if not n:
        return None
    log = lo > 0 and hi / lo > 20

    def tr(v: float) -> float:
        return math.log10(v) if log else v

    a, b = tr(lo), tr(hi)
    span = (b - a) or 1.0
    counts = [0] * bins
    for v in values:
        if v >= 0 and isfinite(v):
            counts[min(bins - 1, int((tr(v) - a) / span * bins))] += 1
    height, top = 120, max(counts)
    step = width / bins
    bars = []
    for i, c in enumerate(counts):
        edge_lo, edge_hi = a + span * i / bins, a + span * (i + 1) / bins

        def inv(x: float) -> float:
            if not log:
                return x
            try:  # an edge past the highest value by rounding: the highest value
                return min(float(10**x), hi)
            except OverflowError:  # (10**x beyond the largest float: near 1.8e308)
                return hi

        h = height * c / top if top else 0
        label = f"{inv(edge_lo):.0f}–{inv(edge_hi):.0f} ms: {c}"
        bars.append(Bar(i * step + 1, height - h, max(step - 2, 1), h, label, c))
    ticks = [(0.0, f"{lo:.0f} ms"), (float(width), f"{hi:.0f} ms")]
    return Histogram(width, height, bars, ticks, n)


def latencies(records: Iterable[Record]) -> list[float]:
    out = []
    for r in records:
        lat = (
            r.latency_ms
            if r.latency_ms is not None
            else (r.response.latency_ms if r.response else None)
        )
        if lat is not None:
            out.append(lat)
    return out


