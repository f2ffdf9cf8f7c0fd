"""A tools file that stops Python at import (sys.exit, raise SystemExit, a KeyboardInterrupt
or another BaseException) under --allow-code is a located error (exit 2), never a silent
exit 0 with nothing checked or run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.suite.test_tools_file_names import _suite, _validate

STOPS = {
    "sys_exit_0": "import sys\nsys.exit(0)\ntoggle = 1\n",
    "system_exit": "raise SystemExit(0)\ntoggle = 1\n",
    "keyboard": "raise KeyboardInterrupt\ntoggle = 1\n",
    "base": "class Stop(BaseException):\n    pass\n\nraise Stop('stop')\ntoggle = 1\n",
}


@pytest.mark.parametrize("kind", sorted(STOPS))
def test_validate_names_a_tools_file_that_stops_at_import(tmp_path: Path, kind: str) -> None:
    folder = _suite(tmp_path, [], ["toggle"])
    (folder / "tools.py").write_text(STOPS[kind])
    code, out = _validate(folder, "--allow-code")
    assert code == 2, out
    assert "Traceback" not in out and "ok suite" not in out
    assert "stopped Python at import" in out and "tools.py" in out, out


@pytest.mark.parametrize("kind", ["sys_exit_0", "keyboard"])
def test_run_names_a_tools_file_that_stops_at_import(tmp_path: Path, kind: str) -> None:
    folder = _suite(tmp_path, [], [])
    (folder / "tools.py").write_text(STOPS[kind])
    (tmp_path / "m.yaml").write_text("default: {text: hi}\n")
    done = subprocess.run(
        [sys.executable, "-m", "toolproof", "run", str(folder), "-m", f"scripted:{tmp_path / 'm.yaml'}",
         "--allow-code", "--no-store", "--no-cache", "-o", str(tmp_path / "r"), "-q"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    assert "Traceback" not in out and "stopped Python at import" in out, out
