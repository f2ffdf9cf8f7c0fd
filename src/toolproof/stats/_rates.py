from __future__ import annotations

import functools
import math

from pydantic import BaseModel, ConfigDict


class Rate(BaseModel):
    """k successes out of n, with a 95% Wilson interval (None when n is 0)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    k: int
    n: int
    low: float | None = None
    high: float | None = None

    @property
    def value(self) -> float | None:
        return self.k / self.n if self.n else None


@functools.lru_cache(maxsize=8192)
def rate(k: int, n: int, confidence: float = 0.95) -> Rate:
    """k of n with its Wilson score interval (cached: slices repeat the same counts).

    The interval is the one ``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")``
    gives, to the last bit (a test compares them): the normal quantile is
    ``scipy.special.ndtri``'s (for 0.95, its value, known). binomtest itself also
    computes an exact p-value that is not used here, which costs about half a
    millisecond a call, and importing ``scipy.stats`` costs about half a second of
    start-up to every command that reports.
    """
    if n == 0:
        return Rate(k=0, n=0)
    low, high = wilson_interval(k, n, confidence)
    return Rate(k=k, n=n, low=low, high=high)


#: ``float(scipy.special.ndtri(0.5 + 0.5 * confidence))`` for the confidence every report
#: uses (a test checks it against scipy): a report needs no scipy, whose import costs
#: about 0.13 s of every command that reports.
_KNOWN_QUANTILES = {0.95: 1.959963984540054}


@functools.lru_cache(maxsize=16)
def _quantile(confidence: float) -> float:
    """The two-sided normal quantile of a confidence level (1.959963984540054 for 0.95)."""
    known = _KNOWN_QUANTILES.get(confidence)
    if known is not None:
        return known
    from scipy.special import ndtri

    return float(ndtri(0.5 + 0.5 * confidence))


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of k successes in n trials (Newcombe 1998, method 3);
    exactly 0 below when k is 0 and exactly 1 above when k is n."""
    z = _quantile(confidence)
    z2 = z**2
    p = k / n
    q = 1 - p
    denom = 2 * (n + z2)
    center = (2 * n * p + z2) / denom
    half_width = z / denom * math.sqrt(4 * n * p * q + z2)
    low = 0.0 if k == 0 else center - half_width
    high = 1.0 if k == n else center + half_width
    return low, high
