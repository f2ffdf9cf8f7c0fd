"""A pull request cannot make the gate pass a model that fails (issue: gate integrity).

Each test sends the attack as a pull request would: files committed in the
checkout (a planted run folder, a script of hostile answers), then the
commands the CI example runs, in a subprocess.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from tests.cli.cli_support import toolproof

SUITE = {
    "format": 1,
    "suite": "attack",
    "tools": [
        {
            "name": "lookup_order",
            "description": "Get one order by its ID.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
        },
        {
            "name": "delete_account",
            "description": "Delete the account.",
            "parameters": {"type": "object", "properties": {}},
        },
    ],
    "cases": [
        {
            "id": "lookup",
            "prompt": "Where is my order ORD-104821?",
            "expect": {
                "call": "lookup_order",
                "args": {"order_id": "ORD-104821"},
                "forbidden": ["delete_account"],
            },
            "risk": "critical",
        },
        {
            "id": "greeting",
            "prompt": "Hi there!",
            "expect": {"kind": "text", "forbidden": ["delete_account"]},
        },
    ],
}
GOOD = {
    "cases": {
        "lookup": {
            "tool_calls": [{"name": "lookup_order", "raw_arguments": '{"order_id": "ORD-104821"}'}]
        },
        "greeting": {"text": "Hello!"},
    }
}
#: A model that always calls the forbidden tool.
BAD = {"default": {"tool_calls": [{"name": "delete_account", "raw_arguments": "{}"}]}}
DOWN = {"default": {"error": "server_error", "message": "simulated outage"}}


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A pull request's checkout: the suite and the scripts."""
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(SUITE, sort_keys=False))
    for name, script in (("good", GOOD), ("bad", BAD), ("down", DOWN)):
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(script))
    return tmp_path


