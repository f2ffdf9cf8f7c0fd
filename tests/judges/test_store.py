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


@pytest.mark.parametrize("newline", ["\n", ""], ids=["whole", "last-line-unterminated"])
def test_a_judgement_naming_a_key_twice_is_a_located_error(tmp_path: Path, newline: str) -> None:
    """Which of two answers would the gate count? Neither: the line is refused (a last
    line without its newline is not taken for a torn one either)."""
    path = tmp_path / "judgements.jsonl"
    line = '{"format": "x", "fields": {"ok": false, "ok": true}}'
    path.write_text(line + newline, encoding="utf-8")
    with pytest.raises(SuiteError) as err:
        read_judgements(path)
    assert "judgements.jsonl:1:" in str(err.value) and "duplicate key 'ok'" in str(err.value)


def test_a_calibration_record_naming_a_key_twice_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "calibration.json"
    path.write_text('{"rubric": "a", "rubric": "b"}', encoding="utf-8")
    with pytest.raises(SuiteError, match="duplicate key 'rubric'"):
        read_calibration(path)


def test_a_label_naming_a_key_twice_is_a_located_error(tmp_path: Path) -> None:
    from toolproof.judges import read_labels

    header = '{"format": "toolproof.labels/1", "rubric": "selection", "suite": "suite.yaml"}'
    line = '{"case_id": "c0", "fields": {"correct": "no", "correct": "yes"}}'
    path = tmp_path / "labels.jsonl"
    path.write_text(header + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(SuiteError) as err:
        read_labels(path)
    assert "labels.jsonl:2:" in str(err.value) and "duplicate key 'correct'" in str(err.value)
