"""Stability over repeated attempts: pass@k, pass^k, flaky cases, tool changes.

With ``n`` attempts of a case of which ``c`` passed:

* pass@k = 1 - C(n-c, k) / C(n, k), the unbiased chance that at least one of
  k attempts drawn from the n passes (Chen et al., 2021);
* pass^k = C(c, k) / C(n, k), the chance that all k drawn attempts pass
  (the estimator of tau-bench, Yao et al., 2024).

Aggregate values are the mean over cases, with a 95% bootstrap interval over
cases (``scipy.stats.bootstrap``).
"""

from __future__ import annotations

import functools
from collections import Counter, defaultdict
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from toolproof.stats._rates import Rate, rate
from toolproof.types import Record, Risk, Verdict


@functools.lru_cache(maxsize=4096)
def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k attempts (of n, c passing) passes."""
    _check(n, c, k)
    from scipy.special import comb

    return 1.0 - float(comb(n - c, k, exact=True)) / float(comb(n, k, exact=True))


@functools.lru_cache(maxsize=4096)
def pass_hat_k(n: int, c: int, k: int) -> float:
    """Probability that all k attempts (of n, c passing) pass: pass^k."""
    _check(n, c, k)
    from scipy.special import comb

    return float(comb(c, k, exact=True)) / float(comb(n, k, exact=True))


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n} c={c} k={k}")


class Estimate(BaseModel):
    """A mean over cases with a 95% bootstrap interval (None when undefined)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = Field(default=0, description="Cases the mean is taken over.")


_RESAMPLES = 2000
#: Values drawn per bootstrap batch (about 16 MB of floats).
_BATCH_VALUES = 2_000_000


def mean_estimate(values: Sequence[float], confidence: float = 0.95) -> Estimate:
    """Mean with a percentile bootstrap interval over the values (fixed seed)."""
    if not values:
        return Estimate(value=None)
    mean = sum(values) / len(values)
    if len(values) < 2 or len(set(values)) == 1:
        return Estimate(value=mean, low=mean, high=mean, n=len(values))
    import numpy as np
    from scipy.stats import bootstrap

    res = bootstrap(
        (np.asarray(values, dtype=float),),
        np.mean,
        confidence_level=confidence,
        n_resamples=_RESAMPLES,
        # resamples in batches, so memory stays bounded however many cases there are
        # (the interval is the same as drawing them all at once)
        batch=max(1, min(_RESAMPLES, _BATCH_VALUES // len(values))),
        method="percentile",
        random_state=np.random.default_rng(0),
    )
    ci = res.confidence_interval
    return Estimate(value=mean, low=float(ci.low), high=float(ci.high), n=len(values))


class CaseStability(BaseModel):
    """How one case behaved over its attempts."""

    model_config = ConfigDict(extra="forbid")

    case_id: str
    risk: Risk
    tags: list[str]
    attempts: int
    passes: int
    pass_at_1: float
    pass_at_k: float
    pass_hat_k: float
    flaky: bool = Field(description="Some attempts passed and some failed.")
    tool_sets: list[list[str]] = Field(description="Distinct sets of tools called, sorted.")
    call_counts: list[int] = Field(description="Tool calls per attempt, in attempt order.")

    @property
    def steady_failure(self) -> bool:
        return self.passes == 0

    @property
    def tool_changed(self) -> bool:
        return len(self.tool_sets) > 1


class Stability(BaseModel):
    """Aggregate stability of a target over repeated attempts."""

    model_config = ConfigDict(extra="forbid")

    k: int = Field(description="The k of pass@k and pass^k.")
    cases: int
    pass_at_1: Estimate
    pass_at_k: Estimate
    pass_hat_k: Estimate
    min_series: Rate | None = Field(
        description="The lowest strict pass rate of any single attempt series (attempt index)."
    )
    series: dict[int, Rate] = Field(description="Strict pass per attempt index.")
    flaky: list[str] = Field(description="Cases with mixed outcomes.")
    steady_failures: list[str] = Field(description="Cases that failed every attempt.")
    tool_change: Rate = Field(description="Cases whose set of called tools changed.")
    call_counts: dict[int, int] = Field(description="Attempts by number of tool calls.")
    per_case: list[CaseStability]


def _case(vs: list[Verdict], k: int) -> CaseStability:
    vs = sorted(vs, key=lambda v: v.attempt)
    n, c = len(vs), sum(v.passed for v in vs)
    kk = min(k, n)
    sets = sorted({tuple(sorted(set(v.actual_tools))) for v in vs})
    return CaseStability(
        case_id=vs[0].case_id,
        risk=vs[0].risk,
        tags=list(vs[0].tags),
        attempts=n,
        passes=c,
        pass_at_1=c / n,
        pass_at_k=pass_at_k(n, c, kk),
        pass_hat_k=pass_hat_k(n, c, kk),
        flaky=0 < c < n,
        tool_sets=[list(s) for s in sets],
        call_counts=[len(v.actual_tools) for v in vs],
    )


def stability(verdicts: Sequence[Verdict], k: int | None = None) -> Stability | None:
    """Per-case and aggregate stability; None when there are no verdicts.

    ``k`` defaults to the smallest number of attempts any case has.
    """
    by_case: dict[str, list[Verdict]] = defaultdict(list)
    for v in verdicts:
        by_case[v.case_id].append(v)
    if not by_case:
        return None
    if k is None:
        k = min(len(vs) for vs in by_case.values())
    cases = [_case(vs, k) for vs in by_case.values()]
    series = _series(verdicts)
    return Stability(
        k=k,
        cases=len(cases),
        pass_at_1=mean_estimate([c.pass_at_1 for c in cases]),
        pass_at_k=mean_estimate([c.pass_at_k for c in cases]),
        pass_hat_k=mean_estimate([c.pass_hat_k for c in cases]),
        min_series=min(series.values(), key=lambda r: r.k / r.n) if series else None,
        series=series,
        flaky=sorted(c.case_id for c in cases if c.flaky),
        steady_failures=sorted(c.case_id for c in cases if c.steady_failure),
        tool_change=rate(sum(c.tool_changed for c in cases), len(cases)),
        call_counts=dict(sorted(Counter(len(v.actual_tools) for v in verdicts).items())),
        per_case=cases,
    )


def _series(verdicts: Sequence[Verdict]) -> dict[int, Rate]:
    groups: dict[int, list[bool]] = defaultdict(list)
    for v in verdicts:
        groups[v.attempt].append(v.passed)
    return {a: rate(sum(g), len(g)) for a, g in sorted(groups.items()) if g}


class Costs(BaseModel):
    """Tokens and cost divided by passing attempts."""

    model_config = ConfigDict(extra="forbid")

    successes: int
    tokens_per_success: float | None
    cost_usd_per_success: float | None


def costs(records: Sequence[Record], successes: int) -> Costs:
    tokens = sum(
        (r.response.usage.input_tokens or 0) + (r.response.usage.output_tokens or 0)
        for r in records
        if r.response is not None and r.response.usage is not None
    )
    priced = [r.cost_usd for r in records if r.cost_usd is not None]
    return Costs(
        successes=successes,
        tokens_per_success=tokens / successes if successes and tokens else None,
        cost_usd_per_success=sum(priced) / successes if successes and priced else None,
    )
