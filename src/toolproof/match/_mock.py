"""Mock tools: scripted answers chosen by rules over the call's arguments, and faults.

A mock is a list of rules and a default. The first rule whose ``when`` matches
the arguments answers (``when`` uses the argument matchers of ``expect.args``;
arguments it does not name are ignored). A rule answers with a ``result`` or
injects a ``fault``. Nothing is executed and nothing waits: a timeout is
reported as a timeout at once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from toolproof.match._expr_context import Context
from toolproof.match._matchers import Matcher, compile_value
from toolproof.types import MockRule, ToolMock

__all__ = ["FAULT_TEXT", "CompiledMock", "ToolResult", "fault_result", "result_of"]

#: The payload a model sees for each fault (``{message}`` is the rule's message).
FAULT_TEXT = {
    "error": '{{"error": {message}}}',
    "exception": "Traceback (most recent call last):\n  ...\nRuntimeError: {raw}",
    "timeout": '{{"error": "timeout: the tool did not answer within 30 seconds"}}',
    "unavailable": '{{"error": "503 Service Unavailable: the service is temporarily down"}}',
}
_DEFAULT_MESSAGE = {"error": "the tool failed", "exception": "the tool raised an exception"}


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool call returned: the text fed back to the model, and whether it failed."""

    content: str
    is_error: bool = False
    fault: str | None = None


def result_of(value: Any) -> ToolResult:
    """A tool's return value as the text the model reads (strings as they are, else JSON)."""
    if isinstance(value, str):
        return ToolResult(value)
    return ToolResult(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str))


def fault_result(fault: str, message: str | None = None) -> ToolResult:
    """The simulated answer of a failing tool."""
    if fault == "empty":
        return ToolResult("", fault=fault)
    if fault == "malformed":
        return ToolResult('{"status": "ok", "data": [{"id": 1, "val', fault=fault)
    raw = message or _DEFAULT_MESSAGE.get(fault, fault)
    text = FAULT_TEXT[fault].format(message=json.dumps(raw, ensure_ascii=False), raw=raw)
    return ToolResult(text, is_error=True, fault=fault)


class CompiledMock:
    """A mock with its ``when`` matchers compiled once."""

    def __init__(self, mock: ToolMock, ctx: Context) -> None:
        self.rules: list[tuple[Matcher | None, MockRule]] = [
            (None if r.when is None else compile_value(r.when, ctx, extra=True), r)
            for r in mock.rules
        ]
        self.default = mock.default

    def answer(self, arguments: Any) -> ToolResult | None:
        """The first matching rule's answer, the default's, or None (fall through)."""
        for matcher, rule in self.rules:
            if matcher is None or matcher.check(arguments) is None:
                return _rule_result(rule)
        return None if self.default is None else _rule_result(self.default)


def _rule_result(rule: MockRule) -> ToolResult:
    if rule.fault is not None:
        return fault_result(rule.fault, rule.message)
    return result_of(rule.result)
