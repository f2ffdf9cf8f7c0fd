"""examples/conversations: the scripted-user version runs offline, as in CI, and is graded."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from toolproof.cli import main
from toolproof.records import read_records
from toolproof.suite import load_suite
from toolproof.trust import Trust
from toolproof.types import Outcome

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "conversations"


def toolproof(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["toolproof", *args])
    try:
        main()
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def test_every_task_has_a_scripted_and_an_llm_user_version() -> None:
    suite = load_suite(EXAMPLE / "suite.yaml", Trust(allow_code=True))
    scripted = {c.id for c in suite.cases if "scripted" in c.tags}
    llm = {c.id.removesuffix("-llm") for c in suite.cases if "llm" in c.tags}
    assert 5 <= len(scripted) <= 8
    assert scripted == llm
    for case in suite.cases:
        assert case.user is not None
        assert (case.user.script is not None) == ("scripted" in case.tags)


def test_the_scripted_example_runs_offline_and_is_graded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "run"
    code = toolproof(
        monkeypatch,
        "run",
        "examples/conversations",
        "--tags",
        "scripted",
        "--model",
        "scripted:examples/conversations/agent.yaml",
        "--allow-code",
        "--repeats",
        "2",
        "-q",
        "--no-store",
        "-o",
        str(out),
    )
    printed = capsys.readouterr()
    assert code == 0, printed.err
    records = read_records(out / "records.jsonl")
    assert len(records) == 12 and all(r.outcome is Outcome.ok for r in records)
    stops = {r.case_id: r.stopped_by for r in records}
    assert stops == {
        "cancel-by-id": "user_stop",
        "cancel-by-email": "user_stop",
        "change-dates": "user_stop",
        "new-booking": "user_stop",
        "no-suite-free": "user_stop",
        "refund-transfer": "transfer",
    }
    assert all(r.user_model is None and r.user_turns for r in records)  # scripted: no model
    summary = json.loads((out / "summary.json").read_text())
    (target,) = summary["targets"].values()
    assert target["strict_pass"]["k"] == 10 and target["strict_pass"]["n"] == 12
    failed = {(f["case_id"], f["failure"]) for f in target["failures"]}
    assert failed == {("new-booking", "wrong_end_state")}  # the agent's deliberate mistake
    conv = target["conversations"]
    assert conv["conversations"] == 12 and conv["scored"] == 12 and conv["passed"] == 10
    assert conv["pass_hat_k"] == {"1": pytest.approx(5 / 6), "2": pytest.approx(5 / 6)}
    assert conv["stopped_by"] == {"user_stop": 10, "transfer": 2}
    assert conv["user_errors"]["k"] == 0
    assert conv["user_turns"] == 38 and conv["agent_questions"] == 16
    assert "conversations (simulated user)" in printed.out
    assert "k=1 83.3%, k=2 83.3%" in printed.out


def test_user_model_names_the_llm_users_model_and_resume_takes_it_from_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    agent = tmp_path / "agent.yaml"
    agent.write_text(json.dumps({"default": {"text": "How can I help?"}}))
    user = tmp_path / "user.yaml"  # a user that stops at once: before the agent acts
    user.write_text(json.dumps({"default": {"text": "###STOP###"}}))
    out = tmp_path / "run"
    args = ["run", "examples/conversations", "--tags", "llm", "-m", f"scripted:{agent}"]
    args += ["--user-model", f"scripted:{user}", "--allow-code", "-q", "--no-store"]
    code = toolproof(monkeypatch, *args, "-o", str(out))
    err = capsys.readouterr().err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["user_model"]["spec"] == f"scripted:{user}"
    records = read_records(out / "records.jsonl")
    assert {r.user_model for r in records} == {f"scripted:{user}"}
    # a user that stops before the agent is asked anything leaves nothing of the agent's
    # to grade: the simulator's error in every case, whether or not the task needs a call
    erred = sorted(r.case_id for r in records if r.outcome is Outcome.user_error)
    assert erred == [
        "cancel-by-email-llm",
        "cancel-by-id-llm",
        "change-dates-llm",
        "new-booking-llm",
        "no-suite-free-llm",
        "refund-transfer-llm",
    ]
    assert code == 3 and "6 of them had a simulated user that erred (user_error)" in err
    again = toolproof(monkeypatch, "run", "--resume", str(out), "--user-model", "local:")
    assert again == 2
    assert "--resume takes the user model from the run" in capsys.readouterr().err
