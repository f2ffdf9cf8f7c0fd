from typing import Any

import pytest

from toolproof.grade import Scorer
from toolproof.records import tool_call_from_raw
from toolproof.types import Response, Suite, ToolCall, Verdict

TOOLS: list[dict[str, Any]] = [
    {
        "name": "lookup_order",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string", "pattern": "^ORD-[0-9]{6}$"}},
            "required": ["order_id"],
            "additionalProperties": False,
        },
    },
    {
        "name": "search_orders",
        "parameters": {
            "type": "object",
            "properties": {
                "customer": {"type": "string"},
                "status": {"type": "string", "enum": ["open", "shipped"]},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50},
            },
            "required": ["customer"],
            "additionalProperties": False,
        },
        "match": {"customer": {"use": "normalized", "ignore_diacritics": True}},
    },
    {
        "name": "search",
        "parameters": {
            "type": "object",
            "properties": {"q": {"type": "string"}, "lang": {"type": "string"}},
            "required": ["q"],
        },
    },
    {
        "name": "cancel_order",
        "risk": "critical",
        "effect": "destructive",
        "requires_confirmation": True,
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}},
            "required": ["order_id"],
        },
    },
]


def make_suite(cases: list[dict[str, Any]], **extra: Any) -> Suite:
    return Suite.model_validate(
        {
            "name": "t",
            "tools": TOOLS,
            "cases": cases,
            "now": "2026-09-19T10:00:00",
            "timezone": "Europe/Prague",
            **extra,
        }
    )


def call(name: str, raw: str) -> ToolCall:
    return tool_call_from_raw(name, raw)


def reply(text: str | None = None, *calls: ToolCall, refusal: str | None = None) -> Response:
    return Response(text=text, tool_calls=list(calls), refusal=refusal)


_LAST: list[Scorer] = []


def diff(verdict: Verdict) -> str:
    """The diff of a verdict made by the ``grade`` fixture's latest scorer."""
    return _LAST[-1].diff(verdict)


@pytest.fixture
def grade() -> Any:
    def _grade(case: dict[str, Any], response: Response, **extra: Any) -> Any:
        case = {"id": "c", "prompt": "p", **case}
        scorer = Scorer(make_suite([case], **extra))
        _LAST[:] = [scorer]
        return scorer.grade_response("c", response)

    return _grade
