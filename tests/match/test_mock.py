"""Mock tools: rules over arguments (first match wins), a default, and every fault kind."""

from __future__ import annotations

import json

import pytest

from toolproof.match._matchers import Context
from toolproof.match._mock import CompiledMock, fault_result, result_of
from toolproof.types import ToolMock

CTX = Context(now=None, tz=None)


def _mock(data: dict[str, object]) -> CompiledMock:
    return CompiledMock(ToolMock.model_validate(data), CTX)


def test_first_matching_rule_wins_and_unlisted_arguments_are_ignored() -> None:
    mock = _mock(
        {
            "rules": [
                {"when": {"order_id": "ORD-000001"}, "result": {"status": "shipped"}},
                {"when": {"order_id": {"regex": "ORD-0[0-9]+"}}, "result": {"status": "open"}},
                {"result": "never reached for ORD-0..."},
            ]
        }
    )
    first = mock.answer({"order_id": "ORD-000001", "verbose": True})
    assert first is not None and json.loads(first.content) == {"status": "shipped"}
    second = mock.answer({"order_id": "ORD-000002"})
    assert second is not None and json.loads(second.content) == {"status": "open"}
    third = mock.answer({"order_id": "X"})
    assert third is not None and third.content == "never reached for ORD-0..."
    assert not third.is_error


def test_matchers_in_when_use_the_argument_matcher_language() -> None:
    mock = _mock(
        {
            "rules": [
                {
                    "when": {"customer": {"normalized": "Novák", "ignore_diacritics": True}},
                    "result": [1],
                }
            ]
        }
    )
    hit = mock.answer({"customer": "  NOVAK "})
    assert hit is not None and hit.content == "[1]"
    assert mock.answer({"customer": "Svoboda"}) is None  # no default: falls through


def test_default_answers_when_no_rule_matches() -> None:
    mock = _mock({"rules": [{"when": {"a": 1}, "result": "one"}], "default": {"result": "other"}})
    got = mock.answer({"a": 2})
    assert got is not None and got.content == "other"


@pytest.mark.parametrize(
    ("fault", "is_error", "needle"),
    [
        ("error", True, '"error": "boom"'),
        ("exception", True, "RuntimeError: boom"),
        ("timeout", True, "timeout"),
        ("unavailable", True, "503 Service Unavailable"),
        ("empty", False, ""),
        ("malformed", False, '{"status": "ok"'),
    ],
)
def test_every_fault_kind(fault: str, is_error: bool, needle: str) -> None:
    mock = _mock({"rules": [{"when": {"id": 1}, "fault": fault, "message": "boom"}]})
    got = mock.answer({"id": 1})
    assert got is not None
    assert got.fault == fault
    assert got.is_error is is_error
    assert needle in got.content
    if fault == "empty":
        assert got.content == ""
    if fault == "malformed":
        with pytest.raises(ValueError):
            json.loads(got.content)


def test_fault_messages_default_and_are_json_escaped() -> None:
    assert json.loads(fault_result("error").content) == {"error": "the tool failed"}
    assert json.loads(fault_result("error", 'say "hi"').content) == {"error": 'say "hi"'}


def test_results_are_json_except_strings() -> None:
    assert result_of({"b": 1, "a": "é"}).content == '{"a": "é", "b": 1}'
    assert result_of("plain").content == "plain"
    assert result_of(None).content == "null"
