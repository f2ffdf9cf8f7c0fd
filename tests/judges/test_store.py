"""Judgements and calibration records read from disk are untrusted: bad input is one located error."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolproof.errors import SuiteError
from toolproof.judges import read_judgements
from toolproof.judges._calibrate import read_calibration

DEEP = "[" * 5000 + "]" * 5000


def test_a_judgement_nested_past_the_limit_is_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "judgements.jsonl"
    path.write_text('{"format": "x", "fields": ' + DEEP + "}\n", encoding="utf-8")
    with pytest.raises(SuiteError) as err:
        read_judgements(path)
    assert "judgements.jsonl:1" in str(err.value) and "nested deeper than" in str(err.value)


def test_a_calibration_record_nested_past_the_limit_is_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "calibration.json"
    path.write_text('{"fields": ' + DEEP + "}", encoding="utf-8")
    with pytest.raises(SuiteError) as err:
        read_calibration(path)
    assert "calibration.json" in str(err.value) and "nested deeper than" in str(err.value)
