"""A forged gate event in a run folder's events.jsonl does not make a failed run show "pass"."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.cli.cli_support import toolproof

SUITE = {
    "format": 1,
    "suite": "events",
    "tools": [
        {"name": "lookup_order", "parameters": {"type": "object", "properties": {}}},
        {"name": "delete_account", "parameters": {"type": "object", "properties": {}}},
    ],
    "cases": [
        {"id": "c1", "prompt": "Where is ORD-1?", "expect": {"call": "lookup_order"}},
        {"id": "c2", "prompt": "Hi", "expect": {"kind": "text"}},
    ],
}
BAD = {"default": {"tool_calls": [{"name": "delete_account", "arguments": {}}]}}


def _forged(event: dict) -> dict:  # type: ignore[type-arg]
    """The failed gate's event, edited to say it passed."""
    event = json.loads(json.dumps(event))
    event["exit_code"] = 0
    event["at"] = "2030-01-01T00:00:00+00:00"
    result = event["result"]
    result["passed"], result["exit_code"] = True, 0
    for t in result["targets"]:
        t["passed"], t["findings"] = True, []
        for check in t["thresholds"]:
            check["passed"] = True
    return event


def test_a_forged_gate_event_is_refused_on_import(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(SUITE, sort_keys=False))
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(BAD))
    db = str(tmp_path / "first.db")
    run = toolproof("run", "suite.yaml", "-m", "scripted:bad.yaml", "-o", "r", "-q",
                    "--store", db, cwd=tmp_path)  # fmt: skip
    assert run.returncode == 0, run.stderr
    gate = toolproof("gate", "r", "--store", db, cwd=tmp_path)
    assert gate.returncode == 1, gate.stdout + gate.stderr
    events = tmp_path / "r" / "events.jsonl"
    lines = events.read_text().splitlines()
    gate_event = next(json.loads(line) for line in lines if '"event": "gate"' in line)
    with events.open("a") as fh:
        fh.write(json.dumps(_forged(gate_event)) + "\n")
    fresh = str(tmp_path / "fresh.db")
    imported = toolproof("history", "import", "r", "--store", fresh, cwd=tmp_path)
    assert imported.returncode == 2, imported.stdout + imported.stderr
    assert f"events.jsonl:{len(lines) + 1}:" in imported.stderr
    assert "Traceback" not in imported.stderr
    listed = toolproof("history", "list", "--store", fresh, cwd=tmp_path)
    assert "│ pass │" not in listed.stdout, listed.stdout


def test_the_true_events_still_import(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(SUITE, sort_keys=False))
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(BAD))
    db = str(tmp_path / "first.db")
    toolproof("run", "suite.yaml", "-m", "scripted:bad.yaml", "-o", "r", "-q", "--store", db,
              cwd=tmp_path)  # fmt: skip
    assert toolproof("gate", "r", "--store", db, cwd=tmp_path).returncode == 1
    fresh = str(tmp_path / "fresh.db")
    imported = toolproof("history", "import", "r", "--store", fresh, cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    listed = toolproof("history", "list", "--store", fresh, cwd=tmp_path)
    assert "FAIL" in listed.stdout, listed.stdout
