"""Reading records without their raw payloads gives the same records, and the same errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolproof.errors import SuiteError
from toolproof.records import iter_records
from toolproof.types import Record


def _without_raw(record: Record) -> Record:
    return record.model_copy(
        update={
            "request": None,
            "response": record.response.model_copy(update={"raw": None})
            if record.response is not None
            else None,
        }
    )


def _read(path: Path, *, raw: bool) -> list[tuple[int, Record]] | str:
    try:
        return list(iter_records(path, raw=raw))
    except SuiteError as exc:
        return f"error: {exc}"


def _same(path: Path) -> None:
    full, lean = _read(path, raw=True), _read(path, raw=False)
    if isinstance(full, str) or isinstance(lean, str):
        assert lean == full
        return
    assert [(n, _without_raw(r)) for n, r in full] == lean
    for (_, whole), (_, record) in zip(full, lean, strict=True):
        assert record.request is None
        assert record.response is None or record.response.raw is None
        # the same values of the same types (100.0, not 100), and the same fields given
        assert record.model_dump_json() == _without_raw(whole).model_dump_json()
        assert repr(record) == repr(_without_raw(whole))
        _same_fields_set(whole, record)


def _same_fields_set(whole: Record, lean: Record) -> None:
    # (the raw payloads are None in a lean record whether the line gave them or not)
    assert lean.model_fields_set - {"request"} == whole.model_fields_set - {"request"}
    if whole.response is not None and lean.response is not None:
        assert lean.response.model_fields_set - {"raw"} == whole.response.model_fields_set - {"raw"}
        for a, b in zip(whole.response.tool_calls, lean.response.tool_calls, strict=True):
            assert a.model_fields_set == b.model_fields_set
        if whole.response.usage is not None and lean.response.usage is not None:
            assert whole.response.usage.model_fields_set == lean.response.usage.model_fields_set


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=12,
)
CALL = st.fixed_dictionaries(
    {"name": st.sampled_from(["lookup", "refund"])},
    optional={
        "id": st.text(max_size=6),
        "raw_arguments": st.sampled_from(['{"a": 1}', "{bad", '{"n": 12345678901234567890123}']),
        "arguments": JSON,
        "parse_error": st.none() | st.text(max_size=4),
        "extracted_from_text": st.booleans() | st.just(1),
    },
)
RESPONSE = st.fixed_dictionaries(
    {},
    optional={
        "text": st.none() | st.text(max_size=10),
        "tool_calls": st.lists(CALL, max_size=2),
        "stop_reason": st.sampled_from(["stop", "tool_calls"]),
        "raw": JSON,
        "latency_ms": st.floats(min_value=0, max_value=1e6),
        "usage": st.none()
        | st.fixed_dictionaries(
            {}, optional={"input_tokens": st.none() | st.integers(-2, 9), "output_tokens": JSON}
        ),
        "refusal": st.none() | st.text(max_size=4),
        "model": st.none() | st.integers() | st.text(max_size=4),
    },
)
RECORD = st.fixed_dictionaries(
    {"case_id": st.text(max_size=6)},
    optional={
        "format": st.sampled_from(["toolproof.record/1", "toolproof.record/2", "other/1"]),
        "target": st.none() | st.text(max_size=4),
        "attempt": st.integers(min_value=-1, max_value=5) | st.just("2"),
        "outcome": st.sampled_from(["ok", "timeout", "exploded"]),
        "response": st.none() | RESPONSE | st.just("text"),
        "request": JSON,
        "state_base": st.just("abc"),
        "end_state": JSON,
        "steps": st.none() | st.lists(JSON, max_size=2) | st.just({"a": 1}),
        "run_id": st.none() | st.text(max_size=4),
        "started_at": st.sampled_from(
            [
                None,
                "2026-01-01T10:00:00Z",
                "2026-01-01T10:00:00.123+02:00",
                "2026-01-01 10:00",
                "2026-13-01T00:00:00Z",
                "bad",
                1700000000,
                1.5,
            ]
        ),
        "latency_ms": st.none()
        | st.integers(-5, 10**20)
        | st.floats(allow_nan=False)
        | st.just("7"),
        "cost_usd": st.none() | st.floats(allow_nan=False, allow_infinity=False) | st.integers(),
        "cached": st.booleans() | st.sampled_from([0, 1, "true", None]),
        "key": st.none() | st.text(max_size=4),
        "stopped_by": st.sampled_from([None, "steps", "seconds", "other"]),
        "mcp_log": st.none() | st.text(max_size=4),
        "retries": st.none() | st.lists(st.text(max_size=3), max_size=2) | st.just([1]),
        "error": st.none() | st.just({"kind": "timeout", "message": "slow"}) | st.just({"x": 1}),
        "transcript": st.none() | st.just([{"role": "user", "content": "hi"}]) | st.just([1]),
    },
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(RECORD, min_size=1, max_size=4), ascii_only=st.booleans())
def test_lean_reading_gives_the_records_less_their_raw_payloads(
    tmp_path: Path, records: list[dict[str, Any]], ascii_only: bool
) -> None:
    path = tmp_path / "r.jsonl"
    text = "".join(json.dumps(r, ensure_ascii=ascii_only) + "\n" for r in records)
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    _same(path)


@pytest.mark.parametrize(
    "line",
    [
        '{"case_id": "a", "request": {"x": [1, 2,]}}',  # broken JSON inside the skipped part
        '{"case_id": "a", "request": NaN}',
        '{"case_id": "a", "response": {"raw": Infinity}}',
        '{"case_id": "a", "request": {"s": "\\ud800"}}',  # a lone surrogate
        '{"case_id": "a", "latency_ms": 1e400}',
        '{"case_id": "a", "response": {"raw": {}, "txet": "hi"}}',  # an unknown key
        '{"case_id": "a", "respons": {}}',
        '{"case_id": "a", "response": 5}',
        '{"case_id": "a", "request": ' + "[" * 5000 + "]" * 5000 + "}",
        '{"case_id": "a"} trailing',
        "[1, 2]",
        '{"case_id": "a", "case_id": "b"}',
        '{"format": "toolproof.record/1", "case_id": "a", "state_base": "x"}',
        '{"case_id": "a", "request": {"big": 123456789012345678901234567890}}',
    ],
)
def test_hostile_lines_read_alike_with_and_without_raw(tmp_path: Path, line: str) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"case_id": "first"}\n' + line + "\n", encoding="utf-8")
    _same(path)


def test_a_record_with_a_large_raw_request_is_read_without_it(tmp_path: Path) -> None:
    request = {"messages": [{"role": "user", "content": "x" * 10_000}], "tools": [{"a": 1}] * 50}
    line = {"case_id": "a", "request": request, "response": {"text": "hi", "raw": request}}
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    [(_, full)] = iter_records(path)
    [(_, lean)] = iter_records(path, raw=False)
    assert full.request == request and full.response is not None and full.response.raw == request
    assert lean.request is None and lean.response is not None and lean.response.raw is None
    assert lean.response.text == "hi"
