"""OpenAI Responses API (``openai-responses:MODEL``), over the shared transport.

Tools are flat (``{"type": "function", "name": ...}``). The Responses API
treats a tool with no ``strict`` as strict, which makes every optional
parameter mandatory, so ``strict`` is always sent: ``true`` only when the
tool asks for it. Requests are sent with ``store: false``: toolproof keeps
its own records and rebuilds each conversation from them.
"""

from __future__ import annotations

from typing import Any

from toolproof.providers._base import ProviderRequest
from toolproof.providers._common import (
    WireProvider,
    arguments_text,
    call_from_text,
    fill_call_ids,
    unexpected_body,
)
from toolproof.providers._request_fields import TOOL_NAME, Put, SettingsFormat
from toolproof.types import Message, Response, Tool, ToolCall, Usage

__all__ = ["OpenAIResponsesProvider"]


class OpenAIResponsesProvider(WireProvider):
    """``openai-responses:MODEL``: the Responses API, key ``OPENAI_API_KEY``."""

    name = "openai-responses"
    default_base_url = "https://api.openai.com/v1"
    key_env = ("OPENAI_API_KEY",)
    settings_format = SettingsFormat(
        tool_choice=("tool_choice",),
        choices={
            "auto": "auto",
            "required": "required",
            "none": "none",
            "tool": {"type": "function", "name": TOOL_NAME},
        },
        parallel=("parallel_tool_calls",),
        fields=(
            Put("temperature", ("temperature",)),
            Put("max_tokens", ("max_output_tokens",)),
            Put("reasoning_effort", ("reasoning", "effort")),
        ),
    )

    def endpoint(self) -> str:
        return "responses"

    def headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self._key}"}

    def build_payload(self, request: ProviderRequest) -> dict[str, Any]:
        """The exact JSON body for one request."""
        items: list[dict[str, Any]] = []
        for msg in fill_call_ids(request.messages):
            items.extend(_items(msg))
        payload: dict[str, Any] = {"model": self.model, "input": items, "store": False}
        if request.tools:
            payload["tools"] = [_tool(t) for t in request.tools]
        return self.put_settings(payload, request)

    def parse_response(self, body: Any, latency_ms: float, payload: Any) -> Response:
        """The canonical view of a Responses body; ``raw`` is the body itself."""
        output = body.get("output") if isinstance(body, dict) else None
        if not isinstance(output, list):
            raise unexpected_body(self.name, body, payload, "the answer has no output")
        if body.get("status") == "failed" or body.get("error"):
            raise unexpected_body(self.name, body, payload, "the response failed")
        texts: list[str] = []
        refusals: list[str] = []
        calls: list[ToolCall] = []
        for item in output:
            _read_item(item, texts, refusals, calls)
        return Response(
            text="".join(texts) or None,
            tool_calls=calls,
            refusal="".join(refusals) or None,
            stop_reason=_stop_reason(body),
            usage=_usage(body.get("usage")),
            latency_ms=latency_ms,
            model=body.get("model"),
            raw=body,
        )


def _tool(tool: Tool) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "function", "name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out["parameters"] = tool.parameters
    out["strict"] = tool.strict is True
    return out


def _items(msg: Message) -> list[dict[str, Any]]:
    if msg.role == "tool":
        return [
            {
                "type": "function_call_output",
                "call_id": msg.tool_call_id,
                "output": msg.content or "",
            }
        ]
    out: list[dict[str, Any]] = []
    if msg.content or not msg.tool_calls:
        out.append({"role": msg.role, "content": msg.content or ""})
    for call in msg.tool_calls:
        out.append(
            {
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": arguments_text(call),
            }
        )
    return out


def _read_item(item: Any, texts: list[str], refusals: list[str], calls: list[ToolCall]) -> None:
    if not isinstance(item, dict):
        return
    kind = item.get("type")
    if kind == "function_call":
        args = item.get("arguments")
        name = str(item.get("name") or "")
        if isinstance(args, str):
            calls.append(call_from_text(item.get("call_id"), name, args))
        else:
            calls.append(ToolCall(id=item.get("call_id"), name=name, parse_error="no arguments"))
    elif kind == "message":
        for part in item.get("content") or []:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "output_text":
                texts.append(str(part.get("text") or ""))
            elif part.get("type") == "refusal":
                refusals.append(str(part.get("refusal") or ""))


def _stop_reason(body: dict[str, Any]) -> str | None:
    details = body.get("incomplete_details")
    if isinstance(details, dict) and details.get("reason"):
        return str(details["reason"])
    status = body.get("status")
    return str(status) if status is not None else None


def _usage(usage: Any) -> Usage | None:
    if not isinstance(usage, dict):
        return None
    return Usage(input_tokens=usage.get("input_tokens"), output_tokens=usage.get("output_tokens"))
