"""`run` and `gate` decide "nothing scored" by one rule: a critical case with no answer
fails both, even when the infrastructure allowance covers its attempts."""

from __future__ import annotations

from pathlib import Path

import yaml
from tests.cli.cli_support import toolproof
from tests.cli.test_gate_integrity import SUITE

SCRIPT = {
    "cases": {
        "lookup": {"error": "server_error", "message": "simulated outage"},
        "greeting": {"text": "Hello!"},
    }
}


def test_a_critical_case_with_nothing_scored_fails_run_as_it_fails_gate(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(SUITE, sort_keys=False))
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(SCRIPT))
    run = toolproof(
        "run", "suite.yaml", "-m", "scripted:s.yaml", "-o", "r", "--quiet", "--no-store",
        "--max-retries", "0", "--max-infra-errors", "100%", cwd=tmp_path,
    )  # fmt: skip
    gate = toolproof("gate", "r", "--max-infra-errors", "100%", "--no-store", cwd=tmp_path)
    assert gate.returncode == 3, gate.stdout + gate.stderr
    assert run.returncode == 3, run.stdout + run.stderr
    assert "lookup" in run.stderr and "critical" in run.stderr
