"""Small pieces every wire-format adapter shares: keys, argument parsing, the common fields.

Parsing a JSON argument string is normalisation; nothing here repairs,
coerces or fills in what the model produced.
"""

from __future__ import annotations

import json
import os
from abc import abstractmethod
from typing import Any

from toolproof._shared.loaded_keys import remember_secret
from toolproof.errors import UserError
from toolproof.providers._base import (
    Exchange,
    ModelSettings,
    Provider,
    ProviderRequest,
    TransportError,
)
from toolproof.providers._request_fields import SettingsFormat, put_settings, refuse
from toolproof.providers._transport import (
    RepeatedKeys,
    Transport,
    UnreadableBody,
    UnreadableNumber,
    classify_status,
    parse_rate_limits,
)
from toolproof.types import Message, Outcome, Response, ToolCall

__all__ = [
    "SYNTHETIC_ID_PREFIX",
    "WireProvider",
    "api_key",
    "arguments_for_history",
    "arguments_text",
    "call_from_object",
    "call_from_text",
    "fill_call_ids",
    "join_url",
    "merge_extra",
    "system_text",
    "unexpected_body",
]

#: Prefix of the ids :func:`fill_call_ids` invents for calls written without one.
SYNTHETIC_ID_PREFIX = "toolproof_call_"


def api_key(provider: str, env_names: tuple[str, ...]) -> str:
    """The first non-empty key among the environment variables, or a UserError naming them."""
    for name in env_names:
        value = os.environ.get(name, "").strip()
        if value:
            remember_secret(value)  # redacted from everything toolproof writes
            return value
    wanted = " or ".join(env_names)
    raise UserError(
        f"provider {provider!r} needs an API key: set the environment variable {wanted}"
    )


def join_url(base: str, path: str) -> str:
    return base.rstrip("/") + "/" + path.lstrip("/")


def call_from_text(call_id: str | None, name: str, raw: str) -> ToolCall:
    """A call whose arguments arrived as text: keep the text, parse it, never raise."""
    from toolproof.records import tool_call_from_raw

    return tool_call_from_raw(name, raw, call_id)


def call_from_object(call_id: str | None, name: str, value: Any) -> ToolCall:
    """A call whose arguments arrived as a JSON value: ``raw_arguments`` is its JSON text.

    A string value is taken as the argument text itself (some servers send
    that), so it is parsed like text rather than wrapped again.
    """
    if isinstance(value, UnreadableNumber) or _holds_unreadable(value):
        # a number toolproof cannot keep as sent, a key named twice: the text as sent,
        # parsed as argument text is
        # (the model's invalid output, as in arguments that arrive as a string)
        try:
            text = _text_as_sent(value)
        except RecursionError:
            return ToolCall(id=call_id, name=name, parse_error="nested too deeply to parse")
        return call_from_text(call_id, name, text)
    if isinstance(value, str):
        return call_from_text(call_id, name, value)
    raw = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return ToolCall(id=call_id, name=name, raw_arguments=raw, arguments=value)


