"""Ending the process at once once a command has written everything (cli/_exit.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import toolproof

SRC = str(Path(toolproof.__file__).resolve().parents[1])
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support"

#: A program that leaves through ``leave(3)``. ``Teardown``'s ``__del__`` runs only
#: when the interpreter tears its modules down, so "torn down" says it did.
PROGRAM = """
import atexit, sys, threading
from toolproof.cli._exit import done_writing, leave

class Teardown:
    def __del__(self):
        sys.stderr.write("torn down\\n")

kept = Teardown()
atexit.register(lambda: sys.stderr.write("atexit ran\\n"))
sys.stdout.write("buffered output")  # no newline: still in the buffer
{setup}
leave(3)
sys.stderr.write("leave returned\\n")
"""


def _python(code: str, cwd: Path | None = None, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": SRC, "TOOLPROOF_STORE": "off"}
    return subprocess.run(
        [sys.executable, *(["-c", code] if code else []), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        check=False,
        timeout=120,
    )


def _leave(setup: str) -> subprocess.CompletedProcess[str]:
    return _python(PROGRAM.format(setup=textwrap.dedent(setup)))


def test_leave_ends_at_once_after_flushing_the_output_and_running_the_exit_handlers() -> None:
    done = _leave("done_writing()")
    assert done.returncode == 3
    assert done.stdout == "buffered output"
    assert "atexit ran" in done.stderr
    assert "torn down" not in done.stderr  # no teardown
    assert "leave returned" not in done.stderr


def test_leave_returns_unless_the_command_said_it_was_done_writing() -> None:
    done = _leave("")
    assert done.returncode == 0
    assert "leave returned" in done.stderr
    assert "torn down" in done.stderr  # the usual exit
    assert done.stdout == "buffered output"


def test_leave_returns_under_a_profiler_or_tracer_whose_data_is_written_at_exit() -> None:
    for hook in ("sys.setprofile(lambda *a: None)", "sys.settrace(lambda *a: None)"):
        done = _leave(f"done_writing(); {hook}")
        assert done.returncode == 0, hook
        assert "leave returned" in done.stderr, hook


def test_leave_returns_while_another_non_daemon_thread_runs() -> None:
    done = _leave(
        """
        go = threading.Event()
        worker = threading.Thread(target=go.wait)
        worker.start()
        done_writing()
        atexit.register(go.set)  # the usual exit joins the thread after leave() returned
        threading.Timer(0.2, go.set).start()
        """
    )
    assert "leave returned" in done.stderr
    assert done.returncode == 0


def test_a_run_ends_at_once_with_its_exit_code_and_everything_written(tmp_path: Path) -> None:
    suite = tmp_path / "support"
    shutil.copytree(EXAMPLE, suite)
    out = tmp_path / "run"
    store = tmp_path / "history.db"
    args = [
        "-m",
        "toolproof",
        "run",
        str(suite),
        "--model",
        f"scripted:{suite / 'script.yaml'}",
        "--allow-code",
        "--no-cache",
        "--quiet",
        "--out",
        str(out),
        "--store",
        str(store),
    ]
    done = _python("", tmp_path, *args)
    assert done.returncode in (0, 1), done.stderr
    assert "all 80 scored attempts passed" in done.stdout  # the report, to its last line
    summary = json.loads((out / "summary.json").read_text())
    records = (out / "records.jsonl").read_text().splitlines()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert manifest["counts"]["records"] == len(records)
    assert summary
    import sqlite3

    with sqlite3.connect(store) as db:
        (stored,) = db.execute("SELECT COUNT(*) FROM attempts").fetchone()
        (code,) = db.execute("SELECT exit_code FROM runs").fetchone()
    assert stored == len(records)
    assert code == done.returncode
