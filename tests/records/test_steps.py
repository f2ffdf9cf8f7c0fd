"""Multi-step records keep each step's request as a delta; readers rebuild it byte for byte."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolproof.errors import SuiteError
from toolproof.records import read_records
from toolproof.records._steps import BadSteps, expand_steps, step_entry

TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]


def _requests() -> list[Any]:
    first = {
        "model": "m",
        "messages": [{"role": "user", "content": "Where is ORD-1?"}],
        "tools": TOOLS,
        "temperature": 0,
    }
    second = json.loads(json.dumps(first))
    second["messages"] += [
        {"role": "assistant", "tool_calls": [{"id": "c1", "name": "lookup"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "shipped"},
    ]
    third = json.loads(json.dumps(second))
    third["temperature"] = 0.0  # same value, another JSON type: must survive as 0.0
    third["messages"].append({"role": "user", "content": "thanks"})
    fourth = {"tools": TOOLS, "model": "m", "messages": third["messages"][:1]}  # reordered, cut
    return [first, second, third, fourth, "not an object", {"model": "m"}]


def _stored(requests: list[Any]) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    previous = None
    for i, request in enumerate(requests):
        steps.append(step_entry(steps, previous, request, {"text": f"step {i}"}))
        previous = request
    return steps


def test_a_delta_rebuilds_every_request_byte_for_byte() -> None:
    requests = _requests()
    steps = _stored(requests)
    assert "request" in steps[0]
    assert steps[1] == {
        "request_delta": {"append": {"messages": requests[1]["messages"][1:]}},
        "response": {"text": "step 1"},
    }
    assert steps[2]["request_delta"]["set"] == {"temperature": 0.0}
    assert steps[3]["request_delta"]["keys"] == ["tools", "model", "messages"]
    assert steps[4] == {"request": "not an object", "response": {"text": "step 4"}}
    stored = json.loads(json.dumps(steps))  # as written to the records file and read back
    rebuilt = expand_steps(stored)
    whole = [{"request": r, "response": {"text": f"step {i}"}} for i, r in enumerate(requests)]
    assert json.dumps(rebuilt) == json.dumps(whole)  # the exact JSON, key order and types


def _conversation(n: int) -> list[dict[str, Any]]:
    messages: list[Any] = [{"role": "user", "content": "Where is ORD-1?"}]
    requests = []
    for i in range(n):
        requests.append({"model": "m", "messages": list(messages), "tools": TOOLS})
        messages += [
            {"role": "assistant", "tool_calls": [{"id": f"c{i}", "name": "lookup"}]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": "shipped " * 20},
        ]
    return requests


def test_the_stored_size_grows_with_the_steps_not_their_square() -> None:
    def sizes(n: int) -> tuple[int, int]:
        requests = _conversation(n)
        whole = [{"request": r, "response": {"text": "ok"}} for r in requests]
        stored = []
        previous = None
        for r in requests:
            stored.append(step_entry(stored, previous, r, {"text": "ok"}))
            previous = r
        return len(json.dumps(stored)), len(json.dumps(whole))

    stored_10, whole_10 = sizes(10)
    stored_20, whole_20 = sizes(20)
    assert whole_20 / whole_10 > 3.5  # whole requests: the square
    assert stored_20 / stored_10 < 2.2  # deltas: linear
    assert stored_20 < whole_20 / 5


def _line(steps: list[Any]) -> str:
    return json.dumps(
        {
            "format": "toolproof.record/2",
            "case_id": "c",
            "target": "t",
            "attempt": 0,
            "outcome": "ok",
            "response": {"text": "done"},
            "steps": steps,
        }
    )


def test_a_reader_gets_the_whole_requests(tmp_path: Path) -> None:
    requests = _requests()
    path = tmp_path / "records.jsonl"
    path.write_text(_line(_stored(requests)) + "\n")
    (record,) = read_records(path)
    assert record.steps is not None
    assert [s["request"] for s in record.steps] == requests


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ([{"request_delta": {}, "response": {}}], "steps[0].request_delta: a delta needs"),
        (
            [{"request": {"a": 1}}, {"request_delta": {"append": {"a": [2]}}}],
            "steps[1].request_delta.append.a: appends to a value that is not a list",
        ),
        (
            [{"request": {"a": 1}}, {"request_delta": {"keys": ["b"]}}],
            "steps[1].request_delta.keys: 'b' is in neither step",
        ),
        ([{"request": {"a": 1}}, {"request_delta": [1]}], "steps[1].request_delta: not a delta"),
    ],
)
def test_a_bad_delta_is_a_located_error(tmp_path: Path, steps: list[Any], message: str) -> None:
    path = tmp_path / "records.jsonl"
    path.write_text("\n" + _line(steps) + "\n")
    with pytest.raises(SuiteError) as info:
        read_records(path)
    assert message in str(info.value)
    assert str(info.value).count(message.split(": ")[0] + ":") == 1  # the place named once
    assert info.value.line == 2


def test_steps_without_deltas_are_left_as_they_are() -> None:
    steps = [{"request": {"a": 1}, "response": {}}]
    assert expand_steps(steps) is steps
    with pytest.raises(BadSteps):
        expand_steps([{"request": {}, "request_delta": {}}, {"request_delta": {}}])


def test_a_record_of_many_tiny_deltas_is_refused_before_it_rebuilds_to_its_square() -> None:
    """A hostile line: one long list, then one delta per item, each adding one more. Rebuilt
    whole it would hold the square of its size; it is refused once past the cap."""
    from toolproof.records._steps import MAX_REBUILT_ITEMS, BadSteps, expand_steps

    n = 3_000
    first = {"request": {"messages": list(range(n))}, "response": {}}
    deltas = [{"request_delta": {"append": {"messages": [i]}}, "response": {}} for i in range(n)]
    assert n * n > MAX_REBUILT_ITEMS  # uncapped, this would rebuild past the cap
    with pytest.raises(BadSteps) as caught:
        expand_steps([first, *deltas])
    assert "rebuild to more than" in str(caught.value)
