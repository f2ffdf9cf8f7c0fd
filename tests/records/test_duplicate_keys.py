"""A records line that names a key twice is refused, located (file, line, field).

JSON readers keep the last of two values, silently: a planted line could carry a
failing answer and a passing one under the same key, and the verdict would be
whichever the reader kept. Both readings (with and without the raw payloads) refuse it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolproof.errors import SuiteError
from toolproof.records import iter_records

GOOD = {
    "format": "toolproof.record/2",
    "case_id": "c1",
    "target": "m",
    "attempt": 0,
    "response": {
        "text": None,
        "tool_calls": [{"name": "lookup_order", "raw_arguments": '{"order_id": "X"}'}],
        "raw": {"id": "r1", "note": "a: b"},
    },
}


def _line(**replace: str) -> str:
    text = json.dumps(GOOD)
    for old, new in replace.items():
        assert old in text
        text = text.replace(old, new, 1)
    return text


CASES = {
    # the outcome given twice, at the top
    "top": (_line(**{'"attempt": 0': '"attempt": 0, "outcome": "ok", "outcome": "ok"'}), "outcome"),
    # the called tool given twice
    "call": (
        _line(**{'"name": "lookup_order"': '"name": "delete_account", "name": "lookup_order"'}),
        "name",
    ),
    # the parsed arguments given twice inside the argument object
    "arguments": (
        _line(
            **{
                '"raw_arguments"': '"arguments": {"order_id": "Y", "order_id": "X"}, '
                '"raw_arguments"'
            }
        ),
        "order_id",
    ),
    # a key written with an escape, so the text never shows the same spelling twice
    "escaped": (_line(**{'"case_id": "c1"': '"case_id": "c9", "case\\u005fid": "c1"'}), "case_id"),
}
#: inside the raw response kept from the provider (kept for audit, never scored)
RAW = _line(**{'"id": "r1"': '"id": "r0", "id": "r1"'})


@pytest.mark.parametrize("raw", [True, False], ids=["full", "lean"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_key_named_twice_is_refused_with_its_place(name: str, raw: bool, tmp_path: Path) -> None:
    line, key = CASES[name]
    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(SuiteError) as caught:
        list(iter_records(path, raw=raw))
    error = caught.value
    assert error.line == 2
    assert f"duplicate key '{key}'" in str(error)
    assert str(path) in str(error)


@pytest.mark.parametrize("raw", [True, False], ids=["full", "lean"])
def test_colons_inside_strings_are_not_keys(raw: bool, tmp_path: Path) -> None:
    line = _line(**{'"id": "r1"': '"id": "r1", "x": "a:b:c:d", "k:e:y": 1'})
    path = tmp_path / "records.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    ((number, record),) = list(iter_records(path, raw=raw))
    assert number == 1 and record.case_id == "c1"


def test_the_raw_payload_is_checked_when_it_is_read(tmp_path: Path) -> None:
    """The raw payloads are not scored: reading without them (as the gate does) does not
    parse them, so it cannot see their keys; reading them (report, viewer) refuses."""
    path = tmp_path / "records.jsonl"
    path.write_text(RAW + "\n", encoding="utf-8")
    with pytest.raises(SuiteError, match="duplicate key 'id'"):
        list(iter_records(path, raw=True))
    ((_, record),) = list(iter_records(path, raw=False))
    assert record.response is not None and record.response.raw is None
