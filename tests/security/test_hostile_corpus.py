"""The hostile corpus through the real command line: validate, score, run and gate.

Every input must end with exit 2 and one located error line (file:line:col or
file: field), with no traceback, within a time budget, and without writing
anything outside the run folder. The bombs also run in a subprocess with
capped memory.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.security.corpus import CLI_ENTRIES, RECORD, SCRIPT, SECRET, write_fixtures
from toolproof.cli import app
from toolproof.errors import UserError

BUDGET_S = 10
#: Safe behaviour other than an error: score and gate of a suite whose records
#: need no expected state run no suite code, so they need no --allow-code.
SAFE = {("env-code-refused", "score"), ("env-code-refused", "gate")}
COMMANDS = ("validate", "score", "run", "gate")
runner = CliRunner()


@contextmanager
def budget(seconds: int) -> Iterator[None]:
    def stop(*_: object) -> None:
        raise TimeoutError(f"took longer than {seconds} s")

    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _files(root: Path) -> set[str]:
    return {str(p) for p in root.rglob("*")}


def _invoke(args: list[str]) -> tuple[int, str]:
    """Run the app as `toolproof` does: a UserError is one line and exit 2."""
    res = runner.invoke(app, args)
    if isinstance(res.exception, UserError):
        return 2, f"error: {res.exception}"
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception  # a traceback: the test fails and shows it
    return res.exit_code, res.output


def _args(command: str, suite: Path, work: Path) -> list[str]:
    records = work / "records.jsonl"
    if command == "validate":
        return ["validate", str(suite)]
    if command == "score":
        return ["score", str(suite), str(records)]
    if command == "gate":
        return ["gate", str(records), "--suite", str(suite)]
    return [
        "run",
        str(suite),
        "-m",
        f"scripted:{work / 'script.yaml'}",
        "-q",
        "--no-cache",
        "-o",
        str(work / "run"),
    ]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(("name", "build", "expect"), CLI_ENTRIES, ids=[e[0] for e in CLI_ENTRIES])
def test_hostile_input_is_one_clear_error(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    build: object,
    expect: str,
    command: str,
) -> None:
    outside, suite, work = tmp_path / "outside", tmp_path / "suite", tmp_path / "work"
    write_fixtures(outside)
    suite.mkdir()
    work.mkdir()
    (work / "records.jsonl").write_text(json.dumps(RECORD) + "\n")
    (work / "script.yaml").write_text(SCRIPT)
    build(suite, outside)  # type: ignore[operator]
    monkeypatch.chdir(suite if (suite / "toolproof.yaml").exists() else work)
    before = _files(tmp_path)
    with budget(BUDGET_S):
        code, output = _invoke(_args(command, suite, work))
    assert not (outside / "ran.txt").exists(), "suite code ran without --allow-code"
    written = _files(tmp_path) - before
    assert all(p.startswith(str(work / "run")) for p in written), written
    assert "Traceback" not in output and SECRET not in output
    if (name, command) in SAFE:  # documented: scoring needs no suite code here, none runs
        # the gate also refuses a records file that has no manifest (exit 4, incomplete)
        assert code in ((0, 1) if command == "score" else (0, 1, 4)), output
        return
    lines = [line for line in output.strip().splitlines() if line.startswith("error:")]
    assert code == 2, output
    assert len(lines) >= 1 and "Traceback" not in output
    assert str(suite) in lines[0] and expect in lines[0], lines[0]


BOMBS = ["billion-laughs", "deep-yaml-flow", "deep-jsonl", "recursive-alias"]


@pytest.mark.parametrize("name", BOMBS)
def test_bombs_stay_within_memory_and_time_in_a_subprocess(tmp_path: Path, name: str) -> None:
    build = next(b for n, b, _ in CLI_ENTRIES if n == name)
    outside, suite = tmp_path / "outside", tmp_path / "suite"
    write_fixtures(outside)
    suite.mkdir()
    build(suite, outside)

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # 1 GiB

    proc = subprocess.run(
        [sys.executable, "-m", "toolproof", "validate", str(suite)],
        capture_output=True,
        text=True,
        timeout=30,
        preexec_fn=cap,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr
    assert proc.stderr.startswith(f"error: {suite}")
