"""The latency histogram: counted from the values as given, never a sorted copy."""

from __future__ import annotations

import math
from array import array

from hypothesis import given, settings
from hypothesis import strategies as st

from toolproof.stats._latency import Histogram, histogram


def _sorted_histogram(values: list[float], bins: int = 24) -> tuple[float, float, list[int], int]:
    """(lowest, highest, counts, n) as a sorted copy of the values gives them."""
    vals = sorted(v for v in values if v >= 0 and math.isfinite(v))
    lo, hi = vals[0], vals[-1]
    log = lo > 0 and hi / lo > 20

    def tr(v: float) -> float:
        return math.log10(v) if log else v

    a, b = tr(lo), tr(hi)
    span = (b - a) or 1.0
    counts = [0] * bins
    for v in vals:
        counts[min(bins - 1, int((tr(v) - a) / span * bins))] += 1
    return lo, hi, counts, len(vals)


LATENCIES = st.lists(
    st.floats(allow_nan=True, allow_infinity=True, min_value=None, max_value=None)
    | st.sampled_from([0.0, -0.0, 1.0, 100.0, 2500.0]),
    max_size=60,
)


@settings(max_examples=400)
@given(LATENCIES)
def test_the_histogram_is_the_one_a_sorted_copy_gives(values: list[float]) -> None:
    made = histogram(array("d", values))
    if not any(v >= 0 and math.isfinite(v) for v in values):
        assert made is None
        return
    assert isinstance(made, Histogram)
    lo, hi, counts, n = _sorted_histogram(values)
    assert [bar.count for bar in made.bars] == counts and made.n == n
    assert made.ticks == [(0.0, f"{lo:.0f} ms"), (480.0, f"{hi:.0f} ms")]
    assert made == histogram(values)  # a list and an array alike


def test_latencies_near_the_largest_float_give_a_histogram() -> None:
    made = histogram([1.0, 1.7976931348623157e308])
    assert made is not None and made.n == 2
    assert made.bars[-1].label.endswith(": 1") and "inf" not in made.bars[-1].label
    assert made.bars[0].label.startswith("1–")
