"""Tables printed to no terminal (a CI log) are never cropped: whole rows, or folded cells.

Piped, rich assumed 80 columns and cut what did not fit with '…'. Now a console
that writes to no terminal is wide (``COLUMNS`` still wins when set), and every
column folds what does not fit rather than cutting it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

TAG = "a-very-long-tag-name-for-the-billing-and-refunds-area-of-support"
MODELS = ("half", "a-model-with-a-rather-long-name", "another-model-with-a-long-name")
SUITE = {
    "format": 1,
    "suite": "wide",
    "tools": [
        {
            "name": "lookup_order",
            "description": "Get one order by its ID.",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        }
    ],
    "cases": [
        {"id": "lookup", "prompt": "Where?", "expect": {"call": "lookup_order"}, "tags": [TAG]},
        {"id": "greeting", "prompt": "Hi!", "expect": {"kind": "text"}, "tags": [TAG]},
    ],
}
HALF = {
    "default": {"tool_calls": [{"name": "lookup_order", "raw_arguments": '{"order_id": "1"}'}]}
}


def _toolproof(root: Path, *args: str, columns: str | None) -> str:
    env = {"PATH": "/usr/bin:/bin", "TOOLPROOF_STORE": "off"}
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    if columns is not None:
        env["COLUMNS"] = columns
    done = subprocess.run(
        [sys.executable, "-m", "toolproof", *args],
        cwd=root, env=env, capture_output=True, text=True, check=False, timeout=120,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wide")
    (root / "suite.yaml").write_text(yaml.safe_dump(SUITE, sort_keys=False))
    for name in MODELS:
        (root / f"{name}.yaml").write_text(yaml.safe_dump(HALF))
    models = [a for name in MODELS for a in ("-m", f"scripted:{name}.yaml")]
    _toolproof(root, "run", "suite.yaml", *models, "-n", "1", "-o", "run", "-q", columns="200")
    return root


def test_piped_output_shows_whole_rows(checkout: Path) -> None:
    out = _toolproof(checkout, "report", "run", columns=None)
    assert "…" not in out
    tag_rows = [line for line in out.splitlines() if TAG in line]
    assert tag_rows, out  # the slice's name whole, on one line
    # the targets' own names head the columns (no letters and legend)
    assert "scripted:another-model-with-a-long-name.yaml" in out
    assert not any(line.startswith("A = ") for line in out.splitlines())


@pytest.mark.parametrize("columns", ["80", "50"])
def test_a_narrow_columns_folds_and_crops_nothing(checkout: Path, columns: str) -> None:
    for args in (("report", "run"), ("gate", "run", "--no-store")):
        out = _toolproof(checkout, *args, columns=columns)
        assert "…" not in out, out
        assert max(len(line) for line in out.splitlines()) <= int(columns)
