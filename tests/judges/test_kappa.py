"""κ, weighted κ and their intervals against values computed by hand."""

from __future__ import annotations

import pytest

from toolproof.judges import agreement, bootstrap_interval, kappa


def test_cohen_kappa_matches_the_hand_computed_value() -> None:
    # po = 8/10; both raters say 1 six times in ten: pe = .6·.6 + .4·.4 = .52
    human = [1, 1, 0, 0, 1, 0, 1, 1, 0, 1]
    judge = [1, 0, 0, 0, 1, 1, 1, 1, 0, 1]
    assert kappa(human, judge) == pytest.approx((0.8 - 0.52) / (1 - 0.52))


def test_quadratic_kappa_matches_the_hand_computed_value() -> None:
    # disagreement weights (i-j)²: observed 2/4, expected 1.375 → κ = 1 - 0.5/1.375
    assert kappa([0, 1, 2, 2], [0, 2, 2, 1], "quadratic") == pytest.approx(1 - 0.5 / 1.375)


def test_quadratic_kappa_weighs_by_the_values_not_their_rank() -> None:
    # values 0, 1, 3 (2 unseen): observed 10/4 = 2.5, expected 3.125 → κ = 0.2.
    # Weighting by rank (0, 1, 2) would give 0.0 instead.
    assert kappa([0, 1, 3, 3], [1, 1, 3, 0], "quadratic") == pytest.approx(0.2)


def test_kappa_of_words_and_booleans() -> None:
    assert kappa(["a", "b", "a", "b"], ["a", "b", "a", "b"]) == pytest.approx(1.0)
    assert kappa([True, False, True, False], [False, True, False, True]) == pytest.approx(-1.0)
    # constant and equal: perfect agreement (the formula is 0/0)
    assert kappa([True, True], [True, True]) == 1.0


def test_agreement_reports_n_raw_agreement_and_confusion() -> None:
    a = agreement("ok", [True, False, True, True], [True, True, True, False])
    assert a.n == 4
    assert a.agreement == pytest.approx(0.5)
    # po = .5, pe = (1/4·1/4) + (3/4·3/4) = .625 → κ = -1/3
    assert a.kappa == pytest.approx((0.5 - 0.625) / (1 - 0.625))
    assert a.labels == ["false", "true"]
    assert a.confusion == [[0, 1], [1, 2]]  # rows: human; columns: judge


def test_bootstrap_interval_brackets_kappa_and_is_reproducible() -> None:
    human = [1, 1, 0, 0, 1, 0, 1, 1, 0, 1] * 3
    judge = [1, 0, 0, 0, 1, 1, 1, 1, 0, 1] * 3
    low, high = bootstrap_interval(human, judge, resamples=500, seed=3)
    assert low is not None and high is not None
    assert low < kappa(human, judge) < high
    assert (low, high) == bootstrap_interval(human, judge, resamples=500, seed=3)
    narrow = bootstrap_interval(human * 4, judge * 4, resamples=500, seed=3)
    assert narrow[1] - narrow[0] < high - low  # (mypy: both set)


def test_bootstrap_interval_of_perfect_agreement_is_a_point() -> None:
    assert bootstrap_interval([0, 1, 2, 1], [0, 1, 2, 1], "quadratic", resamples=200) == (1.0, 1.0)


def test_empty_agreement_has_no_kappa() -> None:
    a = agreement("x", [], [])
    assert a.n == 0 and a.kappa is None and a.agreement is None


def test_the_resampling_kappa_equals_scikit_learns() -> None:
    import numpy as np
    from sklearn.metrics import cohen_kappa_score

    from toolproof.judges._kappa import _fast_kappa

    rng = np.random.default_rng(7)
    for weights in (None, "linear", "quadratic"):
        for _ in range(50):
            h = rng.integers(0, 4, size=30)
            j = np.clip(h + rng.integers(-1, 2, size=30), 0, 3)
            want = cohen_kappa_score(h, j, labels=[0, 1, 2, 3], weights=weights)
            assert _fast_kappa(h, j, 4, weights) == pytest.approx(want)
