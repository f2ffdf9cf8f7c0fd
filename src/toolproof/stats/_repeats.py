"""Stability over repeated attempts: pass@k, pass^k, flaky cases, tool changes.

With ``n`` attempts of a case of which ``c`` passed:

* pass@k = 1 - C(n-c, k) / C(n, k), the unbiased chance that at least one of
  k attempts drawn from the n passes (Chen et al., 2021);
* pass^k = C(c, k) / C(n, k), the chance that all k drawn attempts pass
  (the estimator of tau-bench, Yao et al., 2024).

Aggregate values are the mean over cases, with a 95% percentile bootstrap
interval over cases (``scipy.stats.bootstrap``, 2,000 resamples, fixed seed).
Beyond 20,000 cases the resamples are drawn as multinomial counts of the
cases' distinct values instead of case by case: the same bootstrap
distribution, drawn in milliseconds instead of minutes, so the interval
differs from scipy's only by the resampling noise (about 1e-4).
"""

from __future__ import annotations

import functools
import math
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from toolproof.adaptive import pass_at_k_adaptive, pass_hat_k_adaptive
from toolproof.stats._rates import Rate, rate
from toolproof.types import Record, Risk, Verdict


@functools.lru_cache(maxsize=4096)
def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k attempts (of n, c passing) passes."""
    _check(n, c, k)
    # math.comb is exact, as scipy.special.comb(..., exact=True) is (0 when k > n)
    return 1.0 - float(math.comb(n - c, k)) / float(math.comb(n, k))


@functools.lru_cache(maxsize=4096)
def pass_hat_k(n: int, c: int, k: int) -> float:
    """Probability that all k attempts (of n, c passing) pass: pass^k."""
    _check(n, c, k)
    return float(math.comb(c, k)) / float(math.comb(n, k))


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
#: Values drawn per bootstrap batch (about 2 MB of floats: scipy makes several arrays of
#: that size for each batch; the interval is the same whatever the batch).
_BATCH_VALUES = 250_000


def mean_estimate(values: Sequence[float], confidence: float = 0.95) -> Estimate:
    """Mean with a percentile bootstrap interval over the values (fixed seed)."""
    return mean_estimates([values], confidence)[0]


def mean_estimates(rows: Sequence[Sequence[float]], confidence: float = 0.95) -> list[Estimate]:
    """:func:`mean_estimate` of each row; rows of the same length are resampled together.

    Each interval is the same as :func:`mean_estimate` gives the row alone:
    every row's bootstrap starts from the same seed, so rows of one length draw
    the same resamples, and drawing them once serves all.
    """
    out: list[Estimate | None] = [None] * len(rows)
    pending: dict[int, list[int]] = defaultdict(list)
    for i, values in enumerate(rows):
        if not values:
            out[i] = Estimate(value=None)
            continue
        mean = sum(values) / len(values)
        if len(values) < 2 or len(set(values)) == 1:
            out[i] = Estimate(value=mean, low=mean, high=mean, n=len(values))
        else:
            pending[len(values)].append(i)
    for n, which in pending.items():
        import numpy as np

        if n > _EXACT_UP_TO:
            lows, highs = _counted_bootstrap(np.asarray([rows[i] for i in which]), confidence)
            for row, i in enumerate(which):
                values = rows[i]
                out[i] = Estimate(
                    value=sum(values) / n, low=float(lows[row]), high=float(highs[row]), n=n
                )
            continue
        from scipy.stats import bootstrap

        data = np.asarray([rows[i] for i in which], dtype=float)
        res = bootstrap(
            (data,),
            _row_means,
            confidence_level=confidence,
            n_resamples=_RESAMPLES,
            # resamples in batches, so memory stays bounded however many cases and rows
            # there are (the interval is the same as drawing them all at once)
            batch=max(1, min(_RESAMPLES, _BATCH_VALUES // (n * len(which)))),
            method="percentile",
            random_state=np.random.default_rng(0),
            axis=-1,
        )
        low = np.atleast_1d(res.confidence_interval.low)
        high = np.atleast_1d(res.confidence_interval.high)
        for row, i in enumerate(which):
            values = rows[i]
            out[i] = Estimate(
                value=sum(values) / n, low=float(low[row]), high=float(high[row]), n=n
            )
    return [e for e in out if e is not None]


#: Up to this many values, intervals come from scipy's bootstrap itself.
_EXACT_UP_TO = 20_000


def _counted_bootstrap(data: Any, confidence: float) -> tuple[Any, Any]:
    """Percentile bootstrap intervals of the mean of each row (one value per case in each).

    A resample of n cases is n draws with replacement; what its mean depends on
    is how many times each distinct combination of values was drawn, which is
    multinomial. Drawing those counts costs per distinct combination, not per
    case. The rows share their draws, as they do in :func:`mean_estimates`.
    """
    import numpy as np

    n = data.shape[1]
    levels, inverse = np.unique(data.T, axis=0, return_inverse=True)
    freq = np.bincount(inverse.ravel(), minlength=len(levels)) / n
    counts = np.random.default_rng(0).multinomial(n, freq, size=_RESAMPLES)
    means = (counts @ levels) / n  # (resamples, rows)
    alpha = (1 - confidence) / 2
    return (
        np.percentile(means, alpha * 100, axis=0),
        np.percentile(means, (1 - alpha) * 100, axis=0),
    )


def _row_means(x: Any, axis: int = -1) -> Any:
    """np.mean over the last axis, one row at a time: each row's sums are then added
    in the order they are when the row is resampled alone."""
    import numpy as np

    if x.ndim < 3:
        return np.mean(x, axis=axis)
    return np.stack([np.mean(row, axis=axis) for row in x])


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
    call_counts: dict[int, int] = Field(
        description="Attempts by number of tool calls (the same for a million attempts as "
        "for ten)."
    )

    undecided: bool = Field(
        default=False,
        description="An adaptive schedule stopped the case before k attempts with its "
        "pass^k or pass@k still open: left out of those means (its values here are over "
        "its own attempts).",
    )

    @field_validator("call_counts", mode="before")
    @classmethod
    def _counted(cls, value: Any) -> Any:
        # reports before toolproof.report/2 listed the calls of every attempt
        if isinstance(value, list) and all(type(n) is int for n in value):
            return dict(sorted(Counter(value).items()))
        return value

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
    undecided: list[str] = Field(
        default_factory=list,
        description="Adaptive schedules: cases left out of pass^k or pass@k (stopped before "
        "k attempts with the figure open).",
    )


class RepeatCounts:
    """What the stability figures need, added one verdict at a time.

    Per attempt: its case (by order of first appearance), attempt number,
    outcome and number of calls, in compact arrays; per case: its risk, tags
    and the distinct sets of tools it called. No verdict is kept.
    """

    def __init__(self) -> None:
        self._index: dict[str, int] = {}
        self._cases: list[tuple[str, Risk, list[str]]] = []
        self._tool_sets: list[set[tuple[str, ...]]] = []
        self._case: array[int] = array("i")
        self._attempt: array[int] = array("q")
        self._passed: array[int] = array("b")
        self._calls: array[int] = array("i")

    def add(self, v: Verdict) -> None:
        index = self._index.get(v.case_id)
        if index is None:
            index = self._index[v.case_id] = len(self._cases)
            self._cases.append((v.case_id, v.risk, list(v.tags)))
            self._tool_sets.append(set())
        tools = v.actual_tools
        # one tool or none: already its own sorted set
        self._tool_sets[index].add(tuple(tools) if len(tools) < 2 else tuple(sorted(set(tools))))
        self._case.append(index)
        self._attempt.append(v.attempt)
        self._passed.append(1 if v.passed else 0)
        self._calls.append(len(tools))

    def stability(
        self,
        k: int | None = None,
        *,
        adaptive: bool = False,
        repeating: frozenset[str] = frozenset(),
    ) -> Stability | None:
        """Per-case and aggregate stability; None when nothing was added.

        ``adaptive``: the cases ran different numbers of attempts by an adaptive
        schedule; a case with fewer than k has the pass^k and pass@k of
        :func:`toolproof.adaptive.pass_hat_k_adaptive` / ``pass_at_k_adaptive``
        (``repeating``: the cases stopped because their target repeats itself),
        and one whose figure is still open is left out of that mean.
        """
        if not self._cases:
            return None
        import numpy as np

        case = np.frombuffer(self._case, dtype=np.intc)
        attempt = np.frombuffer(self._attempt, dtype=np.int64)
        passed = np.frombuffer(self._passed, dtype=np.int8)
        calls = np.frombuffer(self._calls, dtype=np.intc)
        count = len(self._cases)
        n_of = np.bincount(case, minlength=count)
        c_of = np.bincount(case[passed != 0], minlength=count).astype(np.int64)
        if k is None:
            k = int(n_of.min())
        # attempts by (case, number of calls), in that order
        width = int(calls.max()) + 1
        pairs, times = _distinct_counts(case.astype(np.int64) * width + calls)
        pair_case = (pairs // width).tolist()
        pair_calls = (pairs % width).tolist()
        del pairs
        counted: list[dict[int, int]] = [{} for _ in range(count)]
        for i, n_calls, n in zip(pair_case, pair_calls, times.tolist(), strict=True):
            counted[i][n_calls] = n
        cases = []
        hats: list[float] = []
        ats: list[float] = []
        for i, (case_id, risk, tags) in enumerate(self._cases):
            n, c = int(n_of[i]), int(c_of[i])
            kk = min(k, n)
            hat, at = pass_hat_k(n, c, kk), pass_at_k(n, c, kk)
            open_ = False
            if adaptive and n < k:
                repeats = case_id in repeating
                sure_hat = pass_hat_k_adaptive(n, c, k, repeats=repeats)
                sure_at = pass_at_k_adaptive(n, c, k, repeats=repeats)
                open_ = sure_hat is None or sure_at is None
                hat = hat if sure_hat is None else sure_hat
                at = at if sure_at is None else sure_at
                if sure_hat is not None:
                    hats.append(sure_hat)
                if sure_at is not None:
                    ats.append(sure_at)
            else:
                hats.append(hat)
                ats.append(at)
            cases.append(
                CaseStability(
                    case_id=case_id,
                    risk=risk,
                    tags=tags,
                    attempts=n,
                    passes=c,
                    pass_at_1=c / n,
                    pass_at_k=at,
                    pass_hat_k=hat,
                    flaky=0 < c < n,
                    undecided=open_,
                    tool_sets=[list(t) for t in sorted(self._tool_sets[i])],
                    call_counts=counted[i],
                )
            )
        series = _series(attempt, passed)
        at_1, at_k, hat_k = mean_estimates([[c.pass_at_1 for c in cases], ats, hats])
        values, counts = np.unique(calls, return_counts=True)
        return Stability(
            k=k,
            cases=len(cases),
            pass_at_1=at_1,
            pass_at_k=at_k,
            pass_hat_k=hat_k,
            min_series=min(series.values(), key=lambda r: r.k / r.n) if series else None,
            series=series,
            flaky=sorted(c.case_id for c in cases if c.flaky),
            steady_failures=sorted(c.case_id for c in cases if c.steady_failure),
            tool_change=rate(sum(c.tool_changed for c in cases), len(cases)),
            call_counts={int(v): int(n) for v, n in zip(values, counts, strict=True)},
            per_case=cases,
            undecided=sorted(c.case_id for c in cases if c.undecided),
        )


def stability(verdicts: Iterable[Verdict], k: int | None = None) -> Stability | None:
    """Per-case and aggregate stability; None when there are no verdicts.

    ``k`` defaults to the smallest number of attempts any case has.
    """
    counts = RepeatCounts()
    for v in verdicts:
        counts.add(v)
    return counts.stability(k)


def _series(attempt: Any, passed: Any) -> dict[int, Rate]:
    import numpy as np

    numbers, n = _distinct_counts(attempt)
    k = np.bincount(np.searchsorted(numbers, attempt[passed != 0]), minlength=len(numbers))
    return {int(a): rate(int(kk), int(nn)) for a, kk, nn in zip(numbers, k, n, strict=True)}


def _distinct_counts(values: Any) -> tuple[Any, Any]:
    """``np.unique(values, return_counts=True)`` of non-negative integers, in less memory.

    When the largest value is below about their number (attempt numbers, cases), they
    are counted in place (``np.bincount``) instead of sorted: no sorted copy of a
    million values, and an array of counts no bigger than the values.
    """
    import numpy as np

    top = int(values.max()) + 1 if len(values) else 0
    if top > len(values) + 1024:
        return np.unique(values, return_counts=True)
    counted = np.bincount(values, minlength=top)
    distinct = np.flatnonzero(counted)
    return distinct, counted[distinct]


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
