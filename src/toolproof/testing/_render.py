"""Render a canned :class:`Reply` in each provider's documented response format."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from typing import Any

from toolproof.testing._script import Call, Reply

__all__ = ["RENDERERS", "wire_format"]

_ids = itertools.count(1)


def wire_format(path: str) -> str | None:
    """Which API a request path belongs to, or None."""
    if path.endswith("/chat/completions"):
        return "openai-chat"
    if path.endswith("/responses"):
        return "openai-responses"
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith(":generateContent"):
        return "gemini"
    return None


def _text_args(call: Call) -> str:
    if isinstance(call.arguments, str):
        return call.arguments
    return json.dumps(call.arguments, ensure_ascii=False)


def _object_args(call: Call) -> Any:
    if not isinstance(call.arguments, str):
        return call.arguments
    try:
        return json.loads(call.arguments)
    except ValueError:
        return call.arguments


def openai_chat(reply: Reply, model: str) -> dict[str, Any]:
    n = next(_ids)
    message: dict[str, Any] = {"role": "assistant", "content": reply.text, "refusal": reply.refusal}
    if reply.calls:
        message["tool_calls"] = [
            {
                "id": c.id or f"call_stub{n}_{i}",
                "type": "function",
                "function": {"name": c.name, "arguments": _text_args(c)},
            }
            for i, c in enumerate(reply.calls)
        ]
    finish = reply.stop_reason or ("tool_calls" if reply.calls else "stop")
    return {
        "id": f"chatcmpl-stub{n}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": reply.input_tokens,
            "completion_tokens": reply.output_tokens,
            "total_tokens": reply.input_tokens + reply.output_tokens,
        },
    }


def openai_responses(reply: Reply, model: str) -> dict[str, Any]:
    n = next(_ids)
    output: list[dict[str, Any]] = []
    content: list[dict[str, Any]] = []
    if reply.text is not None:
        content.append({"type": "output_text", "text": reply.text, "annotations": []})
    if reply.refusal is not None:
        content.append({"type": "refusal", "refusal": reply.refusal})
    if content:
        output.append(
            {
                "type": "message",
                "id": f"msg_stub{n}",
                "status": "completed",
                "role": "assistant",
                "content": content,
            }
        )
    for i, c in enumerate(reply.calls):
        output.append(
            {
                "type": "function_call",
                "id": f"fc_stub{n}_{i}",
                "call_id": c.id or f"call_stub{n}_{i}",
                "name": c.name,
                "arguments": _text_args(c),
                "status": "completed",
            }
        )
    incomplete = reply.stop_reason is not None
    return {
        "id": f"resp_stub{n}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "incomplete" if incomplete else "completed",
        "incomplete_details": {"reason": reply.stop_reason} if incomplete else None,
        "error": None,
        "model": model,
        "output": output,
        "usage": {
            "input_tokens": reply.input_tokens,
            "output_tokens": reply.output_tokens,
            "total_tokens": reply.input_tokens + reply.output_tokens,
        },
    }


def anthropic(reply: Reply, model: str) -> dict[str, Any]:
    n = next(_ids)
    content: list[dict[str, Any]] = []
    text = reply.refusal if reply.refusal is not None else reply.text
    if text is not None:
        content.append({"type": "text", "text": text})
    for i, c in enumerate(reply.calls):
        content.append(
            {
                "type": "tool_use",
                "id": c.id or f"toolu_stub{n}_{i}",
                "name": c.name,
                "input": _object_args(c),
            }
        )
    stop = reply.stop_reason or (
        "refusal" if reply.refusal is not None else "tool_use" if reply.calls else "end_turn"
    )
    return {
        "id": f"msg_stub{n}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
    }


def gemini(reply: Reply, model: str) -> dict[str, Any]:
    n = next(_ids)
    candidate: dict[str, Any] = {"index": 0}
    if reply.refusal is not None:
        candidate["finishReason"] = reply.stop_reason or "SAFETY"
    else:
        parts: list[dict[str, Any]] = []
        if reply.text is not None:
            parts.append({"text": reply.text})
        for i, c in enumerate(reply.calls):
            call: dict[str, Any] = {"name": c.name, "args": _object_args(c)}
            if c.id is not None:
                call["id"] = c.id
            part: dict[str, Any] = {"functionCall": call}
            if i == 0:
                part["thoughtSignature"] = f"stub-signature-{n}"
            parts.append(part)
        candidate["content"] = {"role": "model", "parts": parts}
        candidate["finishReason"] = reply.stop_reason or "STOP"
    return {
        "candidates": [candidate],
        "usageMetadata": {
            "promptTokenCount": reply.input_tokens,
            "candidatesTokenCount": reply.output_tokens,
            "totalTokenCount": reply.input_tokens + reply.output_tokens,
        },
        "modelVersion": model,
        "responseId": f"stub{n}",
    }


RENDERERS: dict[str, Callable[[Reply, str], dict[str, Any]]] = {
    "openai-chat": openai_chat,
    "openai-responses": openai_responses,
    "anthropic": anthropic,
    "gemini": gemini,
}
