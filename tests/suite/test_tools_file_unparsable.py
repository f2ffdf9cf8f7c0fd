"""A tools file that cannot be parsed (nested too deeply for the parser, or not Python) is a
located error naming the file (exit 2), never a traceback: validate reads its names from
the syntax tree whether or not --allow-code is given, and run compiles it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.suite.test_tools_file_names import _suite, _validate

DEEP = {
    "minus": "x = " + "-" * 100_000 + "1\n\ndef toggle(state, args):\n    return {}\n",
    "plus": "x = " + "+".join(["1"] * 200_000) + "\n\ndef toggle(state, args):\n    return {}\n",
    "syntax": "def toggle(state, args:\n    return 1\n",
}


@pytest.mark.parametrize("kind", sorted(DEEP))
@pytest.mark.parametrize("more", [(), ("--allow-code",)])
def test_a_tools_file_that_cannot_be_parsed_is_a_located_error(
    tmp_path: Path, kind: str, more: tuple[str, ...]
) -> None:
    folder = _suite(tmp_path, [], ["toggle"])
    (folder / "tools.py").write_text(DEEP[kind])
    code, out = _validate(folder, *more)
    assert code == 2, out
    assert "Traceback" not in out
    assert "cannot be parsed" in out and "'tools.py'" in out, out
    assert str(folder / "suite.yaml") in out


def test_run_with_a_deep_tools_file_is_a_located_error(tmp_path: Path) -> None:
    folder = _suite(tmp_path, [], [])
    (folder / "tools.py").write_text(DEEP["minus"])
    (tmp_path / "m.yaml").write_text("default: {text: hi}\n")
    done = subprocess.run(
        [sys.executable, "-m", "toolproof", "run", str(folder), "-m", f"scripted:{tmp_path / 'm.yaml'}",
         "--allow-code", "--no-store", "--no-cache", "-o", str(tmp_path / "r"), "-q"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    assert "Traceback" not in out and "cannot be parsed" in out, out


def test_a_tools_file_too_large_to_read_without_running_is_a_located_error(
    tmp_path: Path,
) -> None:
    """Parsing Python takes a hundred times a file's size in memory and more, so a tools
    file from an untrusted change is parsed only up to MAX_READ_TOOLS_CHARS; with
    --allow-code the file is the user's to run, and it is read whole."""
    from toolproof.suite._load import MAX_READ_TOOLS_CHARS

    folder = _suite(tmp_path, [], ["toggle"])
    # (one long string: over the bound, yet cheap to parse when --allow-code reads it)
    body = "def toggle(state, args):\n    return {}\n\nx = '" + "a" * MAX_READ_TOOLS_CHARS + "'\n"
    (folder / "tools.py").write_text(body)
    code, out = _validate(folder)
    assert code == 2, out
    assert "Traceback" not in out and str(folder / "suite.yaml") in out
    assert f"the tools file 'tools.py' holds {len(body):,} characters" in out, out
    assert "give --allow-code to check it by running it" in out
    code, out = _validate(folder, "--allow-code")
    assert code == 0 and "holds" not in out and "Traceback" not in out, out
