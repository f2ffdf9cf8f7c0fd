from __future__ import annotations

import functools

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
    """k of n with its Wilson interval (cached: slices repeat the same counts)."""
    if n == 0:
        return Rate(k=0, n=0)
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    return Rate(k=k, n=n, low=float(ci.low), high=float(ci.high))
