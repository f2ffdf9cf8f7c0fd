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