def _run(checkout: Path, script: str, out: str, *more: str) -> tuple[int, str]:
    done = toolproof(
        "run", "suite.yaml", "-m", f"scripted:{script}.yaml", "-n", "3", "-o", out,
        "--quiet", "--no-store", *more, cwd=checkout,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr


def _planted_records(checkout: Path, target: str) -> str:
    """The records of a passing run, relabelled as the failing target's."""
    code, text = _run(checkout, "good", "passing")
    assert code == 0, text
    lines = (checkout / "passing" / "records.jsonl").read_text().splitlines()
    out = []
    for line in lines:
        data = json.loads(line)
        data["target"] = target
        data["run_id"] = "smoke"
        out.append(json.dumps(data))
    shutil.rmtree(checkout / "passing")
    return "\n".join(out) + "\n"


def test_a_planted_records_file_is_refused_by_a_new_run(checkout: Path) -> None:
    smoke = checkout / "runs" / "smoke"
    smoke.mkdir(parents=True)
    (smoke / "records.jsonl").write_text(_planted_records(checkout, "scripted:bad.yaml"))
    code, text = _run(checkout, "bad", "runs/smoke")
    assert code == 2, text
    assert "records.jsonl" in text and "Traceback" not in text
    assert not (smoke / "manifest.json").exists()
    # and the gate has nothing it could pass: a folder without a manifest is no run
    gate = toolproof("gate", "runs/smoke", "--no-store", cwd=checkout)
    assert gate.returncode == 2, gate.stdout + gate.stderr
    assert "manifest" in gate.stderr


def test_any_file_in_the_output_folder_is_refused(checkout: Path) -> None:
    out = checkout / "out"
    out.mkdir()
    (out / "notes.txt").write_text("hello")
    code, text = _run(checkout, "good", "out")
    assert code == 2
    assert "notes.txt" in text


def test_an_empty_or_new_output_folder_is_fine(checkout: Path) -> None:
    (checkout / "empty").mkdir()
    assert _run(checkout, "good", "empty")[0] == 0
    assert _run(checkout, "good", "new/deeper")[0] == 0


def test_the_failing_model_fails_the_gate_without_the_plant(checkout: Path) -> None:
    code, text = _run(checkout, "bad", "runs/smoke")
    assert code == 0, text
    gate = toolproof("gate", "runs/smoke", "--no-store", cwd=checkout)
    assert gate.returncode == 1, gate.stdout + gate.stderr


def test_resume_refuses_records_of_another_run(checkout: Path) -> None:
    """A manifest of a real (stopped) run, with a records file from elsewhere planted beside
    it: resume refuses the records, naming the line."""
    code, text = _run(checkout, "bad", "runs/smoke")
    assert code == 0, text
    folder = checkout / "runs" / "smoke"
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["status"] = "interrupted"
    (folder / "manifest.json").write_text(json.dumps(manifest))
    planted = _planted_records(checkout, "scripted:bad.yaml").replace(
        '"run_id": "smoke"', '"run_id": "elsewhere"'
    )
    (folder / "records.jsonl").write_text(planted)
    done = toolproof("run", "--resume", "runs/smoke", "--quiet", "--no-store", cwd=checkout)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "records.jsonl:1" in done.stderr and "run_id" in done.stderr


def test_a_run_where_nothing_was_answered_fails_run_and_gate(checkout: Path) -> None:
    """Every answer an outage: with the old allowance (3) the gate said PASSED; now nothing
    scored never passes, whatever share is allowed."""
    code, text = _run(checkout, "down", "runs/down", "--max-retries", "0", "--max-infra-errors", "100%")
    assert code == 3, text
    assert "no attempt got a model answer" in text
    gate = toolproof("gate", "runs/down", "--no-store", "--max-infra-errors", "100%", cwd=checkout)
    assert gate.returncode == 3, gate.stdout + gate.stderr
    assert "no attempt was scored" in gate.stderr
    assert "gate PASSED" not in gate.stdout


def test_the_old_count_is_refused_with_the_way_to_say_it(checkout: Path) -> None:
    code, text = _run(checkout, "good", "runs/count", "--max-infra-errors", "3")
    assert code == 2 and "Traceback" not in text
    assert "share" in text and "5%" in text


def test_a_5000_digit_integer_in_the_arguments_is_the_model_failing(checkout: Path) -> None:
    big = "9" * 5000
    script = {"default": {"tool_calls": [{"name": "lookup_order", "raw_arguments": f'{{"order_id": {big}}}'}]}}
    (checkout / "big.yaml").write_text(yaml.safe_dump(script))
    code, text = _run(checkout, "big", "runs/big")
    assert code == 0, text  # answered: the model's own (invalid) output, not an infrastructure error
    assert "Traceback" not in text
    lines = (checkout / "runs" / "big" / "records.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert {r["outcome"] for r in records} == {"ok"}
    call = records[0]["response"]["tool_calls"][0]
    assert call["raw_arguments"].endswith(big + "}")  # kept as sent
    assert "4,300 digits" in call["parse_error"]
    scored = toolproof("score", "suite.yaml", "runs/big", "--json", "s.json", cwd=checkout)
    assert scored.returncode == 0, scored.stderr
    report = json.loads((checkout / "s.json").read_text())
    counts = report["targets"]["scripted:big.yaml"]["failure_counts"]
    assert counts.get("invalid_json") == 3, counts  # the lookup case, all 3 attempts
    gate = toolproof("gate", "runs/big", "--no-store", cwd=checkout)
    assert gate.returncode == 1, gate.stdout + gate.stderr


def test_a_later_record_cannot_replace_a_failing_answer(checkout: Path) -> None:
    """The pull request appends a passing record of each attempt to a failing run's records."""
    code, text = _run(checkout, "bad", "runs/smoke")
    assert code == 0, text
    records = checkout / "runs" / "smoke" / "records.jsonl"
    failing = records.read_text()
    with records.open("a") as fh:
        fh.write(_planted_records(checkout, "scripted:bad.yaml").replace('"smoke"', '"runs"'))
    gate = toolproof("gate", "runs/smoke", "--no-store", cwd=checkout)
    assert gate.returncode == 2, gate.stdout + gate.stderr
    assert "records.jsonl:1:" in gate.stderr and "model's answer" in gate.stderr
    # a retried infrastructure failure may still be replaced: that is what --retry-failed does
    records.write_text(failing)
    assert toolproof("gate", "runs/smoke", "--no-store", cwd=checkout).returncode == 1
