"""Links, FIFOs, devices and huge files a checkout can plant (issue 24, items 3 and 11).

A pull request can commit symbolic links (git stores them) where toolproof
writes: a run folder, its records or events, the history store. It can make
a store row point at ``/dev/zero`` or a FIFO, and commit a 5 GB file where a
small one is read. Each test sends the attack as a pull request would.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from toolproof.errors import SuiteError, UserError

ROOT = Path(__file__).resolve().parents[2]
SUITE = """suite: s
tools:
  - name: lookup_order
    parameters:
      type: object
      properties: {order_id: {type: string}}
      required: [order_id]
cases:
  - id: c1
    prompt: Where is ORD-1?
    expect: {call: lookup_order, args: {order_id: ORD-1}}
"""
SCRIPT = (
    "default:\n  tool_calls:\n"
    "  - {name: lookup_order, raw_arguments: '{\"order_id\": \"ORD-1\"}'}\n"
)


@contextmanager
def within(seconds: int) -> Iterator[None]:
    """Fail (instead of hanging) when the block takes longer than ``seconds``."""

    def stop(*_: object) -> None:
        raise TimeoutError(f"took longer than {seconds} s: a hang")

    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    work = tmp_path / "checkout"
    work.mkdir()
    (work / "suite.yaml").write_text(SUITE)
    (work / "script.yaml").write_text(SCRIPT)
    return work


def _run(work: Path, out: str = "runs/smoke", store: bool = False) -> subprocess.CompletedProcess[str]:
    env = {**os.environ}
    env.pop("TOOLPROOF_STORE", None)  # the default store, .toolproof/history.db in the checkout
    args = ["run", "suite.yaml", "-m", "scripted:script.yaml", "-q", "--no-cache", "-o", out]
    if not store:
        args.append("--no-store")
    return subprocess.run(
        [sys.executable, "-m", "toolproof", *args],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _tree(path: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_a_run_folder_that_links_outside_is_refused(checkout: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (checkout / "runs").mkdir()
    os.symlink(outside, checkout / "runs" / "smoke")
    proc = _run(checkout)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "symbolic link" in proc.stderr and "Traceback" not in proc.stderr
    assert list(outside.iterdir()) == []  # no manifest, records or summary written there


def test_a_runs_folder_that_links_outside_is_refused(checkout: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, checkout / "runs")
    proc = _run(checkout)
    assert proc.returncode == 2 and "symbolic link" in proc.stderr, proc.stderr
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("name", ["records.jsonl", "events.jsonl", "manifest.json", ".lock"])
def test_a_linked_file_in_the_run_folder_is_never_written_through(
    checkout: Path, tmp_path: Path, name: str
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own file\n")
    (checkout / "runs" / "smoke").mkdir(parents=True)
    os.symlink(victim, checkout / "runs" / "smoke" / name)
    proc = _run(checkout, store=True)
    assert "Traceback" not in proc.stderr
    assert victim.read_text() == "the user's own file\n", proc.stderr
    if name != "manifest.json":  # a manifest is replaced by a rename, not written through
        assert proc.returncode == 2 and "symbolic link" in proc.stderr, proc.stderr


def test_a_linked_history_store_is_not_created_outside(checkout: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (checkout / ".toolproof").mkdir()
    os.symlink(outside / "planted.db", checkout / ".toolproof" / "history.db")
    proc = _run(checkout, store=True)
    assert proc.returncode == 0, proc.stderr  # the run itself stands; the store is not used
    assert "history store was not updated" in proc.stderr and "symbolic link" in proc.stderr
    assert list(outside.iterdir()) == []


def test_a_linked_toolproof_folder_is_not_entered(checkout: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, checkout / ".toolproof")
    proc = _run(checkout, store=True)
    assert "history store was not updated" in proc.stderr, proc.stderr
    assert list(outside.iterdir()) == []


def test_a_store_with_a_trigger_is_not_used(checkout: Path) -> None:
    """A committed store whose trigger runs an endless query on insert: refused, no hang."""
    (checkout / ".toolproof").mkdir()
    db = sqlite3.connect(checkout / ".toolproof" / "history.db")
    db.executescript(
        "CREATE TABLE runs (id INTEGER PRIMARY KEY, x TEXT);"
        "CREATE TRIGGER forever BEFORE INSERT ON runs BEGIN "
        "SELECT count(*) FROM (WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) "
        "SELECT n FROM c); END;"
    )
    db.close()
    proc = _run(checkout, store=True)  # the subprocess timeout is the hang check
    assert proc.returncode == 0, proc.stderr
    assert "it holds a trigger ('forever')" in proc.stderr


def test_a_store_with_a_view_is_refused(tmp_path: Path) -> None:
    from toolproof.store._db import connect

    path = tmp_path / "h.db"
    db = sqlite3.connect(path)
    db.executescript("CREATE TABLE t (x); CREATE VIEW v AS SELECT * FROM t;")
    db.close()
    with pytest.raises(UserError, match="it holds a view"):
        connect(str(path))


# Reads: every file read from a run or the store is a regular file inside its folder, capped.


def _fifo(folder: Path, name: str) -> Path:
    path = folder / name
    os.mkfifo(path)
    return path


def test_a_5_gb_judge_calibration_is_refused_without_reading_it(tmp_path: Path) -> None:
    from toolproof.judges import read_calibration

    big = tmp_path / "judge.calibration"
    with open(big, "wb") as fh:
        fh.truncate(5 * 1024**3)  # sparse: 5 GB as the file system reports it
    with within(10), pytest.raises(SuiteError, match="larger than the limit"):
        read_calibration(big)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "link-out"])
def test_calibration_judgements_and_labels_are_checked_like_suite_files(
    tmp_path: Path, kind: str
) -> None:
    from toolproof.judges import read_calibration, read_labels
    from toolproof.judges._file import read_judgements

    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    run = tmp_path / "run"
    run.mkdir()
    for name in ("judge.calibration", "judgements.jsonl", "labels.jsonl"):
        path = run / name
        if kind == "fifo":
            os.mkfifo(path)
        else:
            os.symlink("/dev/zero" if kind == "dev-zero" else outside, path)
    with within(10):
        with pytest.raises(SuiteError):
            read_calibration(run / "judge.calibration")
        with pytest.raises(SuiteError):
            read_judgements(run / "judgements.jsonl")
        with pytest.raises(SuiteError):
            read_labels(run / "labels.jsonl")


@pytest.mark.parametrize("records_file", ["/dev/zero", "pipe", "../outside/records.jsonl"])
def test_a_store_rows_records_file_outside_or_not_regular_is_not_read(
    tmp_path: Path, records_file: str
) -> None:
    from datetime import UTC, datetime

    from toolproof.store._read import AttemptRow, _records_path, read_raw

    run = tmp_path / "run"
    run.mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "records.jsonl").write_text('{"case_id": "c1", "attempt": 0}\n')
    _fifo(run, "pipe")
    path = _records_path(run, records_file)
    row = AttemptRow(
        target="t", case_id="c1", attempt=0, outcome="ok", scored=True, passed=True,
        failure=None, stage=None, kind="call", risk="low", tags=[], expected_tools=[],
        actual_tools=[], findings=[], latency_ms=None, cost_usd=None, cached=False,
        started_at=datetime.now(UTC), records_path=path, records_line=1, records_offset=0,
    )  # fmt: skip
    with within(10):
        assert read_raw(row) is None


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_records_file_that_is_not_regular_is_one_error(tmp_path: Path, kind: str) -> None:
    from toolproof.records import read_records

    path = tmp_path / "records.jsonl"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        os.symlink("/dev/zero", path)
    with within(10), pytest.raises(SuiteError, match=r"not a regular file|outside its folder"):
        read_records(path)


def test_the_safe_open_module_refuses_what_it_should(tmp_path: Path) -> None:
    from toolproof._shared.safe_io import (
        UnsafePath,
        enter_folder,
        open_read,
        open_write,
        read_inside,
    )

    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "in").mkdir()
    os.symlink(outside, tmp_path / "in" / "linked")
    with pytest.raises(UnsafePath, match="symbolic link"):
        enter_folder(tmp_path / "in" / "linked")
    os.symlink(outside / "f", tmp_path / "in" / "f")
    with pytest.raises(UnsafePath, match="symbolic link"):
        open_write(tmp_path / "in" / "f")
    assert not (outside / "f").exists()
    fifo = _fifo(tmp_path / "in", "p")
    with within(10):
        with pytest.raises(UnsafePath, match="not a regular file"):
            open_write(fifo)
        with pytest.raises(UnsafePath, match="not a regular file"):
            open_read(fifo)
    (outside / "secret").write_text("s")
    os.symlink(outside / "secret", tmp_path / "in" / "s")
    with pytest.raises(UnsafePath, match="outside its folder"):
        read_inside(tmp_path / "in", tmp_path / "in" / "s", 100)
