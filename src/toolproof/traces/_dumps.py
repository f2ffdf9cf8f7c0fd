"""The import's cases and records as plain dicts, in the exact shape the typed models dump to.

An import writes a case and a record per chat span: building a ``Case`` and a
``Record`` for each (and dumping them) cost more than everything else it does
but redaction. What goes in is already typed (the ``Message`` and ``ToolCall``
of a span were validated when the span was read; the rest is toolproof's own
values), so the dicts are built here directly, key for key as
``model_dump(mode="json", exclude_defaults=True, exclude_none=True)`` (a case)
and ``model_dump(mode="json", exclude_none=True)`` (a record) write them.
``tests/traces/test_dumps.py`` holds each builder to the model's own dump.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from pydantic import TypeAdapter

from toolproof.types import Message, ToolCall

__all__ = [
    "call_case",
    "call_record",
    "datetime_json",
    "json_value",
    "message_case",
    "message_record",
]

_ANY: TypeAdapter[Any] = TypeAdapter(Any)
_PLAIN = (str, int, bool)


def json_value(value: Any, where: str = "") -> Any:
    """A value of an ``Any`` field as ``mode="json"`` dumps it (NaN and infinities: None).

    ``where`` names the field in the error of a value nested too deeply to write."""
    cls = value.__class__
    if value is None or cls in _PLAIN:
        return value
    if cls is float:
        return value if math.isfinite(value) else None
    try:
        return _ANY.dump_python(value, mode="json")
    except ValueError as exc:
        if "depth" not in str(exc):
            raise
        raise ValueError(f"{where or 'a value'}: nested too deeply to write ({exc})") from None


def datetime_json(moment: datetime) -> str:
    """A timezone-aware datetime as ``mode="json"`` dumps it (UTC as ``Z``)."""
    dumped: str = _ANY.dump_python(moment, mode="json")
    return dumped


def call_case(call: ToolCall) -> dict[str, Any]:
    """``call.model_dump(mode="json", exclude_defaults=True, exclude_none=True)``."""
    out: dict[str, Any] = {}
    if call.id is not None:
        out["id"] = call.id
    out["name"] = call.name
    if call.raw_arguments is not None:
        out["raw_arguments"] = call.raw_arguments
    if call.arguments is not None:
        out["arguments"] = json_value(call.arguments, f"the arguments of a call of '{call.name}'")
    if call.parse_error is not None:
        out["parse_error"] = call.parse_error
    if call.extracted_from_text:
        out["extracted_from_text"] = True
    return out


def call_record(call: ToolCall) -> dict[str, Any]:
    """``call.model_dump(mode="json", exclude_none=True)``: :func:`call_case` with
    ``extracted_from_text`` always written (last in both)."""
    out = call_case(call)
    out["extracted_from_text"] = call.extracted_from_text
    return out


def message_case(m: Message) -> dict[str, Any]:
    """``m.model_dump(mode="json", exclude_defaults=True, exclude_none=True)``."""
    out: dict[str, Any] = {"role": m.role}
    if m.content is not None:
        out["content"] = m.content
    if m.tool_calls:
        out["tool_calls"] = [call_case(c) for c in m.tool_calls]
    if m.tool_call_id is not None:
        out["tool_call_id"] = m.tool_call_id
    if m.name is not None:
        out["name"] = m.name
    if m.is_error:
        out["is_error"] = True
    return out


def message_record(
    role: str,
    content: str | None,
    calls: list[ToolCall],
    tool_call_id: str | None = None,
    name: str | None = None,
    is_error: bool = False,
) -> dict[str, Any]:
    """``Message(...).model_dump(mode="json", exclude_none=True)``, from its fields."""
    out: dict[str, Any] = {"role": role}
    if content is not None:
        out["content"] = content
    out["tool_calls"] = [call_record(c) for c in calls]
    if tool_call_id is not None:
        out["tool_call_id"] = tool_call_id
    if name is not None:
        out["name"] = name
    out["is_error"] = is_error
    return out
