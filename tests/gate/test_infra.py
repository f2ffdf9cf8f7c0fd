"""The gate never passes what it could not score, and its infrastructure allowance is a share."""

from __future__ import annotations

import pytest

from tests.gate import builders as b
from toolproof.evaluate import evaluate
from toolproof.gate import EXIT_INFRA, EXIT_OK, GateOptions, InfraAllowance, run_gate
from toolproof.types import AttemptError, Outcome, Record

LENIENT = {"all": {"strict_pass": 0.0, "arguments": 0.0, "selection": 0.0}}
EVERYTHING = GateOptions(max_infra=InfraAllowance(1.0))


def _down(case_id: str, attempt: int = 0, outcome: Outcome = Outcome.server_error) -> Record:
    return Record(case_id=case_id, target="m", attempt=attempt, outcome=outcome)


def _run(records: list[Record]):  # type: ignore[no-untyped-def]
    s = b.suite(thresholds=LENIENT)
    return evaluate(s, records, source="m.jsonl", manifest=b.manifest(s))


def test_a_run_with_no_scored_attempt_never_passes() -> None:
    s = b.suite()
    ev = _run([_down(c.id) for c in s.cases])
    result = run_gate(ev, opts=EVERYTHING)
    assert result.exit_code == EXIT_INFRA and not result.passed
    messages = [f.message for f in result.targets[0].findings if f.rule == "unscored"]
    assert messages and "no attempt was scored" in messages[0]


def test_nor_against_a_baseline_where_every_case_passed() -> None:
    s = b.suite()
    base = b.run(s)
    ev = _run([_down(c.id) for c in s.cases])
    assert run_gate(ev, base, EVERYTHING).exit_code == EXIT_INFRA


def test_a_risk_class_and_a_critical_case_with_nothing_scored_block() -> None:
    s = b.suite()
    records = [r for r in b.records(s) if r.case_id != "cancel"] + [_down("cancel")]
    result = run_gate(_run(records), opts=EVERYTHING)
    unscored = [f.message for f in result.targets[0].findings if f.rule == "unscored"]
    assert any(m.startswith("risk class critical") for m in unscored), unscored
    assert any(m.startswith("cancel (critical case)") for m in unscored), unscored
    assert result.exit_code == EXIT_INFRA


def test_harness_errors_fail_whatever_the_allowance() -> None:
    s = b.suite()
    broken = Record(
        case_id="l00",
        target="m",
        attempt=0,
        outcome=Outcome.harness_error,
        error=AttemptError(kind="ValueError", message="boom"),
    )
    records = [r for r in b.records(s) if r.case_id != "l00"] + [broken]
    result = run_gate(_run(records), opts=EVERYTHING)
    assert result.exit_code == EXIT_INFRA
    infra = [f for f in result.targets[0].findings if f.rule == "infrastructure"]
    assert infra and infra[0].blocking and "harness error" in infra[0].message


def test_the_allowance_is_a_share_of_attempts_and_is_named() -> None:
    s = b.suite()
    one = [*b.records(s), _down("l00", attempt=1, outcome=Outcome.rate_limited)]  # 1 of 23
    result = run_gate(_run(one), opts=GateOptions(max_infra=InfraAllowance.parse("5%")))
    assert result.exit_code == EXIT_OK
    infra = [f for f in result.targets[0].findings if f.rule == "infrastructure"]
    assert len(infra) == 1 and not infra[0].blocking
    assert "1 of 23" in infra[0].message and "allowed ≤ 5%" in infra[0].message
    two = [*one, _down("l01", attempt=1, outcome=Outcome.timeout)]  # 2 of 24: over 5%
    assert run_gate(_run(two), opts=GateOptions(max_infra=InfraAllowance(0.05))).exit_code == 3
    assert result.options["max_infra_share"] == 0.05


@pytest.mark.parametrize(
    ("text", "share"), [("0", 0.0), ("5%", 0.05), ("0%", 0.0), ("100%", 1.0), ("2.5 %", 0.025)]
)
def test_the_allowance_reads_percentages(text: str, share: float) -> None:
    assert InfraAllowance.parse(text).share == pytest.approx(share)


@pytest.mark.parametrize(
    ("text", "says"),
    [("3", "bare count"), ("150%", "at most 100%"), ("0.05", "percentage"), ("lots", "percentage")],
)
def test_the_allowance_refuses_counts_and_nonsense(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        InfraAllowance.parse(text)
