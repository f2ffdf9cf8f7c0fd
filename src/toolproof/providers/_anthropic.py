"""Anthropic Messages API (``anthropic:MODEL``), over the shared transport.

System messages go to the top-level ``system``; tool results are
``tool_result`` blocks in a user turn (consecutive results share one turn);
``max_tokens`` is required by the API, so 1024 is sent when unset. A
``tool_use`` block's ``input`` arrives as an object: ``raw_arguments`` is
its JSON text as received (compact, keys in the order received).
"""

from __future__ import annotations

from typing import Any

from toolproof.providers._base import ProviderRequest
from toolproof.providers._common import (
    WireProvider,
    arguments_for_history,
    call_from_object,
    fill_call_ids,
    system_text,
    unexpected_body,
)
from toolproof.providers._request_fields import TOOL_NAME, Put, Refusal, SettingsFormat
from toolproof.types import Message, Response, Tool, ToolCall, Usage

__all__ = ["DEFAULT_MAX_TOKENS", "AnthropicProvider"]

DEFAULT_MAX_TOKENS = 1024
API_VERSION = "2023-06-01"


class AnthropicProvider(WireProvider):
    """``anthropic:MODEL``: key ``ANTHROPIC_API_KEY``."""

    name = "anthropic"
    default_base_url = "https://api.anthropic.com/v1"
    key_env = ("ANTHROPIC_API_KEY",)
    settings_format = SettingsFormat(
        tool_choice=("tool_choice",),
        choices={
            "auto": {"type": "auto"},
            "required": {"type": "any"},
            "none": {"type": "none"},
            "tool": {"type": "tool", "name": TOOL_NAME},
        },
        parallel=("tool_choice", "disable_parallel_tool_use"),
        negate=True,
        parallel_skip=frozenset({"none"}),
        fields=(
            Put("max_tokens", ("max_tokens",)),
            Put("temperature", ("temperature",)),
            Put("reasoning_effort", ("output_config", "effort")),
        ),
        refusals=(
            Refusal(
                "reasoning_effort",
                frozenset({"none", "minimal"}),
                "provider {provider!r} takes reasoning_effort low, medium or high, not {value!r}",
            ),
        ),
    )

    def endpoint(self) -> str:
        return "messages"

    def headers(self) -> dict[str, str]:
        return {"x-api-key": self._key or "", "anthropic-version": API_VERSION}

    def build_payload(self, request: ProviderRequest) -> dict[str, Any]:
        """The exact JSON body for one request."""
        # max_tokens is required: sent second, with the default unless the settings give one
        payload: dict[str, Any] = {"model": self.model, "max_tokens": DEFAULT_MAX_TOKENS}
        system = system_text(request.messages)
        if system is not None:
            payload["system"] = system
        payload["messages"] = _messages(fill_call_ids(request.messages))
        if request.tools:
            payload["tools"] = [_tool(t) for t in request.tools]
        return self.put_settings(payload, request)

    def parse_response(self, body: Any, latency_ms: float, payload: Any) -> Response:
        """The canonical view of a Messages body; ``raw`` is the body itself."""
        content = body.get("content") if isinstance(body, dict) else None
        if not isinstance(content, list) or body.get("type") == "error":
            raise unexpected_body(self.name, body, payload, "the answer has no content")
        texts: list[str] = []
        calls: list[ToolCall] = []
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                texts.append(str(block.get("text") or ""))
            elif block.get("type") == "tool_use":
                name = str(block.get("name") or "")
                calls.append(call_from_object(block.get("id"), name, block.get("input")))
        text = "".join(texts) or None
        stop = body.get("stop_reason")
        return Response(
            text=text,
            tool_calls=calls,
            refusal=(text or "refusal") if stop == "refusal" else None,
            stop_reason=stop,
            usage=_usage(body.get("usage")),
            latency_ms=latency_ms,
            model=body.get("model"),
            raw=body,
        )


def _tool(tool: Tool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out["input_schema"] = tool.parameters
    if tool.strict is not None:
        out["strict"] = tool.strict
    return out


def _messages(messages: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for msg in messages:
        if msg.role == "system":
            continue
        role = "assistant" if msg.role == "assistant" else "user"
        blocks = _blocks(msg)
        if out and out[-1]["role"] == role == "user":
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


def _blocks(msg: Message) -> list[dict[str, Any]]:
    if msg.role == "tool":
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": msg.tool_call_id,
            "content": msg.content or "",
        }
        if msg.is_error:
            block["is_error"] = True
        return [block]
    blocks: list[dict[str, Any]] = []
    if msg.content:
        blocks.append({"type": "text", "text": msg.content})
    for call in msg.tool_calls:
        blocks.append(
            {
                "type": "tool_use",
                "id": call.id,
                "name": call.name,
                "input": arguments_for_history(call),
            }
        )
    return blocks


def _usage(usage: Any) -> Usage | None:
    if not isinstance(usage, dict):
        return None
    return Usage(input_tokens=usage.get("input_tokens"), output_tokens=usage.get("output_tokens"))
