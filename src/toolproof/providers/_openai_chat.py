"""OpenAI Chat Completions, and the servers that speak it: OpenRouter, vLLM, Ollama, llama.cpp.

The wire format is sent over the shared :class:`HttpTransport`, not through
the ``openai`` SDK: the SDK costs several times more CPU per request and
retries on its own, while the runner owns retries.

Three providers share this module:

``openai``             api.openai.com, key ``OPENAI_API_KEY``.
``openrouter``         openrouter.ai, key ``OPENROUTER_API_KEY``, plus provider routing.
``openai-compatible``  any server at ``settings.base_url``; key from
                       ``settings.api_key_env`` when given, none otherwise.
"""

from __future__ import annotations

from typing import Any

from toolproof.providers._base import ProviderRequest
from toolproof.providers._common import (
    WireProvider,
    arguments_text,
    call_from_object,
    call_from_text,
    fill_call_ids,
    unexpected_body,
)
from toolproof.providers._request_fields import TOOL_NAME, Put, SettingsFormat
from toolproof.types import Message, Response, Tool, ToolCall, Usage

__all__ = ["OpenAIChatProvider", "OpenAICompatibleProvider", "OpenRouterProvider"]


def _chat_format(*fields: Put) -> SettingsFormat:
    """The Chat Completions settings: the same up to seed, then ``fields`` (per server)."""
    return SettingsFormat(
        tool_choice=("tool_choice",),
        choices={
            "auto": "auto",
            "required": "required",
            "none": "none",
            "tool": {"type": "function", "function": {"name": TOOL_NAME}},
        },
        parallel=("parallel_tool_calls",),
        fields=(Put("temperature", ("temperature",)), Put("seed", ("seed",)), *fields),
    )


class OpenAIChatProvider(WireProvider):
    """``openai:MODEL``: the Chat Completions API."""

    name = "openai"
    default_base_url: str | None = "https://api.openai.com/v1"
    key_env: tuple[str, ...] = ("OPENAI_API_KEY",)
    settings_format = _chat_format(
        Put("max_tokens", ("max_completion_tokens",)),
        Put("reasoning_effort", ("reasoning_effort",)),
    )

    def endpoint(self) -> str:
        return "chat/completions"

    def headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self._key}"} if self._key else {}

    # -- request -----------------------------------------------------------------

    def build_payload(self, request: ProviderRequest) -> dict[str, Any]:
        """The exact JSON body for one request."""
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [_message(m) for m in fill_call_ids(request.messages)],
        }
        if request.tools:
            payload["tools"] = [_tool(t) for t in request.tools]
        return self.put_settings(payload, request)

    # -- response ----------------------------------------------------------------

    def parse_response(self, body: Any, latency_ms: float, payload: Any) -> Response:
        """The canonical view of a Chat Completions body; ``raw`` is the body itself."""
        choices = body.get("choices") if isinstance(body, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise unexpected_body(self.name, body, payload, "the answer has no choices")
        choice = choices[0]
        if choice.get("finish_reason") == "error" or choice.get("error"):
            raise unexpected_body(self.name, body, payload, "the provider failed mid-answer")
        message = choice.get("message") or {}
        stop = choice.get("finish_reason")
        refusal = message.get("refusal") or ("content_filter" if stop == "content_filter" else None)
        return Response(
            text=_content_text(message.get("content")),
            tool_calls=[_call(tc) for tc in message.get("tool_calls") or []],
            refusal=refusal,
            stop_reason=stop,
            usage=_usage(body.get("usage")),
            latency_ms=latency_ms,
            model=body.get("model"),
            raw=body,
        )


class OpenRouterProvider(OpenAIChatProvider):
    """``openrouter:VENDOR/MODEL``: OpenRouter's Chat Completions, with provider routing."""

    name = "openrouter"
    default_base_url = "https://openrouter.ai/api/v1"
    key_env = ("OPENROUTER_API_KEY",)
    settings_format = _chat_format(
        Put("max_tokens", ("max_tokens",)),
        Put("reasoning_effort", ("reasoning", "effort")),
        # provider routing as written (an empty table is not sent), then require_parameters in it
        Put("provider", ("provider",), lambda routing: dict(routing) or None),
        Put("require_parameters", ("provider", "require_parameters")),
    )


class OpenAICompatibleProvider(OpenAIChatProvider):
    """``openai-compatible:NAME``: vLLM, Ollama, llama.cpp server, LiteLLM, at settings.base_url.

    These servers differ in small ways: a tool call may have no ``id``, and
    some return ``arguments`` as a JSON object rather than a string. Then
    ``raw_arguments`` is the JSON text of the object as returned (compact,
    keys in the order received) and ``Response.raw`` keeps the original.
    """

    name = "openai-compatible"
    default_base_url = None
    key_env = ()
    key_required = False
    settings_format = _chat_format(
        Put("max_tokens", ("max_tokens",)),
        Put("reasoning_effort", ("reasoning_effort",)),
    )


def _tool(tool: Tool) -> dict[str, Any]:
    function: dict[str, Any] = {"name": tool.name, "parameters": tool.parameters}
    if tool.description:
        function["description"] = tool.description
    if tool.strict is not None:
        function["strict"] = tool.strict
    return {"type": "function", "function": function}


def _message(msg: Message) -> dict[str, Any]:
    if msg.role == "tool":
        return {"role": "tool", "tool_call_id": msg.tool_call_id, "content": msg.content or ""}
    if msg.role == "assistant" and msg.tool_calls:
        return {
            "role": "assistant",
            "content": msg.content,
            "tool_calls": [_history_call(c) for c in msg.tool_calls],
        }
    return {"role": msg.role, "content": msg.content or ""}


def _history_call(call: ToolCall) -> dict[str, Any]:
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": arguments_text(call)},
    }


def _call(item: Any) -> ToolCall:
    item = item if isinstance(item, dict) else {}
    function = item.get("function") or {}
    name = str(function.get("name") or "")
    args = function.get("arguments")
    if args is None:
        return ToolCall(id=item.get("id"), name=name, parse_error="the call has no arguments")
    if isinstance(args, str):
        return call_from_text(item.get("id"), name, args)
    return call_from_object(item.get("id"), name, args)


def _content_text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content or None
    if isinstance(content, list):
        texts = [p.get("text", "") for p in content if isinstance(p, dict) and "text" in p]
        return "".join(texts) or None
    return None


def _usage(usage: Any) -> Usage | None:
    if not isinstance(usage, dict):
        return None
    return Usage(
        input_tokens=usage.get("prompt_tokens"), output_tokens=usage.get("completion_tokens")
    )
