"""The offline commands, run as a user would, on the bundled example suite."""

import json
from pathlib import Path

import pytest
from tests.cli.cli_support import toolproof

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = ROOT / "examples" / "support"


def test_validate_example_suite() -> None:
    out = toolproof("validate", str(SUPPORT), "--allow-code")
    assert out.returncode == 0, out.stderr
    assert "no problems" in out.stdout


def test_score_example_records_shows_every_dimension(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    out = toolproof(
        "score", str(SUPPORT), str(SUPPORT / "records.jsonl"), "--json", str(report), "--allow-code"
    )
    assert out.returncode == 0, out.stderr
    for label in (
        "strict pass",
        "tool selection",
        "argument accuracy",
        "schema adherence",
        "no-call accuracy",
        "decision precision",
        "tool macro-F1",
        "forbidden tool calls",
        "infrastructure errors",
    ):
        assert label in out.stdout
    data = json.loads(report.read_text())
    assert data["format"] == "toolproof.report/2"
    summary = data["targets"]["recorded:demo-model"]
    every_class = {
        "missed_call",
        "unwanted_call",
        "unknown_tool",
        "wrong_tool",
        "invalid_json",
        "schema_mismatch",
        "wrong_arguments",
        "forbidden_tool",
        "wrong_count",
        "wrong_order",
        "wrong_reply",
    }
    assert set(summary["failure_counts"]) == every_class
    assert summary["infrastructure"] == {"timeout": 1}
    assert summary["attempts"] == summary["scored"] + 1


def test_bad_suite_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text("suite: x\ntools: []\ncases:\n  - id: a\n    promt: hi\n")
    out = toolproof("validate", str(tmp_path))
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        f"error: {tmp_path}/suite.yaml:5:5: cases[0].promt: unknown key 'promt'; did you mean 'prompt'?"
    ]
    assert "Traceback" not in out.stderr


def test_record_for_unknown_case(tmp_path: Path) -> None:
    records = tmp_path / "r.jsonl"
    records.write_text('{"case_id": "no-such-case", "response": {"text": "hi"}}\n')
    out = toolproof("score", str(SUPPORT), str(records))
    assert out.returncode == 2
    assert (
        out.stderr.strip() == f"error: {records}:1: case_id: record for unknown case 'no-such-case'"
    )


@pytest.mark.parametrize("flag", [[], ["--out", "SCHEMA"]])
def test_schema_command(tmp_path: Path, flag: list[str]) -> None:
    args = [a.replace("SCHEMA", str(tmp_path / "s.json")) for a in flag]
    out = toolproof("schema", *args)
    assert out.returncode == 0, out.stderr
    text = out.stdout if not flag else (tmp_path / "s.json").read_text()
    assert json.loads(text)["title"] == "toolproof suite"


def test_score_accepts_a_run_folder_like_gate_and_compare(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    made = toolproof(
        "run",
        str(SUPPORT),
        "--model",
        f"scripted:{SUPPORT / 'script.yaml'}",
        "--out",
        str(run_dir),
        "--allow-code",
        "--quiet",
        "--no-cache",
    )
    assert made.returncode == 0, made.stderr
    by_file = tmp_path / "file.json"
    by_folder = tmp_path / "folder.json"
    first = toolproof(
        "score",
        str(SUPPORT),
        str(run_dir / "records.jsonl"),
        "--json",
        str(by_file),
        "--allow-code",
    )
    second = toolproof(
        "score", str(SUPPORT), str(run_dir), "--json", str(by_folder), "--allow-code"
    )
    assert first.returncode == 0 and second.returncode == 0, second.stderr
    assert "Is a directory" not in second.stderr
    assert json.loads(by_folder.read_text()) == json.loads(by_file.read_text())
