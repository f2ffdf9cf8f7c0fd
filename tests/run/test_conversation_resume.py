"""kill -9 in the middle of conversations, then --resume: each conversation is whole."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from toolproof.records import read_records

from . import agents
from .test_kill_resume import REPO, _default_sigint, wait_for_lines

AGENT = f"{agents.__name__}:talk_slow"

SUITE = {
    "format": 1,
    "suite": "talks",
    "tools": [{"name": "noop", "parameters": {"type": "object", "properties": {}}}],
    "cases": [
        {
            "id": f"talk-{i}",
            "user": {"script": ["Hello.", "A question.", "Another one.", "Bye. ###STOP###"]},
            "expect": {"kind": "text"},
        }
        for i in range(4)
    ],
}


def _run(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "toolproof", "run", *args],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=_default_sigint,
    )


@pytest.mark.slow
def test_kill_mid_conversation_then_resume_restarts_it_whole(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(yaml.safe_dump(SUITE))
    run_dir = tmp_path / "run"
    victim = _run(str(suite), "--target", AGENT, "-n", "6", "-q", "--no-cache", "-o", str(run_dir))
    wait_for_lines(run_dir / "records.jsonl", 3)
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait(30)
    before = read_records(run_dir / "records.jsonl")
    assert 3 <= len(before) < 24  # stopped midway: at least one conversation was cut off

    resumed = _run("--resume", str(run_dir), "-q")
    _, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err.decode()
    missing = 24 - len(before)
    assert (
        f"resume: {missing} conversation attempt(s) had no record and ran from their first turn"
        in " ".join(err.decode().split())
    )
    final = read_records(run_dir / "records.jsonl")
    assert len(final) == 24
    assert len({(r.case_id, r.attempt) for r in final}) == 24  # none twice
    for record in final:  # every conversation whole: four user turns, the last one stops
        turns = record.user_turns or []
        assert [t.stop for t in turns] == [None, None, None, "user_stop"]
        assert record.stopped_by == "user_stop"
        assert [m.role for m in record.transcript or []].count("user") == 3
