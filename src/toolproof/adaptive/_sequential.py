"""``--until-decided``: is every gate threshold settled, however often we look?

The test is a mixture sequential probability ratio test (mixture SPRT) on the
pass rate, one-sided on each side of the threshold (Robbins 1970; as a
confidence sequence: Howard, Ramdas, McAuliffe and Sekhon, "Time-uniform,
nonparametric, nonasymptotic confidence sequences", Annals of Statistics
49(2), 2021; Ramdas, Grünwald, Vovk and Shafer, "Game-theoretic statistics and
safe anytime-valid inference", Statistical Science 38(4), 2023).

The figure the gate reads is a rate over attempts: each attempt the metric
applies to is 1 when it succeeds, 0 when not. θ is the cases' average chance
of success, the quantity the fixed plan estimates. One *full round* (one
attempt of every case in the scope) gives independent Bernoulli outcomes
whose chances average θ. By Hoeffding (1956, "On the distribution of the
number of successes in independent trials", Ann. Math. Stat. 27), their sum is
less spread than a Binomial(n, θ): ``E exp(λS) ≤ (1 - θ + θ e^λ)^n`` for every
λ. So, for a threshold t and any q > t, the likelihood ratio of Bernoulli(q)
against Bernoulli(t) over the attempts of full rounds is a nonnegative
supermartingale whenever θ ≤ t; so is its average over q uniform on (t, 1),

    M_pass = ∫_t^1 q^k (1-q)^(n-k) dq / (1 - t)  /  (t^k (1-t)^(n-k)),

and by Ville's inequality P(M_pass ever reaches 1/α | θ ≤ t) ≤ α. Likewise
M_fail, with q uniform on (0, t), when θ ≥ t. The run may look after every
round and stop at the first look where one of them reaches 2/α: a decision
that is wrong with probability at most α, however many looks were taken (a
fixed-sample interval recomputed at each look would not have that property).
``min(1, 2 / M)`` is the decision's anytime-valid p-value; its complement is
the confidence the report shows.

With several thresholds, each is tested at α / (number of thresholds)
(Bonferroni), so that the chance that *any* decision is wrong stays within α.
The integrals are exact: ``∫_t^1 q^k (1-q)^m dq = B(k+1, m+1) · P(Bin(k+m+1, t) ≤ k)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from toolproof.adaptive._cases import Seen


@dataclass(frozen=True, slots=True)
class Bound:
    """One threshold the gate checks: ``metric`` over the ``cases`` of a scope is ≥ ``required``.

    ``cases`` None: every case. ``key`` names it for people ("all: strict_pass").
    """

    key: str
    metric: str
    required: float
    cases: frozenset[str] | None = None


@dataclass(frozen=True, slots=True)
class BoundDecision:
    """A threshold checked by the mixture SPRT after some full rounds."""

    key: str
    metric: str
    required: float
    successes: int
    n: int
    p_value: float
    """Anytime-valid p-value of the side the rate lies on (1: no evidence)."""
    level: float
    """The confidence the decision is held to: 1 - α / (number of thresholds)."""
    decided: Literal["pass", "fail"] | None

    @property
    def confidence(self) -> float:
        """How sure the decision is: 1 - its anytime-valid p-value."""
        return 1.0 - self.p_value


def _log_binom_tail(k: int, n: int, t: float, upper: bool) -> float:
    """log P(Bin(n, t) ≤ k), or log P(Bin(n, t) ≥ k) with ``upper``, summed in log space
    from the end nearest the mode outwards until the terms no longer count."""
    if not upper and k >= n:
        return 0.0
    if upper and k <= 0:
        return 0.0
    if (not upper and k < 0) or (upper and k > n):
        return -math.inf
    lt, l1t = math.log(t), math.log1p(-t)
    head = math.lgamma(n + 1)

    def term(j: int) -> float:
        return head - math.lgamma(j + 1) - math.lgamma(n - j + 1) + j * lt + (n - j) * l1t

    mode = min(n, max(0, math.floor((n + 1) * t)))
    if upper:
        js = range(max(k, mode), n + 1) if mode > k else range(k, n + 1)
        start = [*range(k, mode)] if mode > k else []
    else:
        js = range(min(k, mode), -1, -1) if mode < k else range(k, -1, -1)
        start = [*range(mode + 1, k + 1)] if mode < k else []
    logs = [term(j) for j in start]
    top = max(logs, default=-math.inf)
    for j in js:
        x = term(j)
        logs.append(x)
        top = max(top, x)
        if x < top - 40:
            break
    return top + math.log(sum(math.exp(x - top) for x in logs))


def _log_beta(a: int, b: int) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def log_mixture(successes: int, n: int, required: float, side: Literal["pass", "fail"]) -> float:
    """log of the one-sided mixture likelihood ratio against ``θ = required``."""
    k, m, t = successes, n - successes, required
    if side == "pass":
        if t >= 1.0:
            return -math.inf
        if t <= 0.0:
            return math.inf
        # ∫_t^1 q^k (1-q)^m dq = B(k+1, m+1) P(Bin(n+1, t) ≤ k)
        area = _log_beta(k + 1, m + 1) + _log_binom_tail(k, n + 1, t, upper=False)
        return area - math.log1p(-t) - k * math.log(t) - m * math.log1p(-t)
    if t <= 0.0:
        return -math.inf
    if t >= 1.0:
        return math.inf if m > 0 else 0.0
    area = _log_beta(k + 1, m + 1) + _log_binom_tail(k + 1, n + 1, t, upper=True)
    return area - math.log(t) - k * math.log(t) - m * math.log1p(-t)


def anytime_p_value(
    successes: int, n: int, required: float
) -> tuple[float, Literal["pass", "fail"]]:
    """The anytime-valid p-value of the side of ``required`` the rate lies on, and that side.

    The side is the point estimate's (≥ required: pass, as the gate decides);
    the p-value is ``min(1, 2 / M)`` of that side's mixture.
    """
    side: Literal["pass", "fail"] = "pass" if n == 0 or successes >= required * n else "fail"
    if n == 0:
        return 1.0, side
    log_m = log_mixture(successes, n, required, side)
    return min(1.0, math.exp(math.log(2.0) - log_m)) if log_m > -math.inf else 1.0, side


def round_counts(
    history: Mapping[str, Sequence[Seen]], metric: str, rounds: int, cases: frozenset[str] | None
) -> tuple[int, int]:
    """Successes and attempts of ``metric`` over the first ``rounds`` attempts of each case."""
    k = n = 0
    for case, seen in history.items():
        if cases is not None and case not in cases:
            continue
        for s in seen[:rounds]:
            ok = s.figures.get(metric)
            if ok is not None:
                n += 1
                k += ok
    return k, n


def decide_bound(bound: Bound, successes: int, n: int, alpha: float) -> BoundDecision:
    """One threshold after ``successes`` of ``n`` over full rounds, at level α."""
    p, side = anytime_p_value(successes, n, bound.required)
    return BoundDecision(
        key=bound.key,
        metric=bound.metric,
        required=bound.required,
        successes=successes,
        n=n,
        p_value=p,
        level=1.0 - alpha,
        decided=side if n and p <= alpha else None,
    )


def decide_bounds(
    bounds: Sequence[Bound],
    history: Mapping[str, Sequence[Seen]],
    rounds: int,
    *,
    confidence: float,
) -> list[BoundDecision]:
    """Every threshold, checked over the first ``rounds`` (full) rounds of ``history``,
    each at α / (number of thresholds)."""
    alpha = (1.0 - confidence) / max(1, len(bounds))
    return [
        decide_bound(b, *round_counts(history, b.metric, rounds, b.cases), alpha) for b in bounds
    ]


def all_decided(decisions: Sequence[BoundDecision]) -> bool:
    """Every threshold settled; one with no attempt to check (n = 0) the gate skips."""
    return all(d.decided is not None or d.n == 0 for d in decisions)
