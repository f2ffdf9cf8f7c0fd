"""examples/mcp as the README shows it: a scripted run whose calls really run on the server."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli.cli_support import toolproof

pytest.importorskip("mcp", reason="the mcp extra is not installed")

ROOT = Path(__file__).resolve().parents[2]
COMMAND = ["run", "examples/mcp", "--model", "scripted:examples/mcp/script.yaml"]


def _toolproof(*args: str) -> subprocess.CompletedProcess[str]:
    return toolproof(*args, cwd=ROOT, timeout=300, venv_on_path=True)


def test_the_example_passes_with_allow_code(tmp_path: Path) -> None:
    done = _toolproof(*COMMAND, "--allow-code", "--no-cache", "-o", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr[-2000:]
    records = [
        json.loads(line) for line in (tmp_path / "run" / "records.jsonl").read_text().splitlines()
    ]
    by_case = {r["case_id"]: r for r in records}
    added = by_case["add-then-check"]
    assert [c["tool"] for c in added["mcp_calls"]] == ["add_note", "read_note", "all_notes"]
    assert added["end_state"]["notes"]["gym"] == "Tuesday 7pm"
    missing = [m for m in by_case["missing-note"]["transcript"] if m["role"] == "tool"]
    assert missing[0]["is_error"] and "no note titled 'holiday'" in missing[0]["content"]
    # the fault injected by the mock never reached the server
    assert [c["tool"] for c in by_case["server-down"]["mcp_calls"]] == ["all_notes"]
    assert "all 3 scored attempts passed" in done.stdout
    assert not (ROOT / "examples" / "mcp" / "notes" / "gym.txt").exists()


def test_the_example_is_refused_without_allow_code(tmp_path: Path) -> None:
    done = _toolproof(*COMMAND, "-o", str(tmp_path / "run"))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: examples/mcp/suite.yaml:12:3: environment.mcp: ")
    assert "real MCP server" in line and "--allow-code" in line
    assert not (tmp_path / "run").exists()
