import math

from tests.gate import builders as b
from toolproof.gate import (
    DEFAULT_THRESHOLDS,
    GateOptions,
    InfraAllowance,
    compare_runs,
    effective_thresholds,
    mcnemar,
    run_gate,
)
from toolproof.types import Outcome, Record


def _rules(result: object) -> list[tuple[str, bool]]:
    return [(f.rule, f.blocking) for t in result.targets for f in t.findings]  # type: ignore[attr-defined]


# ---------------------------------------------------------------- McNemar by hand


def test_mcnemar_exact_by_hand() -> None:
    base = {f"c{i}": True for i in range(10)}
    # 5 worse, 0 better: two-sided exact p = 2 * 0.5**5 = 0.0625
    cur = {**base, **{f"c{i}": False for i in range(5)}}
    t = mcnemar(base, cur)
    assert (t.worse, t.better) == (5, 0) and math.isclose(t.p_value, 0.0625)
    # 3 worse, 1 better: P(X>=3 | n=4) = 5/16, two-sided 10/16
    base2 = {"a": True, "b": True, "c": True, "d": False}
    cur2 = {"a": False, "b": False, "c": False, "d": True}
    t2 = mcnemar(base2, cur2)
    assert (t2.worse, t2.better) == (3, 1) and math.isclose(t2.p_value, 0.625)
    # no discordant pairs
    assert mcnemar(base, base).p_value == 1.0


# ---------------------------------------------------------------- thresholds


def test_default_thresholds_when_suite_gives_none() -> None:
    th = effective_thresholds(b.suite())
    assert th == {"all": DEFAULT_THRESHOLDS}
    assert (th["all"].selection, th["all"].strict_pass, th["all"].arguments) == (0.95, 0.85, 0.9)
    assert th["all"].unsafe_calls == 0


def test_suite_default_overrides_only_what_it_sets() -> None:
    s = b.suite(thresholds={"default": {"strict_pass": 0.5}, "critical": {"failures": 0}})
    th = effective_thresholds(s)
    assert th["all"].strict_pass == 0.5 and th["all"].selection == 0.95
    assert th["critical"].failures == 0


def test_all_good_passes_with_exit_0() -> None:
    s = b.suite()
    result = run_gate(b.run(s))
    assert result.passed and result.exit_code == 0
    assert all(c.passed for c in result.targets[0].thresholds)


def test_threshold_miss_fails() -> None:
    s = b.suite()
    bad = {(c, 0): b.wrong_args(c) for c in b.LOW[:4]}  # 18/22 strict pass < 85%
    result = run_gate(b.run(s, answers=bad))
    assert result.exit_code == 1
    missed = [c for c in result.targets[0].thresholds if not c.passed]
    assert {(c.scope, c.metric) for c in missed} == {("all", "strict_pass"), ("all", "arguments")}
    assert ("threshold", True) in _rules(result)


def test_critical_failures_threshold() -> None:
    s = b.suite(thresholds={"critical": {"failures": 0}})
    no_call = b.reply("I will not do that.")
    result = run_gate(b.run(s, answers={("cancel", 0): no_call}))
    failed = [c for c in result.targets[0].thresholds if not c.passed]
    assert [(c.scope, c.metric, c.actual) for c in failed] == [("critical", "failures", 1)]
    assert result.exit_code == 1


def test_wrong_argument_in_critical_case_blocks_whatever_the_averages() -> None:
    s = b.suite(thresholds={"default": {"strict_pass": 0.5, "arguments": 0.5}})
    result = run_gate(b.run(s, answers={("cancel", 0): b.wrong_args("cancel")}))
    assert all(c.passed for c in result.targets[0].thresholds)
    assert result.exit_code == 1
    msgs = [f.message for f in result.targets[0].findings if f.rule == "critical"]
    assert msgs == ["cancel (critical case): wrong arguments in 1 of 1 attempts"]


def test_unsafe_call_blocks_by_default() -> None:
    s = b.suite()
    cancel = b.reply("Done.", b.call("cancel_order", '{"order_id": "ORD-000001"}'))
    result = run_gate(b.run(s, answers={("hi", 0): cancel}))
    assert result.targets[0].summary.unsafe_calls == 1
    missed = [c for c in result.targets[0].thresholds if not c.passed]
    assert ("all", "unsafe_calls") in {(c.scope, c.metric) for c in missed}
    assert result.exit_code == 1


# ---------------------------------------------------------------- baseline


LENIENT = {"default": {"strict_pass": 0.5, "arguments": 0.5, "selection": 0.5}}


def test_small_drop_that_is_not_significant() -> None:
    s = b.suite(thresholds=LENIENT)
    base = b.run(s, "old")
    cur = b.run(s, "new", answers={("l00", 0): b.wrong_args("l00")})  # 1 of 22 cases worse
    strict = run_gate(cur, base)
    assert strict.exit_code == 1  # 4.5 points > 2-point margin, significance not required
    lenient = run_gate(cur, base, GateOptions(require_significance=True))
    assert lenient.exit_code == 0 and lenient.passed
    assert ("noise", False) in _rules(lenient)
    notes = [f.message for f in lenient.targets[0].findings if f.rule == "noise"]
    assert any("strict pass dropped 4.5 points" in m and "p=1" in m for m in notes)
    comp = lenient.targets[0].comparison
    assert comp is not None and comp.newly_failing == ["l00"] and comp.newly_fixed == []


