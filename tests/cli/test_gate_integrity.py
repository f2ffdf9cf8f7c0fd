"""A pull request cannot make the gate pass a model that fails (issue: gate integrity).

Each test sends the attack as a pull request would: files committed in the
checkout (a planted run folder, a script of hostile answers), then the
commands the CI example runs, in a subprocess.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def toolproof(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command line of this checkout, in a minimal environment, as CI runs it."""
    return subprocess.run(
        [sys.executable, "-m", "toolproof", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        env={
            "COLUMNS": "160",
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(ROOT / "src"),
            "TOOLPROOF_STORE": os.environ.get("TOOLPROOF_STORE", "off"),
        },
        check=False,
        timeout=120,
    )

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
