"""Turn what an agent or a script returns into a canonical Response.

Accepted shapes, recognised in this order:

* a :class:`~toolproof.types.Response`, kept as it is;
* a string: the reply text;
* a list: Anthropic-style content blocks (``text`` and ``tool_use``);
* a mapping with ``choices``: an OpenAI Chat Completions body (first choice);
* a mapping with ``role: assistant``: an OpenAI-style assistant message;
* a mapping with ``type: message`` and a ``content`` list: an Anthropic message;
* any other mapping: a canonical Response (``text``, ``tool_calls``, ...).

Argument strings are parsed (normalisation); a string that is not JSON is
kept with ``parse_error`` set. Nothing is repaired. The value received is
kept in ``raw``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from toolproof.records import parse_arguments
from toolproof.types import Response, ToolCall, Usage

__all__ = ["NotAResponse", "parse_arguments", "to_response", "tool_call"]


class NotAResponse(ValueError):
    """The value cannot be read as a model answer."""


def tool_call(data: Mapping[str, Any]) -> ToolCall:
    """A canonical call from ``{name, raw_arguments | arguments, id}``."""
    if not isinstance(data.get("name"), str):
        raise NotAResponse(f"a tool call needs a 'name': {dict(data)!r}")
    fields = {k: v for k, v in data.items() if k in ToolCall.model_fields}
    raw = fields.get("raw_arguments")
    if raw is not None and "arguments" not in fields and "parse_error" not in fields:
        fields["arguments"], fields["parse_error"] = parse_arguments(str(raw))
    elif raw is None and "arguments" in fields:
        fields["raw_arguments"] = json.dumps(fields["arguments"], ensure_ascii=False)
    try:
        return ToolCall.model_validate(fields)
    except ValidationError as exc:
        raise NotAResponse(f"bad tool call: {exc.errors()[0]['msg']}") from None


def to_response(value: Any) -> Response:
    """Read ``value`` as a Response; raise :class:`NotAResponse` when it is none."""
    if isinstance(value, Response):
        return value
    if isinstance(value, str):
        return Response(text=value, raw=value)
    if isinstance(value, list):
        return _from_anthropic_blocks(value, raw=value)
    if isinstance(value, Mapping):
        return _from_mapping(value)
    raise NotAResponse(f"cannot read a {type(value).__name__} as a model answer")


def _from_mapping(value: Mapping[str, Any]) -> Response:
    if isinstance(value.get("choices"), list) and value["choices"]:
        resp = _from_openai_message(value["choices"][0].get("message") or {}, raw=dict(value))
        usage = value.get("usage") or {}
        return resp.model_copy(
            update={
                "model": value.get("model"),
                "stop_reason": value["choices"][0].get("finish_reason"),
                "usage": Usage(
                    input_tokens=usage.get("prompt_tokens"),
                    output_tokens=usage.get("completion_tokens"),
                )
                if usage
                else None,
            }
        )
    if value.get("role") == "assistant" and value.get("type") != "message":
        return _from_openai_message(value, raw=dict(value))
    if value.get("type") == "message" and isinstance(value.get("content"), list):
        resp = _from_anthropic_blocks(value["content"], raw=dict(value))
        return resp.model_copy(update={"stop_reason": value.get("stop_reason")})
    return _from_canonical(value)


def _from_canonical(value: Mapping[str, Any]) -> Response:
    data = dict(value)
    unknown = sorted(set(data) - set(Response.model_fields))
    if unknown:
        raise NotAResponse(f"unknown response field '{unknown[0]}'")
    data["tool_calls"] = [tool_call(c) for c in data.get("tool_calls") or []]
    data.setdefault("raw", dict(value))
    try:
        return Response.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise NotAResponse(f"{where}: {err['msg']}") from None


def _from_openai_message(msg: Mapping[str, Any], raw: Any) -> Response:
    calls = []
    for item in msg.get("tool_calls") or []:
        fn = item.get("function") or {}
        arguments = fn.get("arguments")
        raw_args = arguments if isinstance(arguments, str) else json.dumps(arguments)
        calls.append(
            tool_call({"id": item.get("id"), "name": fn.get("name"), "raw_arguments": raw_args})
        )
    content = msg.get("content")
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, Mapping)) or None
    return Response(text=content, tool_calls=calls, refusal=msg.get("refusal"), raw=raw)


def _from_anthropic_blocks(blocks: list[Any], raw: Any) -> Response:
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in blocks:
        if not isinstance(block, Mapping):
            raise NotAResponse(f"a content block must be a mapping, not {type(block).__name__}")
        if block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_use":
            args = block.get("input")
            calls.append(
                tool_call(
                    {
                        "id": block.get("id"),
                        "name": block.get("name"),
                        "raw_arguments": json.dumps(args, ensure_ascii=False),
                        "arguments": args,
                    }
                )
            )
    return Response(text="".join(texts) or None, tool_calls=calls, raw=raw)
