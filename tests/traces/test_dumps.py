"""The import's plain-dict builders against the typed models' own dumps, key for key."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from toolproof.traces import Redactor, import_traces
from toolproof.traces._dumps import (
    call_case,
    call_record,
    datetime_json,
    json_value,
    message_case,
    message_record,
)
from toolproof.types import Case, Message, MockRule, Record, ToolCall

CALLS = [
    ToolCall(name="refund"),
    ToolCall(id="c1", name="refund", raw_arguments='{"a": 1}', arguments={"a": 1}),
    ToolCall(id="c2", name="x", raw_arguments="{", arguments=None, parse_error="not JSON"),
    ToolCall(name="y", arguments={"n": float("nan"), "i": float("inf"), "z": None, "t": [1.5]}),
    ToolCall(name="z", arguments=[1, "two", {"three": 3.0}], extracted_from_text=True),
    ToolCall(name="", arguments={}, raw_arguments=""),
    ToolCall(name="big", arguments={"n": 10**30, "f": -0.0}),
    ToolCall(name="scalar", arguments=float("-inf")),
]
MESSAGES = [
    Message(role="system", content="You help."),
    Message(role="user", content=""),
    Message(role="assistant", tool_calls=CALLS[:3]),
    Message(role="assistant", content="text", tool_calls=CALLS[3:]),
    Message(role="tool", content='{"ok": true}', tool_call_id="c1", name="refund", is_error=True),
    Message(role="tool", content=None, tool_call_id="c2"),
]


def _same(a: Any, b: Any) -> None:
    """Equal as written: same keys in the same order, same JSON text."""
    assert json.dumps(a, ensure_ascii=False) == json.dumps(b, ensure_ascii=False)


@pytest.mark.parametrize("call", CALLS, ids=lambda c: c.name or "empty")
def test_calls_as_the_model_dumps_them(call: ToolCall) -> None:
    _same(call_case(call), call.model_dump(mode="json", exclude_defaults=True, exclude_none=True))
    _same(call_record(call), call.model_dump(mode="json", exclude_none=True))


@pytest.mark.parametrize("m", MESSAGES, ids=lambda m: m.role)
def test_messages_as_the_model_dumps_them(m: Message) -> None:
    _same(message_case(m), m.model_dump(mode="json", exclude_defaults=True, exclude_none=True))
    built = message_record(m.role, m.content, m.tool_calls, m.tool_call_id, m.name, m.is_error)
    _same(built, m.model_dump(mode="json", exclude_none=True))


@pytest.mark.parametrize(
    "value",
    [None, "s", 3, True, 1.25, float("nan"), {"a": [float("inf"), (1, 2)]}, [None, {"b": None}]],
)
def test_any_values_as_json_mode_dumps_them(value: Any) -> None:
    _same(json_value(value), MockRule(result=value).model_dump(mode="json")["result"])


@pytest.mark.parametrize("micro", [0, 10, 123456])
def test_times_as_the_record_dumps_them(micro: int) -> None:
    moment = datetime(2025, 11, 29, 7, 6, 40, micro, tzinfo=UTC)
    dumped = Record(case_id="c", started_at=moment).model_dump(mode="json", exclude_none=True)
    assert datetime_json(moment) == dumped["started_at"]


def test_every_case_and_record_written_is_what_its_model_writes(tmp_path: Path) -> None:
    """Each line an import writes, read back by its model and dumped again, is the same line."""
    fixtures = Path(__file__).parent / "fixtures"
    files = [
        fixtures / n
        for n in (
            "otelv2-legacy-content.spans.jsonl",
            "otelv2-legacy-content.logs.jsonl",
            "openinference.spans.jsonl",
            "langfuse-blob-export.jsonl",
            "openlit.spans.jsonl",
            "openlit.logs.jsonl",
        )
    ]
    report = import_traces(files, tmp_path / "out", label="t", redactor=Redactor())
    assert report.cases > 0
    cases = (tmp_path / "out/cases.jsonl").read_text().splitlines()
    records = (tmp_path / "out/runs/prod-t/records.jsonl").read_text().splitlines()
    assert len(cases) == len(records) == report.cases
    for line in cases:
        case = Case.model_validate_json(line)
        data = case.model_dump(mode="json", exclude_defaults=True, exclude_none=True)
        data["expect"] = case.expect.model_dump(
            mode="json", exclude_defaults=True, exclude_none=True
        )
        assert json.dumps(data, ensure_ascii=False) == line
    for line in records:
        record = Record.model_validate_json(line)
        assert (
            json.dumps(record.model_dump(mode="json", exclude_none=True), ensure_ascii=False)
            == line
        )
