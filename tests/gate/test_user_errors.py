"""A conversation whose simulated user erred (user_error) is counted like infrastructure."""

from __future__ import annotations

from tests.gate import builders as b
from toolproof.evaluate import evaluate
from toolproof.gate import EXIT_INFRA, EXIT_OK, GateOptions, InfraAllowance, check_infra, run_gate
from toolproof.types import Outcome, Record

LENIENT = {"all": {"strict_pass": 0.0, "arguments": 0.0, "selection": 0.0}}


def _user_error(case_id: str) -> Record:
    return Record(
        case_id=case_id,
        target="m",
        outcome=Outcome.user_error,
        user_problems=["user turn 1: gave BK-7777, found in neither its scenario nor ..."],
    )


def test_user_errors_are_not_scored_and_use_the_infrastructure_allowance() -> None:
    s = b.suite(thresholds=LENIENT)
    records = [r for r in b.records(s) if r.case_id != "l00"] + [_user_error("l00")]
    ev = evaluate(s, records, source="m.jsonl", manifest=b.manifest(s))
    target = ev.targets["m"]
    assert all(v.case_id != "l00" for v in target.verdicts)  # never the agent's failure
    assert target.summary.infrastructure == {"user_error": 1}
    check = check_infra("m", records, InfraAllowance(0.0))
    assert check.unanswered == 1 and check.user_errors == 1 and check.failed
    assert "1 of them had a simulated user that erred (user_error)" in check.message()
    assert run_gate(ev, opts=GateOptions(max_infra=InfraAllowance(0.0))).exit_code == EXIT_INFRA
    allowed = GateOptions(max_infra=InfraAllowance(0.5))
    assert run_gate(ev, opts=allowed).exit_code == EXIT_OK


def test_a_run_whose_users_all_erred_never_passes() -> None:
    s = b.suite(thresholds=LENIENT)
    ev = evaluate(
        s, [_user_error(c.id) for c in s.cases], source="m.jsonl", manifest=b.manifest(s)
    )
    result = run_gate(ev, opts=GateOptions(max_infra=InfraAllowance(1.0)))
    assert result.exit_code == EXIT_INFRA and not result.passed
