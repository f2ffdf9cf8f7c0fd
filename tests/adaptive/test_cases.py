"""The per-case rule of --repeats auto and the estimators for cases of different lengths."""

from __future__ import annotations

import math

import pytest

from toolproof.adaptive import CaseState, Seen, case_state, pass_at_k_adaptive, pass_hat_k_adaptive


def attempts(*outcomes: bool | None, answer: str | None = "same") -> list[Seen]:
    return [Seen(passed=o, answer=answer) for o in outcomes]


def test_every_case_runs_its_min_repeats() -> None:
    assert case_state(attempts(True, False)[:1], 5, 2, repeatable=True) is CaseState.open
    assert case_state(attempts(False), 5, 2, repeatable=False) is CaseState.open


def test_a_pass_and_a_failure_settle_the_case() -> None:
    assert case_state(attempts(True, False), 5, 2, repeatable=False) is CaseState.mixed
    assert case_state(attempts(False, False, True), 5, 2, repeatable=False) is CaseState.mixed


def test_all_passes_or_all_failures_stay_open_on_a_sampling_target() -> None:
    # a later failure would change pass^k, a later pass pass@k
    assert case_state(attempts(True, True, True), 5, 2, repeatable=False) is CaseState.open
    assert case_state(attempts(False, False), 5, 2, repeatable=False) is CaseState.open


def test_a_repeatable_target_that_repeats_its_answer_settles_the_case() -> None:
    assert case_state(attempts(True, True), 5, 2, repeatable=True) is CaseState.repeats
    assert case_state(attempts(False, False), 5, 2, repeatable=True) is CaseState.repeats
    different = [Seen(passed=True, answer="a"), Seen(passed=True, answer="b")]
    assert case_state(different, 5, 2, repeatable=True) is CaseState.open


def test_an_attempt_without_an_answer_is_neither_pass_nor_failure() -> None:
    assert case_state(attempts(True, None), 5, 2, repeatable=False) is CaseState.open
    assert case_state(attempts(None, None), 5, 2, repeatable=True) is CaseState.open
    assert case_state(attempts(True, None, False), 5, 2, repeatable=False) is CaseState.mixed


def test_the_last_planned_attempt_ends_the_case() -> None:
    assert case_state(attempts(True, True, True), 3, 2, repeatable=False) is CaseState.planned


@pytest.mark.parametrize("n", [5, 6, 9])
def test_with_k_attempts_or_more_the_estimators_are_the_unbiased_ones(n: int) -> None:
    for c in range(n + 1):
        hat = pass_hat_k_adaptive(n, c, 5)
        at = pass_at_k_adaptive(n, c, 5)
        assert hat == math.comb(c, 5) / math.comb(n, 5)
        assert at == 1 - math.comb(n - c, 5) / math.comb(n, 5)


def test_fewer_than_k_attempts() -> None:
    # a failure: no k attempts that include it all pass; a pass: some k attempts include it
    assert pass_hat_k_adaptive(2, 1, 5) == 0.0
    assert pass_at_k_adaptive(2, 1, 5) == 1.0
    # all passed: pass^k open unless the case repeats itself; pass@k settled
    assert pass_hat_k_adaptive(2, 2, 5) is None
    assert pass_hat_k_adaptive(2, 2, 5, repeats=True) == 1.0
    assert pass_at_k_adaptive(2, 2, 5) == 1.0
    # all failed: the mirror image
    assert pass_at_k_adaptive(3, 0, 5) is None
    assert pass_at_k_adaptive(3, 0, 5, repeats=True) == 0.0
    assert pass_hat_k_adaptive(3, 0, 5) == 0.0
    with pytest.raises(ValueError):
        pass_hat_k_adaptive(2, 3, 5)