def _holds_unreadable(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, UnreadableNumber | RepeatedKeys):
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _text_as_sent(value: Any) -> str:
    """Compact JSON text of ``value``, each :class:`UnreadableNumber` written as the number."""
    if isinstance(value, UnreadableNumber):
        return str.__str__(value)
    if isinstance(value, RepeatedKeys):
        pairs = value.pairs
        return (
            "{"
            + ",".join(json.dumps(k, ensure_ascii=False) + ":" + _text_as_sent(v) for k, v in pairs)
            + "}"
        )
    if isinstance(value, dict):
        return (
            "{"
            + ",".join(
                json.dumps(k, ensure_ascii=False) + ":" + _text_as_sent(v) for k, v in value.items()
            )
            + "}"
        )
    if isinstance(value, list):
        return "[" + ",".join(_text_as_sent(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def arguments_for_history(call: ToolCall) -> Any:
    """The arguments of an earlier call, as a JSON value, to send back in a conversation."""
    if call.arguments is not None or call.raw_arguments is None:
        return call.arguments if call.arguments is not None else {}
    try:
        return json.loads(call.raw_arguments)
    except (ValueError, RecursionError):
        return {}


def arguments_text(call: ToolCall) -> str:
    """The arguments of an earlier call, as text, to send back in a conversation."""
    if call.raw_arguments is not None:
        return call.raw_arguments
    return json.dumps(call.arguments if call.arguments is not None else {}, ensure_ascii=False)


def merge_extra(payload: dict[str, Any], settings: ModelSettings) -> dict[str, Any]:
    """Merge ``settings.extra_body`` into the payload, as written (top-level keys win)."""
    if settings.extra_body:
        payload.update(settings.extra_body)
    return payload


def system_text(messages: list[Message]) -> str | None:
    """The system messages joined by blank lines, or None."""
    parts = [m.content for m in messages if m.role == "system" and m.content]
    return "\n\n".join(parts) if parts else None


def unexpected_body(provider: str, body: Any, request: Any, why: str) -> TransportError:
    """A 2xx answer that is not a model answer: an error object, or the wrong shape."""
    status = None
    outcome = Outcome.server_error
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        code = body["error"].get("code")
        if isinstance(code, int) and 400 <= code < 600:
            status, outcome = code, classify_status(code)
    text = json.dumps(body, ensure_ascii=False)[:65536]
    return TransportError(outcome, f"{provider}: {why}", status=status, body=text, request=request)


def fill_call_ids(messages: list[Message]) -> list[Message]:
    """Give every earlier call an id, and every tool result the id of the call it answers.

    Suites may write a conversation without ids. Calls without one get
    ``toolproof_call_N``; a tool result without ``tool_call_id`` answers the first
    unanswered call of the turn before it. Messages that already carry ids
    are returned unchanged.
    """
    out: list[Message] = []
    pending: list[ToolCall] = []
    counter = 0
    for msg in messages:
        if msg.role == "assistant" and msg.tool_calls:
            calls = []
            for call in msg.tool_calls:
                if call.id is None:
                    call = call.model_copy(update={"id": f"{SYNTHETIC_ID_PREFIX}{counter}"})
                counter += 1
                calls.append(call)
            msg = msg.model_copy(update={"tool_calls": calls})
            pending = list(calls)
        elif msg.role == "tool":
            msg = _answer(msg, pending)
        out.append(msg)
    return out


def _answer(msg: Message, pending: list[ToolCall]) -> Message:
    if msg.tool_call_id is not None:
        match = next((c for c in pending if c.id == msg.tool_call_id), None)
    else:
        match = pending[0] if pending else None
    if match is None:
        return msg
    pending.remove(match)
    update: dict[str, Any] = {}
    if msg.tool_call_id is None:
        update["tool_call_id"] = match.id
    if msg.name is None:
        update["name"] = match.name
    return msg.model_copy(update=update) if update else msg


class WireProvider(Provider):
    """A provider that POSTs one JSON payload per turn over the shared transport.

    Subclasses give the wire format (``build_payload``, ``parse_response``,
    ``headers``), where each setting goes (``settings_format``) and where to
    send it; the round trip is the same for all.
    """

    #: Where this wire format puts each generation setting, and what it refuses.
    settings_format: SettingsFormat

    #: Base URL used when ``settings.base_url`` is not set.
    default_base_url: str | None = None
    #: Environment variables that may hold the key, in order.
    key_env: tuple[str, ...] = ()
    #: False for servers that take no key unless ``api_key_env`` names one.
    key_required: bool = True

    def __init__(self, model: str, settings: ModelSettings, transport: Transport) -> None:
        self.model = model
        self.settings = settings
        self.transport = transport
        self.check_settings(settings)
        base = settings.base_url or self.default_base_url
        if not base:
            raise UserError(f"provider {self.name!r} needs settings.base_url")
        self.url = join_url(base, self.endpoint())
        self._key = self._api_key(settings)
        self._reported: str | None = None

    def _api_key(self, settings: ModelSettings) -> str | None:
        if settings.api_key_env:
            return api_key(self.name, (settings.api_key_env,))
        return api_key(self.name, self.key_env) if self.key_required else None

    def check_settings(self, settings: ModelSettings) -> None:
        """Refuse settings this provider cannot honour (a UserError), rather than drop them."""
        refuse(self.name, self.settings_format, settings)

    def put_settings(self, payload: dict[str, Any], request: ProviderRequest) -> dict[str, Any]:
        """The payload with the request's settings written in, then ``extra_body`` merged."""
        settings = request.settings
        self.check_settings(settings)
        put_settings(payload, self.settings_format, settings, tools=bool(request.tools))
        return merge_extra(payload, settings)

    @abstractmethod
    def endpoint(self) -> str:
        """The path under the base URL."""

    @abstractmethod
    def headers(self) -> dict[str, str]:
        """Request headers, with the key (never logged or recorded)."""

    @abstractmethod
    def build_payload(self, request: ProviderRequest) -> dict[str, Any]:
        """The exact JSON body for one request."""

    @abstractmethod
    def parse_response(self, body: Any, latency_ms: float, payload: Any) -> Response:
        """The canonical view of an answer; ``raw`` is the body itself."""

    async def generate(self, request: ProviderRequest) -> Exchange:
        payload = self.build_payload(request)
        body, latency_ms, headers = await self.transport.post_json_headers(
            self.url, payload, self.headers(), request.settings.timeout_s
        )
        response = self.parse_response(body, latency_ms, payload)
        if isinstance(body, UnreadableBody):  # kept as received, its numbers unchanged
            response.raw = body.text
        self._reported = response.model or self._reported
        return Exchange(request=payload, response=response, limits=parse_rate_limits(headers))

    def model_version(self) -> str | None:
        return self._reported
