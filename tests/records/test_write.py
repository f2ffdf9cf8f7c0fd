from __future__ import annotations

from pathlib import Path

import pytest

from toolproof.errors import SuiteError
from toolproof.records import RecordWriter, TornLineWarning, latest_records, read_records
from toolproof.types import Outcome, Record


def rec(case: str, attempt: int = 0, outcome: Outcome = Outcome.ok) -> Record:
    return Record(case_id=case, target="t", attempt=attempt, outcome=outcome)


def test_records_round_trip_in_order(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    with RecordWriter(path) as writer:
        for i in range(50):
            writer.write(rec(f"c{i}"))
    assert [r.case_id for r in read_records(path)] == [f"c{i}" for i in range(50)]
    assert path.read_bytes().endswith(b"\n")


def test_a_torn_last_line_is_ignored_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    with RecordWriter(path) as writer:
        writer.write(rec("a"))
        writer.write(rec("b"))
    data = path.read_bytes()
    path.write_bytes(data[:-10])
    with pytest.warns(TornLineWarning):
        records = read_records(path)
    assert [r.case_id for r in records] == ["a"]


def test_appending_after_a_torn_line_starts_clean(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_bytes(rec("a").model_dump_json().encode() + b"\n" + b'{"format": "toolpr')
    with pytest.warns(TornLineWarning), RecordWriter(path) as writer:
        writer.write(rec("b"))
    assert [r.case_id for r in read_records(path)] == ["a", "b"]


def test_a_bad_line_in_the_middle_is_an_error_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    good = rec("a").model_dump_json()
    path.write_text(f"{good}\nnot json\n{good}\n")
    with pytest.raises(SuiteError, match=r"records.jsonl:2"):
        read_records(path)


def test_a_missing_file_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match="not found"):
        read_records(tmp_path / "nope.jsonl")


def test_the_latest_record_of_a_triple_wins() -> None:
    records = [rec("a", 0, Outcome.timeout), rec("b"), rec("a", 0), rec("a", 1)]
    latest = latest_records(records)
    assert len(latest) == 3
    assert next(r for r in latest if r.case_id == "a" and r.attempt == 0).outcome is Outcome.ok


def test_a_lone_surrogate_is_written_escaped_and_reads_back_unchanged(tmp_path: Path) -> None:
    from toolproof.types import Response

    path = tmp_path / "records.jsonl"
    hostile = Record(
        case_id="a", target="t", response=Response(text="x\ud800y\udfff"), request={"k": "\udc80"}
    )
    with RecordWriter(path) as writer:
        writer.write(hostile)
        writer.write(rec("b"))
    data = path.read_bytes()
    data.decode("utf-8")  # valid UTF-8: the surrogates are \\u escapes
    assert b"\\ud800" in data
    first, second = read_records(path)
    assert first == hostile and second.case_id == "b"
