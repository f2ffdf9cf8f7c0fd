"""Kill a real run with SIGKILL, resume it, and compare with an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from toolproof.records import read_records
from toolproof.types import Record

from . import agents

REPO = Path(__file__).resolve().parents[2]
AGENT = f"{agents.__name__}:echo_slow"


def _default_sigint() -> None:
    # A shell starts background jobs with SIGINT ignored, and Python keeps an ignored
    # SIGINT ignored; a user's terminal does not. Give the child a terminal's default.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def toolproof(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "toolproof", "run", *args],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=_default_sigint,
    )


def by_triple(records: list[Record]) -> dict[tuple[str, str | None, int], Record]:
    return {(r.case_id, r.target, r.attempt): r for r in records}


def wait_for_lines(path: Path, count: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= count:
            return
        time.sleep(0.01)
    raise AssertionError(f"{path} never reached {count} lines")


def test_kill_then_resume_loses_nothing_and_repeats_nothing(
    suite_path: Path, tmp_path: Path
) -> None:
    common = [str(suite_path), "--target", AGENT, "--repeats", "5", "-q", "--no-cache"]
    whole = toolproof(*common, "--out", str(tmp_path / "whole"))
    assert whole.wait(120) == 0, whole.stderr.read() if whole.stderr else ""

    killed_dir = tmp_path / "killed"
    victim = toolproof(*common, "--out", str(killed_dir))
    wait_for_lines(killed_dir / "records.jsonl", 8)
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait(30)
    before = read_records(killed_dir / "records.jsonl")
    assert 8 <= len(before) < 30  # really stopped midway

    resumed = toolproof("--resume", str(killed_dir), "-q")
    assert resumed.wait(120) == 0, resumed.stderr.read() if resumed.stderr else ""

    final = read_records(killed_dir / "records.jsonl")
    reference = by_triple(read_records(tmp_path / "whole" / "records.jsonl"))
    got = by_triple(final)
    assert len(final) == len(got)  # no triple twice
    assert set(got) == set(reference)  # none lost
    for key, rec in got.items():  # the same answers (latency aside)
        assert rec.response is not None and reference[key].response is not None
        assert rec.response.tool_calls == reference[key].response.tool_calls
    for old in before:  # the records written before the kill are kept as they were
        assert got[(old.case_id, old.target, old.attempt)] == old


def test_ctrl_c_stops_cleanly_and_says_how_to_resume(suite_path: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    # 1,200 attempts of at least 20 ms each: the run cannot finish before the signal lands.
    proc = toolproof(str(suite_path), "--target", AGENT, "-n", "200", "-q", "--out", str(run_dir))
    wait_for_lines(run_dir / "records.jsonl", 3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    written = (run_dir / "records.jsonl").read_bytes().count(b"\n")
    assert proc.returncode == 130, f"exit {proc.returncode} after {written} records: {err!r}"
    assert f"toolproof run --resume {run_dir}" in err.decode()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"
    kept = read_records(run_dir / "records.jsonl")
    assert 3 <= len(kept) < 1200
    assert len(by_triple(kept)) == len(kept)


def test_sigterm_stops_like_ctrl_c_and_the_run_resumes(suite_path: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = toolproof(
        str(suite_path), "--target", AGENT, "-n", "40", "-q", "--no-cache", "--out", str(run_dir)
    )
    wait_for_lines(run_dir / "records.jsonl", 3)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert f"toolproof run --resume {run_dir}" in err.decode()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"
    assert manifest["error"] == "stopped by SIGTERM"
    kept = read_records(run_dir / "records.jsonl")
    assert 3 <= len(kept) < 240
    resumed = toolproof("--resume", str(run_dir), "-q")
    assert resumed.wait(120) == 0, resumed.stderr.read() if resumed.stderr else ""
    final = read_records(run_dir / "records.jsonl")
    assert len(by_triple(final)) == len(final) == 240
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "complete"
