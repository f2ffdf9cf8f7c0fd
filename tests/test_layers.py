"""The layer contract (docs/architecture.md) holds, and it fails on a back-arrow."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which(
    "lint-imports"
)

pytestmark = pytest.mark.skipif(LINT is None, reason="import-linter is not installed (dev extra)")


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    assert LINT is not None
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    return subprocess.run(
        [LINT, "--config", str(root / "pyproject.toml"), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_layers_hold() -> None:
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "2 kept, 0 broken" in result.stdout
    assert "ignored" not in result.stdout  # no known back-arrow left aside


def test_grade_importing_records_breaks_the_purity_contract(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "src", tmp_path / "src", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    score = tmp_path / "src" / "toolproof" / "grade" / "_score.py"
    score.write_text(score.read_text() + "\nfrom toolproof.records import read_records  # noqa\n")
    result = _lint(tmp_path)
    assert result.returncode != 0
    assert "grade is pure" in result.stdout and "BROKEN" in result.stdout


def test_a_back_arrow_breaks_the_contract(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "src", tmp_path / "src", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    records = tmp_path / "src" / "toolproof" / "records" / "_read.py"
    records.write_text(records.read_text() + "\nfrom toolproof.gate import run_gate  # noqa\n")
    result = _lint(tmp_path)
    assert result.returncode != 0
    assert "toolproof.records is not allowed to import toolproof.gate" in result.stdout
