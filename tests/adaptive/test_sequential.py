"""The mixture SPRT of --until-decided: exact tails, decisions, and its error over many looks."""

from __future__ import annotations

import math
import random

import pytest

from toolproof.adaptive import Bound, Seen, anytime_p_value, decide_bound, decide_bounds
from toolproof.adaptive._sequential import _log_binom_tail


@pytest.mark.parametrize(
    ("k", "n", "t"),
    [(5, 20, 0.3), (0, 10, 0.5), (10, 10, 0.5), (540, 601, 0.85), (590, 601, 0.85), (1, 3, 0.9)],
)
def test_binomial_tails_match_scipy(k: int, n: int, t: float) -> None:
    from scipy.stats import binom

    assert _log_binom_tail(k, n, t, upper=False) == pytest.approx(math.log(binom.cdf(k, n, t)))
    assert _log_binom_tail(k, n, t, upper=True) == pytest.approx(math.log(binom.sf(k - 1, n, t)))


def test_clear_rates_are_decided_and_a_rate_on_the_threshold_is_not() -> None:
    bound = Bound("all: strict_pass", "strict_pass", 0.85)
    assert decide_bound(bound, 590, 600, 0.05).decided == "pass"
    assert decide_bound(bound, 400, 600, 0.05).decided == "fail"
    assert decide_bound(bound, 510, 600, 0.05).decided is None
    assert decide_bound(bound, 0, 0, 0.05).decided is None


def test_a_threshold_of_one_is_never_decided_as_passed() -> None:
    p, side = anytime_p_value(10_000, 10_000, 1.0)
    assert (p, side) == (1.0, "pass")
    p, side = anytime_p_value(99, 100, 1.0)
    assert side == "fail" and p < 0.05


def test_thresholds_share_alpha() -> None:
    history = {f"c{i}": [Seen(True, figures={"strict_pass": True})] * 2 for i in range(50)}
    bounds = [Bound("a", "strict_pass", 0.5), Bound("b", "strict_pass", 0.6)]
    decisions = decide_bounds(bounds, history, 2, confidence=0.9)
    assert [d.level for d in decisions] == [pytest.approx(0.95)] * 2
    assert all(d.decided == "pass" for d in decisions)


def test_looking_after_every_round_keeps_the_error_within_alpha() -> None:
    """Cases whose chances average exactly the threshold, looked at after every round:
    the share of runs where any look decides stays within α (it would not with a
    fixed-sample interval recomputed at each look)."""
    rng = random.Random(7)
    alpha, t, runs, rounds = 0.1, 0.8, 400, 8
    chances = [1.0] * 62 + [0.0] * 8 + [0.5] * 20  # mean 0.8 exactly (heterogeneous)
    assert sum(chances) / len(chances) == pytest.approx(t)
    wrong = 0
    for _ in range(runs):
        k = n = 0
        for _ in range(rounds):
            k += sum(rng.random() < p for p in chances)
            n += len(chances)
            if decide_bound(Bound("x", "m", t), k, n, alpha).decided is not None:
                wrong += 1
                break
    assert wrong / runs <= alpha
