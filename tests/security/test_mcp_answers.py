"""Hostile MCP servers: deep JSON and control characters in tool names (issue 24, items 15, 16).

The server is a pull request's code, or a server the user points at; what it
sends is untrusted input.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

SERVER = Path(__file__).parent / "fixtures" / "raw_mcp_server.py"


def _import(tmp_path: Path, depth: int, name: str) -> subprocess.CompletedProcess[str]:
    source = f"mcp:stdio:{sys.executable} {SERVER} {depth} '{name}'"
    return subprocess.run(
        [sys.executable, "-m", "toolproof", "tools", "import", source, "-o", "tools.yaml"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={**os.environ, "COLUMNS": "200"},
    )


def test_json_nested_5000_deep_is_one_line_and_exit_2(tmp_path: Path) -> None:
    proc = _import(tmp_path, 5000, "t")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert "nested too deeply" in proc.stderr
    assert "within 30 s" not in proc.stderr  # refused at once, not after the timeout


NAME = "safe\u202eexe.txt\x1b[31m\u2066\x9b"


def test_control_and_bidi_characters_in_a_tool_name_are_escaped(tmp_path: Path) -> None:
    proc = _import(tmp_path, 0, NAME)
    assert proc.returncode == 0, proc.stderr
    written = (tmp_path / "tools.yaml").read_text(encoding="utf-8")
    for text in (proc.stderr, written):
        for raw in ("\u202e", "\x1b", "\u2066", "\x9b"):
            assert raw not in text, repr(text)
    assert "safe\\u202eexe.txt\\x1b[31m\\u2066\\x9b" in proc.stderr
    comments = [line for line in written.splitlines() if line.lstrip().startswith("#")]
    assert any("safe\\u202eexe.txt" in line for line in comments), written
