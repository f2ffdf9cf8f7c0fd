"""Golden reports: the full JSON report of the example suite's demo records.

Any change of a verdict or a figure on the demo records shows here as a diff.
A deliberate change regenerates the files with
``TOOLPROOF_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py`` and the
diff is reviewed like code.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolproof.cli import app

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "examples" / "support"
GOLDEN = Path(__file__).resolve().parent / "golden"


def _stable(report: dict) -> dict:
    report = dict(report)
    report.pop("toolproof", None)  # the version string
    return report


@pytest.mark.parametrize("records", ["records.jsonl", "records-b.jsonl"])
def test_json_report_matches_golden(records: str, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = CliRunner().invoke(
        app,
        [
            "score",
            str(SUITE),
            str(SUITE / records),
            "--json",
            str(out),
            "--no-failures",
            "--allow-code",
        ],
    )
    assert result.exit_code == 0, result.output
    actual = _stable(json.loads(out.read_text(encoding="utf-8")))
    golden = GOLDEN / (Path(records).stem + ".json")
    if os.environ.get("TOOLPROOF_UPDATE_GOLDEN") == "1":
        golden.write_text(json.dumps(actual, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    expected = json.loads(golden.read_text(encoding="utf-8"))
    assert actual == expected
