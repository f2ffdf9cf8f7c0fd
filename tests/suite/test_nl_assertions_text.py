"""An nl_assertion is a statement: an empty one is refused, located, as communicate text is."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SUITE = """suite: s
format: 1
tools:
  - {name: look, description: Look.}
cases:
  - id: c
    prompt: x
    expect: {kind: text}
    FIELD
"""


@pytest.mark.parametrize(
    "field",
    ['nl_assertions: ["The agent is polite.", ""]', 'communicate: [{text: ""}]'],
)
def test_an_empty_statement_is_refused_located(tmp_path: Path, field: str) -> None:
    (tmp_path / "suite.yaml").write_text(SUITE.replace("FIELD", field), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "toolproof", "validate", str(tmp_path)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    assert "suite.yaml:" in out and "at least 1 character" in out, out
    assert "Traceback" not in out
