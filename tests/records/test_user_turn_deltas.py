"""A conversation's user-model requests are written as deltas (records format /3) and
every reader rebuilds them byte for byte; older formats still read, a newer one is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolproof.errors import SuiteError
from toolproof.records import RECORD_FORMAT, RecordWriter, read_records
from toolproof.records._read import iter_records
from toolproof.records._steps import compact_user_turns, expand_user_turns
from toolproof.types import Record, Response
from toolproof.types._record import UserTurn


def _user_requests(n: int) -> list[dict[str, Any]]:
    """The user model's requests of an n-turn conversation: each the one before, plus the
    user's own message and the agent's answer (as the user model sees them)."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "guidelines " * 40},
        {"role": "user", "content": "Hi! How can I help you today?"},
    ]
    out = []
    for i in range(n):
        out.append({"model": "u", "messages": list(messages), "temperature": 0.0})
        messages += [
            {"role": "assistant", "content": f"user message {i}"},
            {"role": "user", "content": f"agent answer {i} " * 10},
        ]
    return out


def _turns(requests: list[dict[str, Any]]) -> list[UserTurn]:
    turns = []
    for i, request in enumerate(requests):
        exchanges = None
        if i == 1:  # a turn that called a user tool: an earlier exchange, then the last
            first = {**request, "messages": request["messages"][:-1]}
            exchanges = [{"request": first, "response": {"text": None, "n": 1}}]
        turns.append(
            UserTurn(
                text=f"user message {i}",
                request=request,
                response={"text": f"user message {i}"},
                exchanges=exchanges,
            )
        )
    return turns


def _record(turns: list[UserTurn]) -> Record:
    return Record(
        case_id="c", target="t", response=Response(text="done"), steps=[], user_turns=turns
    )


def _written(tmp_path: Path, record: Record) -> Path:
    path = tmp_path / "records.jsonl"
    writer = RecordWriter(path, fsync=False)
    writer.write(record)
    writer.close()
    return path


def test_user_turn_requests_are_written_as_deltas_and_read_back_whole(tmp_path: Path) -> None:
    turns = _turns(_user_requests(6))
    path = _written(tmp_path, _record(turns))
    stored = json.loads(path.read_text())
    assert stored["format"] == RECORD_FORMAT == "toolproof.record/3"
    held = stored["user_turns"]
    assert "request" in held[0] and "request_delta" not in held[0]
    assert "request_delta" in held[1]["exchanges"][0]  # the exchange follows turn 0
    assert set(held[1]["request_delta"]) == {"append"}  # the turn follows its own exchange
    assert all("request" not in t and "request_delta" in t for t in held[1:])
    (record,) = read_records(path)
    (lean,) = (r for _, r in iter_records(path))  # the lean reader too
    whole = [t.model_dump(mode="json", exclude_none=True) for t in turns]
    for read in (record, lean):
        got = [t.model_dump(mode="json", exclude_none=True) for t in read.user_turns or ()]
        assert json.dumps(got) == json.dumps(whole)  # the exact JSON: key order, 0.0 a float


def test_the_written_conversation_grows_with_its_turns_not_their_square(tmp_path: Path) -> None:
    def sizes(n: int) -> tuple[int, int]:
        record = _record(_turns(_user_requests(n)))
        folder = tmp_path / str(n)
        folder.mkdir()
        return _written(folder, record).stat().st_size, len(record.model_dump_json())

    delta_10, whole_10 = sizes(10)
    delta_20, whole_20 = sizes(20)
    assert whole_20 / whole_10 > 3.0  # whole requests: the square
    assert delta_20 / delta_10 < 2.3  # deltas: linear
    assert delta_20 < whole_20 / 4


def test_scripted_turns_and_a_request_that_is_no_object_are_kept_whole() -> None:
    scripted = [UserTurn(text="hi", source="script"), UserTurn(text="bye", source="script")]
    assert compact_user_turns(scripted) == scripted
    odd = [UserTurn(text="a", request={"m": [1]}), UserTurn(text="b", request="not an object")]
    assert compact_user_turns(odd) == odd


def _line(fmt: str, turns: list[Any]) -> str:
    return json.dumps(
        {
            "format": fmt,
            "case_id": "c",
            "target": "t",
            "attempt": 0,
            "response": {"text": "done"},
            "user_turns": turns,
        }
    )


def test_a_format_2_record_with_whole_user_requests_still_reads(tmp_path: Path) -> None:
    turns = [{"text": "a", "request": {"m": [1]}}, {"text": "b", "request": {"m": [1, 2]}}]
    path = tmp_path / "records.jsonl"
    path.write_text(_line("toolproof.record/2", turns) + "\n")
    (record,) = read_records(path)
    assert record.format == "toolproof.record/2"
    assert [t.request for t in record.user_turns or ()] == [{"m": [1]}, {"m": [1, 2]}]


DELTA_TURNS = [
    {"text": "a", "request": {"m": [1]}},
    {"text": "b", "request_delta": {"append": {"m": [2]}}},
]


@pytest.mark.parametrize(
    ("fmt", "turns", "message"),
    [
        (
            "toolproof.record/2",
            DELTA_TURNS,
            "user_turns[1].request_delta: not a field of records format toolproof.record/2",
        ),
        (
            "toolproof.record/3",
            [{"text": "b", "request_delta": {"append": {"m": [2]}}}],
            "user_turns[0].request_delta: a delta needs a user-model request before it",
        ),
        (
            "toolproof.record/3",
            [DELTA_TURNS[0], {"text": "b", "request_delta": {"append": {"x": [2]}}}],
            "user_turns[1].request_delta.keys: leaves out 'x'",
        ),
        (
            "toolproof.record/3",
            [
                DELTA_TURNS[0],
                {"text": "b", "exchanges": [{"request_delta": [1]}], "request": {"m": []}},
            ],
            "user_turns[1].exchanges[0].request_delta: not a delta",
        ),
        (
            "toolproof.record/4",
            DELTA_TURNS,
            "records format 'toolproof.record/4' is newer than this toolproof reads (up to "
            "toolproof.record/3)",
        ),
    ],
)
def test_a_bad_or_misplaced_user_delta_and_a_newer_format_are_located_errors(
    tmp_path: Path, fmt: str, turns: list[Any], message: str
) -> None:
    path = tmp_path / "records.jsonl"
    path.write_text("\n" + _line(fmt, turns) + "\n")
    with pytest.raises(SuiteError) as info:
        read_records(path)
    assert message in str(info.value)
    assert str(info.value).count(message.split(": ")[0] + ":") == 1  # the place named once
    assert info.value.line == 2


def test_turns_without_deltas_are_left_as_they_are() -> None:
    turns = [{"text": "a", "request": {"m": [1]}}]
    assert expand_user_turns(turns) is turns