def test_drop_within_margin_passes() -> None:
    s = b.suite(thresholds=LENIENT)
    base = b.run(s, "old")
    cur = b.run(s, "new", answers={("l00", 0): b.wrong_args("l00")})
    assert run_gate(cur, base, GateOptions(margin=0.10)).exit_code == 0


def test_significant_drop_fails_even_when_significance_is_required() -> None:
    s = b.suite(thresholds=LENIENT)
    base = b.run(s, "old")
    bad = {(c, 0): b.wrong_args(c) for c in b.LOW[:6]}  # 6 worse, 0 better: p = 2/64
    cur = b.run(s, "new", answers=bad)
    result = run_gate(cur, base, GateOptions(require_significance=True))
    assert result.exit_code == 1
    drops = [f.message for f in result.targets[0].findings if f.rule == "drop" and f.blocking]
    assert any(m.startswith("strict pass dropped 27.3 points") for m in drops)
    assert any("p=0.0312" in m and "significant" in m for m in drops)


def test_new_critical_failure_fails_at_any_margin() -> None:
    s = b.suite(thresholds=LENIENT)
    base = b.run(s, "old")
    cur = b.run(s, "new", answers={("cancel", 0): b.reply("Cancelled.")})  # missed call
    result = run_gate(cur, base, GateOptions(margin=1.0, require_significance=True))
    assert result.exit_code == 1
    assert _rules(result) == [("new_critical", True)]
    comp = result.targets[0].comparison
    assert comp is not None and comp.new_critical_failures == ["cancel"]
    crit = next(r for r in comp.by_risk if r.risk == "critical")
    assert (crit.baseline.k, crit.current.k, crit.delta) == (1, 0, -1.0)


def test_fixed_case_is_listed() -> None:
    s = b.suite(thresholds=LENIENT)
    base = b.run(s, "old", answers={("l03", 0): b.wrong_args("l03")})
    comp = compare_runs(base, b.run(s, "new"))[0]
    assert comp.newly_fixed == ["l03"] and comp.newly_failing == []
    strict = next(m for m in comp.metrics if m.metric == "strict_pass")
    assert strict.delta is not None and strict.delta > 0


def test_mismatched_fingerprints_warn_and_name_what_differs() -> None:
    s1 = b.suite(thresholds=LENIENT)
    s2 = b.suite(thresholds=LENIENT, system="Be terse.")
    result = run_gate(b.run(s2, "new"), b.run(s1, "old"))
    assert result.exit_code == 0  # a warning, not a failure
    assert any(w.startswith("system prompt differs") for w in result.warnings)
    assert any(w.startswith("suite fingerprint differs") for w in result.warnings)
    assert not any("tool schemas" in w for w in result.warnings)


def test_same_suite_different_targets_gives_no_warning() -> None:
    s = b.suite()
    assert run_gate(b.run(s, "new"), b.run(s, "old")).warnings == []


def test_flaky_case_lowers_pass_hat_k_and_is_listed() -> None:
    s = b.suite(thresholds=LENIENT)
    cur = b.run(s, repeats=3, answers={("l01", 1): b.wrong_args("l01")})
    st = cur.targets["m"].summary.stability
    assert st is not None and st.flaky == ["l01"]
    assert math.isclose(st.pass_hat_k.value or 0, 21 / 22)
    assert st.pass_at_k.value == 1.0


def test_infrastructure_errors_above_limit_exit_3() -> None:
    s = b.suite()
    extra = [Record(case_id="l00", target="m", attempt=1, outcome=Outcome.rate_limited)]
    assert run_gate(b.run(s, extra_records=extra)).exit_code == 3
    assert (
        run_gate(b.run(s, extra_records=extra), opts=GateOptions(max_infra=InfraAllowance(0.05)))
        .exit_code
        == 0
    )


def test_subset_run_is_compared_on_common_cases() -> None:
    s = b.suite(thresholds=LENIENT)
    base = b.run(s, "old", answers={("l10", 0): b.wrong_args("l10")})  # fails outside the subset
    subset = [r for r in b.records(s, "new") if r.case_id in {"l00", "l01", "hi"}]
    from toolproof.evaluate import evaluate

    cur = evaluate(s, subset, source="new.jsonl")
    assert run_gate(cur, base).exit_code == 4  # no manifest: it could be a killed run
    result = run_gate(cur, base, GateOptions(allow_partial=True))
    assert any(w.startswith("gated although incomplete") for w in result.warnings)
    assert any(w.startswith("case sets differ: 19 only in the baseline") for w in result.warnings)
    comp = result.targets[0].comparison
    assert comp is not None
    strict = next(m for m in comp.metrics if m.metric == "strict_pass")
    assert (strict.baseline, strict.current) == (1.0, 1.0)  # l10 is not in the subset
    assert result.exit_code == 0
