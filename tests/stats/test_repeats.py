import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.grade.conftest import call, make_suite, reply
from toolproof.evaluate import evaluate
from toolproof.stats import mean_estimate, pass_at_k, pass_hat_k, rate
from toolproof.stats._repeats import CaseStability, mean_estimates
from toolproof.types import Record

# Hand-computed: C(3,2)=3, C(5,2)=10, C(4,5)=0.


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (5, 2, 2, 1 - 3 / 10),  # 1 - C(3,2)/C(5,2)
        (5, 0, 3, 0.0),
        (5, 5, 1, 1.0),
        (5, 1, 1, 0.2),  # pass@1 is c/n
        (3, 2, 3, 1.0),  # C(1,3) = 0
        (10, 3, 5, 1 - 21 / 252),  # C(7,5)=21, C(10,5)=252
    ],
)
def test_pass_at_k_by_hand(n: int, c: int, k: int, expected: float) -> None:
    assert math.isclose(pass_at_k(n, c, k), expected)


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (5, 3, 2, 3 / 10),  # C(3,2)/C(5,2)
        (5, 4, 5, 0.0),  # 4 of 5 passed: all five never pass together
        (4, 4, 4, 1.0),
        (5, 4, 1, 0.8),  # pass^1 is c/n
        (10, 8, 3, 56 / 120),  # C(8,3)=56, C(10,3)=120
    ],
)
def test_pass_hat_k_by_hand(n: int, c: int, k: int, expected: float) -> None:
    assert math.isclose(pass_hat_k(n, c, k), expected)


def test_pass_at_k_and_pass_hat_k_are_scipys_comb_to_the_last_bit() -> None:
    from scipy.special import comb

    for n in range(1, 41):
        for c in range(n + 1):
            for k in range(1, n + 1):
                at = 1.0 - float(comb(n - c, k, exact=True)) / float(comb(n, k, exact=True))
                hat = float(comb(c, k, exact=True)) / float(comb(n, k, exact=True))
                assert (pass_at_k(n, c, k), pass_hat_k(n, c, k)) == (at, hat), (n, c, k)


def test_estimators_refuse_impossible_inputs() -> None:
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_hat_k(3, 1, 4)


def test_wilson_by_hand() -> None:
    # 8/10, z=1.959964: centre (0.8 + z²/20)/(1 + z²/10), half-width
    # z*sqrt(0.8*0.2/10 + z²/400)/(1 + z²/10)  ->  [0.4902, 0.9433]
    z = 1.959963984540054
    denom = 1 + z * z / 10
    centre = (0.8 + z * z / 20) / denom
    half = z * math.sqrt(0.016 + z * z / 400) / denom
    r = rate(8, 10)
    assert r.low is not None and r.high is not None
    assert math.isclose(r.low, centre - half, abs_tol=1e-9)
    assert math.isclose(r.high, centre + half, abs_tol=1e-9)
    assert round(r.low, 4) == 0.4902 and round(r.high, 4) == 0.9433


def test_bootstrap_interval_brackets_the_mean() -> None:
    e = mean_estimate([0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0])
    assert e.value == 5 / 8
    assert e.low is not None and e.high is not None
    assert 0 <= e.low < e.value < e.high <= 1
    same = mean_estimate([1.0, 1.0])
    assert (same.low, same.high) == (1.0, 1.0)


SUITE = make_suite(
    [
        {
            "id": "a",
            "prompt": "p",
            "expect": {"call": "lookup_order", "args": {"order_id": "ORD-000001"}},
        },
        {"id": "b", "prompt": "p", "expect": {"call": "search_orders", "args": {"customer": "x"}}},
        {
            "id": "c",
            "prompt": "p",
            "expect": {"call": "lookup_order", "args": {"order_id": "ORD-000003"}},
        },
    ]
)
A = reply(None, call("lookup_order", '{"order_id": "ORD-000001"}'))
B_OK = reply(None, call("search_orders", '{"customer": "x"}'))
B_WRONG_TOOL = reply(None, call("lookup_order", '{"order_id": "ORD-000002"}'))
C_BAD = reply(None, call("lookup_order", '{"order_id": "ORD-000009"}'))


def _records() -> list[Record]:
    answers = {
        "a": [A, A, A],  # 3/3
        "b": [B_WRONG_TOOL, B_OK, B_OK],  # 2/3: flaky, and the tool set changes
        "c": [C_BAD, C_BAD, C_BAD],  # 0/3: steady failure
    }
    return [
        Record(case_id=cid, target="m", attempt=i, response=r)
        for cid, rs in answers.items()
        for i, r in enumerate(rs)
    ]


def test_stability_by_hand() -> None:
    st = evaluate(SUITE, _records()).summaries["m"].stability
    assert st is not None
    assert st.k == 3 and st.cases == 3
    assert math.isclose(st.pass_at_1.value or 0, (1 + 2 / 3 + 0) / 3)
    assert math.isclose(st.pass_at_k.value or 0, 2 / 3)  # a and b pass at least once
    assert math.isclose(st.pass_hat_k.value or 0, 1 / 3)  # only a passes all three
    assert st.flaky == ["b"]
    assert st.steady_failures == ["c"]
    assert (st.tool_change.k, st.tool_change.n) == (1, 3)
    assert st.min_series is not None and (st.min_series.k, st.min_series.n) == (1, 3)
    assert {a: (r.k, r.n) for a, r in st.series.items()} == {0: (1, 3), 1: (2, 3), 2: (2, 3)}
    assert st.call_counts == {1: 9}
    b = next(c for c in st.per_case if c.case_id == "b")
    assert b.tool_sets == [["lookup_order"], ["search_orders"]]
    assert (b.passes, b.attempts, b.pass_hat_k, b.pass_at_k) == (2, 3, 0.0, 1.0)


