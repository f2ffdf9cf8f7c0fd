"""The nl_assertion rubric: a judge checks a case's nl_assertions and its `communicate:
judged` facts; the deterministic verdict leaves them to it (undecided until it answers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.judges.judges_support import FAKE_KEYS, stub_judge, verdict
from tests.run.test_conversation import AGENT_RIGHT, CANCEL_CASE, _run, _scorer, _write
from toolproof.judges import Item, JudgeRunOptions, builtin_rubric, judge_items
from toolproof.judges._prompt import transcript_data
from toolproof.judges._rubrics import case_rubrics
from toolproof.testing import Reply, StubServer
from toolproof.types import BUILTIN_RUBRICS, NL_ASSERTION_RUBRIC, Outcome

CASE = {
    **CANCEL_CASE,
    "communicate": [
        "BK-4417",
        {"text": "the refund arrives within five working days", "match": "judged"},
    ],
    "nl_assertions": ["The assistant does not offer a voucher."],
}


def test_nl_assertion_is_a_builtin_rubric_with_one_bool_field() -> None:
    assert NL_ASSERTION_RUBRIC == "nl_assertion" and "nl_assertion" in BUILTIN_RUBRICS
    rubric = builtin_rubric("nl_assertion")
    assert set(rubric.fields) == {"holds"} and rubric.fields["holds"].type == "bool"
    assert "never an instruction" in rubric.instructions


def test_judged_facts_and_nl_assertions_go_to_the_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in FAKE_KEYS.items():
        monkeypatch.setenv(name, value)
    suite = _write(tmp_path, [CASE])  # validates: 'judged' is no longer refused
    case = suite.cases[0]
    assert case_rubrics(suite, case) == ["nl_assertion"]  # without any judge: setting
    (record,) = _run(suite, tmp_path, {"cancel": AGENT_RIGHT})
    assert record.outcome is Outcome.ok
    # the agent never mentions a refund: the judged fact is left to the judge, and without
    # its answer the attempt is undecided (not counted as passing), as for judged arguments
    graded = _scorer(suite).grade(record)
    assert graded is not None and not graded.passed and graded.failure is None, graded
    assert graded.undecided_statements == 2
    data = transcript_data(suite, case, record)
    assert data["nl_assertions_to_check"] == [
        "The assistant told the user: the refund arrives within five working days",
        "The assistant does not offer a voucher.",
    ]
    with StubServer() as stub:
        stub.add(Reply.say(verdict(holds=False)))
        judge = stub_judge("openai", stub, "nl_assertion")
        (out,) = judge_items(
            suite, [Item(case, record, judge)], JudgeRunOptions(out=tmp_path / "j", cache=False)
        )
        sent = json.dumps(stub.requests[0].body)
    assert out.status == "ok" and out.fields == {"holds": False}
    assert "five working days" in sent and "does not offer a voucher" in sent


def test_a_case_without_judged_statements_opts_into_no_judge(tmp_path: Path) -> None:
    suite = _write(tmp_path, [CANCEL_CASE])
    assert case_rubrics(suite, suite.cases[0]) == []


def test_nl_assertions_leave_the_suite_fingerprint_as_it_was(tmp_path: Path) -> None:
    """They are checked by a judge, never asked of the model: runs stay comparable."""
    plain = _write(tmp_path / "a", [CANCEL_CASE])
    asserted = _write(tmp_path / "b", [{**CANCEL_CASE, "nl_assertions": ["No voucher."]}])
    assert asserted.cases[0].nl_assertions == ["No voucher."]
    assert plain.fingerprint() == asserted.fingerprint()
