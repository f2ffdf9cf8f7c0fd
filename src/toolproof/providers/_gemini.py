"""Google Gemini API (``gemini:MODEL``): ``POST /v1beta/models/{model}:generateContent``.

The documented REST format is sent over the shared transport, not through
``google-genai``: the SDK adds its own client, retries and CPU per request,
and the REST format is small. Tools are sent as ``functionDeclarations``
with ``parametersJsonSchema``, so the suite's JSON Schema goes out as
written instead of being converted to Gemini's OpenAPI subset.

Gemini 3 models reject a conversation that replays one of their function
calls without the ``thoughtSignature`` that came with it. The provider
remembers the signatures it received and attaches them when the same call
is sent back; a call it never produced (one written in a suite) is sent
with the documented placeholder signature instead.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

from toolproof.providers._base import ModelSettings, ProviderRequest
from toolproof.providers._common import (
    SYNTHETIC_ID_PREFIX,
    WireProvider,
    arguments_for_history,
    call_from_object,
    fill_call_ids,
    system_text,
    unexpected_body,
)
from toolproof.providers._request_fields import TOOL_NAME, Put, Refusal, SettingsFormat
from toolproof.providers._transport import Transport
from toolproof.types import Message, Response, Tool, ToolCall, Usage

__all__ = ["REFUSAL_REASONS", "GeminiProvider"]

#: finishReason / blockReason values that mean the answer was withheld.
REFUSAL_REASONS = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
    }
)
PLACEHOLDER_SIGNATURE = "skip_thought_signature_validator"
_MAX_SIGNATURES = 50_000


class GeminiProvider(WireProvider):
    """``gemini:MODEL``: key ``GEMINI_API_KEY`` (or ``GOOGLE_API_KEY``)."""

    name = "gemini"
    default_base_url = "https://generativelanguage.googleapis.com"

    key_env = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    settings_format = SettingsFormat(
        tool_choice=("toolConfig", "functionCallingConfig"),
        choices={
            "auto": {"mode": "AUTO"},
            "required": {"mode": "ANY"},
            "none": {"mode": "NONE"},
            "tool": {"mode": "ANY", "allowedFunctionNames": [TOOL_NAME]},
        },
        fields=(
            Put("temperature", ("generationConfig", "temperature")),
            Put("max_tokens", ("generationConfig", "maxOutputTokens")),
            Put("reasoning_effort", ("generationConfig", "thinkingConfig", "thinkingLevel")),
        ),
        refusals=(
            Refusal(
                "reasoning_effort",
                frozenset({"none"}),
                "provider {provider!r} has no reasoning_effort 'none'; use minimal, low, medium "
                "or high, or set generationConfig.thinkingConfig through extra_body",
            ),
            # Gemini may always answer with several calls; the setting is refused, not dropped
            Refusal(
                "parallel_tool_calls",
                frozenset({False}),
                "provider {provider!r} cannot turn off parallel function calls; "
                "unset parallel_tool_calls for this model",
            ),
        ),
    )

    def __init__(self, model: str, settings: ModelSettings, transport: Transport) -> None:
        super().__init__(model.removeprefix("models/"), settings, transport)
        self._signatures: OrderedDict[str, str] = OrderedDict()

    def endpoint(self) -> str:
        return f"v1beta/models/{self.model}:generateContent"

    def headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self._key or ""}

    # -- request -----------------------------------------------------------------

    def build_payload(self, request: ProviderRequest) -> dict[str, Any]:
        """The exact JSON body for one request."""
        payload: dict[str, Any] = {"contents": self._contents(request.messages)}
        system = system_text(request.messages)
        if system is not None:
            payload["systemInstruction"] = {"parts": [{"text": system}]}
        if request.tools:
            payload["tools"] = [{"functionDeclarations": [_declaration(t) for t in request.tools]}]
        return self.put_settings(payload, request)

    def _contents(self, messages: list[Message]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for msg in fill_call_ids(messages):
            if msg.role == "system":
                continue
            role = "model" if msg.role == "assistant" else "user"
            parts = self._parts(msg)
            if out and out[-1]["role"] == role and msg.role == "tool":
                out[-1]["parts"].extend(parts)
            else:
                out.append({"role": role, "parts": parts})
        return out

    def _parts(self, msg: Message) -> list[dict[str, Any]]:
        if msg.role == "tool":
            return [{"functionResponse": _function_response(msg)}]
        parts: list[dict[str, Any]] = []
        if msg.content:
            parts.append({"text": msg.content})
        for i, call in enumerate(msg.tool_calls):
            part: dict[str, Any] = {"functionCall": _history_call(call)}
            signature = self._signatures.get(_signature_key(call))
            if signature is None and i == 0:
                signature = PLACEHOLDER_SIGNATURE
            if signature is not None:
                part["thoughtSignature"] = signature
            parts.append(part)
        return parts

    # -- response ----------------------------------------------------------------

    def parse_response(self, body: Any, latency_ms: float, payload: Any) -> Response:
        """The canonical view of a generateContent body; ``raw`` is the body itself."""
        if not isinstance(body, dict):
            raise unexpected_body(self.name, body, payload, "the answer is not an object")
        candidates = body.get("candidates")
        if not isinstance(candidates, list) or not candidates:
            return self._blocked(body, latency_ms, payload)
        candidate = candidates[0] if isinstance(candidates[0], dict) else {}
        texts: list[str] = []
        calls: list[ToolCall] = []
        for part in (candidate.get("content") or {}).get("parts") or []:
            self._read_part(part, texts, calls)
        reason = candidate.get("finishReason")
        refusal = None
        if reason in REFUSAL_REASONS:
            refusal = str(candidate.get("finishMessage") or reason)
        return Response(
            text="".join(texts) or None,
            tool_calls=calls,
            refusal=refusal,
            stop_reason=reason,
            usage=_usage(body.get("usageMetadata")),
            latency_ms=latency_ms,
            model=body.get("modelVersion"),
            raw=body,
        )

    def _blocked(self, body: dict[str, Any], latency_ms: float, payload: Any) -> Response:
        feedback = body.get("promptFeedback")
        reason = feedback.get("blockReason") if isinstance(feedback, dict) else None
        if reason is None:
            raise unexpected_body(self.name, body, payload, "the answer has no candidates")
        return Response(
            refusal=str(feedback.get("blockReasonMessage") or reason) if feedback else None,
            stop_reason=str(reason),
            usage=_usage(body.get("usageMetadata")),
            latency_ms=latency_ms,
            model=body.get("modelVersion"),
            raw=body,
        )

    def _read_part(self, part: Any, texts: list[str], calls: list[ToolCall]) -> None:
        if not isinstance(part, dict):
            return
        if "text" in part and not part.get("thought"):
            texts.append(str(part["text"]))
        call = part.get("functionCall")
        if not isinstance(call, dict):
            return
        name = str(call.get("name") or "")
        # Gemini leaves out ``args`` for a call without arguments.
        tool_call = call_from_object(call.get("id"), name, call.get("args", {}))
        calls.append(tool_call)
        if isinstance(part.get("thoughtSignature"), str):
            self._remember(tool_call, part["thoughtSignature"])

    def _remember(self, call: ToolCall, signature: str) -> None:
        self._signatures[_signature_key(call)] = signature
        while len(self._signatures) > _MAX_SIGNATURES:
            self._signatures.popitem(last=False)


def _signature_key(call: ToolCall) -> str:
    args = arguments_for_history(call)
    return f"{call.name}\x00{json.dumps(args, sort_keys=True, ensure_ascii=False)}"


def _declaration(tool: Tool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out["parametersJsonSchema"] = tool.parameters
    return out


def _history_call(call: ToolCall) -> dict[str, Any]:
    out: dict[str, Any] = {"name": call.name, "args": arguments_for_history(call)}
    if call.id is not None and not call.id.startswith(SYNTHETIC_ID_PREFIX):
        out["id"] = call.id
    return out


def _function_response(msg: Message) -> dict[str, Any]:
    key = "error" if msg.is_error else "result"
    response: Any = {key: msg.content or ""}
    if not msg.is_error and msg.content:
        try:
            parsed = json.loads(msg.content)
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, dict):
            response = parsed
    out: dict[str, Any] = {"name": msg.name or "", "response": response}
    if msg.tool_call_id is not None and not msg.tool_call_id.startswith(SYNTHETIC_ID_PREFIX):
        out["id"] = msg.tool_call_id
    return out


def _usage(meta: Any) -> Usage | None:
    if not isinstance(meta, dict):
        return None
    output = meta.get("candidatesTokenCount")
    if meta.get("thoughtsTokenCount") is not None:
        output = (output or 0) + meta["thoughtsTokenCount"]
    return Usage(input_tokens=meta.get("promptTokenCount"), output_tokens=output)