def test_per_case_call_counts_count_attempts_by_calls() -> None:
    two = reply(None, call("lookup_order", '{"order_id": "ORD-000001"}'), call("lookup_order", "{}"))
    answers = [A, reply("no call"), two, A, reply("still none"), A]
    records = [
        Record(case_id="a", target="m", attempt=i, response=r) for i, r in enumerate(answers)
    ]
    st = evaluate(SUITE, records).summaries["m"].stability
    assert st is not None
    (a,) = st.per_case
    assert a.call_counts == {0: 2, 1: 3, 2: 1}
    assert list(a.call_counts) == [0, 1, 2]
    assert st.call_counts == {0: 2, 1: 3, 2: 1}


def test_per_case_call_counts_of_an_older_report_are_counted() -> None:
    # toolproof.report/1 listed the calls of every attempt
    old = {
        "case_id": "a", "risk": "low", "tags": [], "attempts": 4, "passes": 1, "pass_at_1": 0.25,
        "pass_at_k": 0.25, "pass_hat_k": 0.25, "flaky": True, "tool_sets": [],
        "call_counts": [2, 0, 2, 1],
    }  # fmt: skip
    assert CaseStability.model_validate(old).call_counts == {0: 1, 1: 1, 2: 2}


def test_k_can_be_chosen() -> None:
    from toolproof.grade import Scorer
    from toolproof.stats import summarize

    recs = _records()
    verdicts = [v for v in (Scorer(SUITE).grade(r) for r in recs) if v is not None]
    st = summarize(SUITE, recs, verdicts, k=1).stability
    assert st is not None and st.k == 1
    # with k=1 both estimators are pass@1
    assert math.isclose(st.pass_hat_k.value or 0, st.pass_at_1.value or 0)


def test_tokens_and_cost_per_success() -> None:
    from toolproof.types import Usage

    recs = _records()
    recs = [
        r.model_copy(
            update={
                "cost_usd": 0.01,
                "response": r.response.model_copy(  # type: ignore[union-attr]
                    update={"usage": Usage(input_tokens=10, output_tokens=5)}
                ),
            }
        )
        for r in recs
    ]
    c = evaluate(SUITE, recs).summaries["m"].per_success
    assert c is not None and c.successes == 5
    assert c.tokens_per_success == 9 * 15 / 5
    assert c.cost_usd_per_success is not None and math.isclose(c.cost_usd_per_success, 0.09 / 5)


def test_estimates_drawn_together_equal_each_drawn_alone() -> None:
    import random

    import numpy as np
    from scipy.stats import bootstrap

    from toolproof.stats._repeats import mean_estimates

    rng = random.Random(3)
    for n in (2, 9, 1000, 2500):
        rows = [[rng.randrange(11) / 10 for _ in range(n)] for _ in range(3)]
        for values, got in zip(rows, mean_estimates(rows), strict=True):
            alone = bootstrap(
                (np.asarray(values),),
                np.mean,
                n_resamples=2000,
                batch=max(1, min(2000, 2_000_000 // n)),
                method="percentile",
                random_state=np.random.default_rng(0),
            ).confidence_interval
            assert (got.low, got.high) == (float(alone.low), float(alone.high))
            assert got == mean_estimate(values)


def test_many_cases_draw_counts_and_land_within_resampling_noise_of_scipy() -> None:
    import random

    from toolproof.stats import _repeats

    rng = random.Random(5)
    n = _repeats._EXACT_UP_TO + 1
    rows = [[rng.randrange(11) / 10 for _ in range(n)] for _ in range(2)]
    counted = mean_estimates(rows)
    exact_up_to, _repeats._EXACT_UP_TO = _repeats._EXACT_UP_TO, 10**9
    try:
        exact = mean_estimates(rows)
    finally:
        _repeats._EXACT_UP_TO = exact_up_to
    for got, want in zip(counted, exact, strict=True):
        assert got.value == want.value and got.n == want.n == n
        assert got.low != want.low  # drawn another way
        assert abs(got.low - want.low) < 1e-3 and abs(got.high - want.high) < 1e-3
        assert got.low < got.value < got.high


@settings(max_examples=200)
@given(st.lists(st.integers(min_value=0, max_value=3000), min_size=1, max_size=300))
def test_distinct_counts_are_numpy_s_unique_counts(values: list[int]) -> None:
    import numpy as np

    from toolproof.stats._repeats import _distinct_counts

    array = np.asarray(values, dtype=np.int64)
    distinct, counts = _distinct_counts(array)
    want_distinct, want_counts = np.unique(array, return_counts=True)
    assert distinct.tolist() == want_distinct.tolist()
    assert counts.tolist() == want_counts.tolist()
