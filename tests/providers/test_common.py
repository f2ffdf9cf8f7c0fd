"""Arguments sent back in a conversation: the model's raw text is never trusted to parse."""

from __future__ import annotations

from toolproof.providers._common import arguments_for_history
from toolproof.types import ToolCall


def test_raw_arguments_nested_past_the_interpreter_limit_are_sent_back_empty() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    call = ToolCall(id="c1", name="lookup", raw_arguments=deep, arguments=None)
    assert arguments_for_history(call) == {}


def test_raw_arguments_that_parse_are_sent_back_as_parsed() -> None:
    call = ToolCall(id="c1", name="lookup", raw_arguments='{"id": 1}', arguments=None)
    assert arguments_for_history(call) == {"id": 1}
