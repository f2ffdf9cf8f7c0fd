"""Rates and their Wilson intervals: the ones scipy's binomtest gives, to the last bit."""

from __future__ import annotations

import random

import pytest
from scipy.stats import binomtest

from tests.subprocess_support import fresh_python
from toolproof.stats import rate
from toolproof.stats._rates import wilson_interval


def _scipy(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def test_the_interval_is_binomtests_to_the_last_bit() -> None:
    rng = random.Random(7)
    counts = [(k, n) for n in range(1, 41) for k in range(n + 1)]
    counts += [(rng.randint(0, n), n) for n in (rng.randint(41, 10**7) for _ in range(300))]
    counts += [(0, 10**9), (10**9, 10**9), (1, 10**9)]
    differ = [(k, n) for k, n in counts if wilson_interval(k, n) != _scipy(k, n)]
    assert differ == []


@pytest.mark.parametrize("confidence", [0.5, 0.8, 0.9, 0.99, 0.999])
def test_other_confidence_levels_too(confidence: float) -> None:
    for k, n in [(0, 5), (1, 5), (3, 7), (7, 7), (123, 4567)]:
        assert wilson_interval(k, n, confidence) == _scipy(k, n, confidence)
        r = rate(k, n, confidence)
        assert (r.low, r.high) == _scipy(k, n, confidence)


def test_bounds_at_the_ends_are_exact() -> None:
    assert wilson_interval(0, 12)[0] == 0.0
    assert wilson_interval(12, 12)[1] == 1.0
    assert rate(0, 0).low is None and rate(0, 0).high is None


def test_a_rate_needs_no_scipy_stats() -> None:
    code = (
        "import sys; from toolproof.stats import rate; r = rate(3, 10); "
        "print(r.low is not None, 'scipy.stats' in sys.modules)"
    )
    out = fresh_python(code)
    assert out.split() == ["True", "False"]


def test_the_known_quantiles_are_scipys() -> None:
    from scipy.special import ndtri

    from toolproof.stats._rates import _KNOWN_QUANTILES

    for confidence, z in _KNOWN_QUANTILES.items():
        assert z == float(ndtri(0.5 + 0.5 * confidence))


def test_a_report_s_statistics_need_no_scipy() -> None:
    """Rates at 95% and pass@k / pass^k import no part of scipy (a run's report loads none)."""
    code = (
        "import sys; from toolproof.stats import rate, pass_at_k, pass_hat_k\n"
        "r = rate(3, 10); a = pass_at_k(5, 2, 3); h = pass_hat_k(5, 2, 3)\n"
        "print(r.low, r.high, a, h, any(m.startswith('scipy') for m in sys.modules))"
    )
    out = fresh_python(code)
    *figures, loaded = out.split()
    assert loaded == "False"
    from toolproof.stats import pass_at_k, pass_hat_k

    assert [float(f) for f in figures] == [*_scipy(3, 10), pass_at_k(5, 2, 3), pass_hat_k(5, 2, 3)]
