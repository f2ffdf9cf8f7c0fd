"""Which cases changed between two runs: one rule for the gate and the viewer."""

from __future__ import annotations

from toolproof.gate._compare import changed_cases


def test_a_critical_case_that_fails_some_attempts_now_is_a_new_critical_failure() -> None:
    before = {"flaky-now": True, "broke": True, "fixed": False, "still-bad": False}
    after = {"flaky-now": False, "broke": False, "fixed": True, "still-bad": False}
    # every case the current run scored: two it alone has, one of them failing
    now = {**after, "new-failing": False, "new-passing": True}
    critical = {"flaky-now", "still-bad", "new-failing", "new-passing", "fixed"}
    failing, fixed, new_critical = changed_cases(before, after, now, critical)
    assert failing == ["broke", "flaky-now"]
    assert fixed == ["fixed"]
    # failing now and passing (or absent) before; "still-bad" failed before too, and "broke"
    # is not critical
    assert new_critical == ["flaky-now", "new-failing"]
