"""Records holding hostile model text: score and gate still work, and every output is safe."""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from tests.cli.cli_support import toolproof as run_toolproof

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = ROOT / "examples" / "support"
HOSTILE_TEXT = (
    "\ud800 \x1b[2J\x1b[H\r✓ passed\n✓ passed \u202eevil \ufffe\uffff \x1b]8;;http://x\x07"
)


def toolproof(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_toolproof(*args, cwd=cwd, columns=200, timeout=120)


@pytest.fixture
def hostile_records(tmp_path: Path) -> Path:
    lines = (SUPPORT / "records.jsonl").read_text("utf-8").splitlines()
    first = json.loads(lines[0])
    first["response"]["text"] = HOSTILE_TEXT
    first["response"]["tool_calls"][0]["raw_arguments"] = json.dumps({"order_id": HOSTILE_TEXT})
    lines[0] = json.dumps(first)  # ensure_ascii: "\ud800" is valid JSON text
    path = tmp_path / "records.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def _assert_safe_terminal(text: str) -> None:
    assert "\x1b" not in text and "\r" not in text and "\u202e" not in text
    assert "\\x1b[2J" in text  # shown, escaped
    assert not any(line.lstrip().startswith("✓ passed") for line in text.splitlines())


def test_score_shows_hostile_text_escaped(hostile_records: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    out = toolproof(
        "score",
        "--allow-code",
        str(SUPPORT),
        str(hostile_records),
        "--json",
        str(report),
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    _assert_safe_terminal(out.stdout)
    json.loads(report.read_text("utf-8"), parse_constant=lambda c: pytest.fail(c))


def test_gate_writes_every_report_and_junit_parses(hostile_records: Path, tmp_path: Path) -> None:
    md, junit, js = tmp_path / "g.md", tmp_path / "g.xml", tmp_path / "g.json"
    out = toolproof(
        "gate", str(hostile_records), "--suite", str(SUPPORT), "--failures", "--allow-code",
        "--markdown", str(md), "--junit", str(junit), "--json", str(js),
        "--max-infra-errors", "100%", "--allow-partial",
        cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode in (0, 1), out.stderr
    assert "Traceback" not in out.stderr
    _assert_safe_terminal(out.stdout)
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites"
    failure_text = "".join(f.text or "" for f in root.iter("failure"))
    assert "\\ud800" in failure_text and "\\ufffe" in failure_text
    assert "\\ud800" in md.read_text("utf-8") and "\x1b" not in md.read_text("utf-8")
    json.loads(js.read_text("utf-8"), parse_constant=lambda c: pytest.fail(c))
