"""One span (with its log records) in any layout → what the model saw and decided.

Layouts: GenAI semconv v1.37+ attributes (``gen_ai.input.messages`` ...; JSON
strings or structured values), v1.28–v1.36 log events (``gen_ai.user.message``
... ``gen_ai.choice``), OpenInference's flattened ``llm.*`` keys, OpenLLMetry's
indexed ``gen_ai.prompt.N.*`` keys, and Langfuse observations (the raw OpenAI
request and answer). Content that is absent stays absent: ``has_content`` is
false and only the tool names and IDs that were recorded are kept.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from toolproof.records import parse_arguments
from toolproof.types import Message, ToolCall

#: ``json.dumps(value, ensure_ascii=False)``, with one encoder made once.
_dumps = json.JSONEncoder(ensure_ascii=False).encode

__all__ = ["Decision", "ToolRun", "decision_of", "span_role", "tool_run_of"]

CHAT_OPERATIONS = frozenset({"chat", "generate_content", "text_completion"})


@dataclass(slots=True)
class Decision:
    """One point where a model decided whether to call a tool."""

    layout: str
    has_content: bool
    messages: list[Message] = field(default_factory=list)
    tools: list[dict[str, Any]] | None = None
    text: str | None = None
    calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    model: str | None = None
    provider: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(slots=True)
class ToolRun:
    """A tool's execution as recorded downstream (an ``execute_tool`` / TOOL span)."""

    name: str
    call_id: str | None
    arguments: Any
    result: Any
    error_type: str | None
    status: int
    status_message: str | None
    http_status: int | None


def span_role(attrs: dict[str, Any]) -> str:
    """'chat', 'tool' or 'other'."""
    op = attrs.get("gen_ai.operation.name")
    oi = attrs.get("openinference.span.kind")
    lf = attrs.get("langfuse.observation.type")
    if op in CHAT_OPERATIONS or oi == "LLM" or lf == "generation":
        return "chat"
    if op == "execute_tool" or oi == "TOOL" or lf == "tool":
        return "tool"
    if any(k.startswith(("gen_ai.prompt.", "gen_ai.completion.")) for k in attrs):
        return "chat"
    return "other"


class _TooDeep(ValueError):
    """JSON text nested deeper than the parser goes: content that cannot be read."""


def _json(value: Any) -> Any:
    """A JSON string's value (messages are JSON inside attribute strings); else the value.

    Text that is not JSON stays text; JSON nested too deeply to parse raises
    :class:`_TooDeep` (read as text, a conversation or a call would silently vanish).
    """
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("[", "{"):
            try:
                return json.loads(text)
            except RecursionError:
                raise _TooDeep("JSON nested too deeply to read") from None
            except ValueError:
                return value
    return value


def _json_or_text(value: Any) -> Any:
    """:func:`_json`, keeping JSON nested too deeply as the text it is (a tool's result)."""
    try:
        return _json(value)
    except _TooDeep:
        return value


def _too_deep_key(attrs: dict[str, Any], logs: list[tuple[str, Any]]) -> str:
    """The attribute (or log event) whose JSON text is nested too deeply, for the report."""
    for key, value in attrs.items():
        try:
            _json(value)
        except _TooDeep:
            return key
    for name, body in logs:
        values = body.values() if isinstance(body, dict) else [body]
        for value in values:
            try:
                _json(value)
            except _TooDeep:
                return f"log event {name}"
    return "a JSON text"


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _call(name: Any, arguments: Any, call_id: Any) -> ToolCall:
    name = str(name or "")
    cid = str(call_id) if call_id not in (None, "") else None
    if arguments is None:
        return ToolCall(id=cid, name=name)
    if isinstance(arguments, str):
        value, error = parse_arguments(arguments)
        return ToolCall(
            id=cid, name=name, raw_arguments=arguments, arguments=value, parse_error=error
        )
    raw = _dumps(arguments)
    return ToolCall(id=cid, name=name, raw_arguments=raw, arguments=arguments)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _finish(attrs: dict[str, Any]) -> str | None:
    reasons = attrs.get("gen_ai.response.finish_reasons")
    if isinstance(reasons, list) and reasons:
        return str(reasons[0])
    if isinstance(reasons, str):
        return reasons
    return None


def _tool_defs(value: Any) -> list[dict[str, Any]] | None:
    value = _json(value)
    if not isinstance(value, list):
        return None
    out: list[dict[str, Any]] = []
    for item in value:
        item = _json(item)
        if not isinstance(item, dict):
            continue
        fn = item["function"] if isinstance(item.get("function"), dict) else item
        if not isinstance(fn, dict) or not fn.get("name"):
            continue
        params = fn.get("parameters", fn.get("input_schema", fn.get("inputSchema")))
        out.append(
            {
                "name": str(fn["name"]),
                "description": str(fn.get("description") or ""),
                "parameters": params if isinstance(params, dict) else {"type": "object"},
            }
        )
    return out


# --- v1.37+ parts -----------------------------------------------------------


def _parts_messages(value: Any) -> list[Message] | None:
    value = _json(value)
    if not isinstance(value, list):
        return None
    out: list[Message] = []
    for msg in value:
        msg = _json(msg)
        if not isinstance(msg, dict):
            continue
        role = str(msg.get("role") or "user")
        texts: list[str] = []
        calls: list[ToolCall] = []
        for part in msg.get("parts") or []:
            if not isinstance(part, dict):
                continue
            ptype = part.get("type")
            if ptype == "text":
                texts.append(str(part.get("content") or ""))
            elif ptype == "tool_call":
                calls.append(_call(part.get("name"), part.get("arguments"), part.get("id")))
            elif ptype == "tool_call_response":
                out.append(
                    Message(
                        role="tool",
                        content=_text(part.get("response", part.get("result"))),
                        tool_call_id=part.get("id"),
                    )
                )
        if role == "tool":
            continue  # its parts became tool messages above
        if role not in ("system", "user", "assistant"):
            role = "user"
        if texts or calls:
            out.append(
                Message(role=role, content="\n".join(texts) if texts else None, tool_calls=calls)  # type: ignore[arg-type]
            )
    return out


def _system(value: Any) -> str | None:
    value = _json(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [
            str(p.get("content") or "")
            for p in value
            if isinstance(p, dict) and p.get("type", "text") == "text"
        ]
        return "\n".join(texts) if texts else None
    return None


def _latest(attrs: dict[str, Any]) -> Decision | None:
    if "gen_ai.input.messages" not in attrs and "gen_ai.output.messages" not in attrs:
        return None
    messages = _parts_messages(attrs.get("gen_ai.input.messages")) or []
    system = _system(attrs.get("gen_ai.system_instructions"))
    if system and not any(m.role == "system" for m in messages):
        messages.insert(0, Message(role="system", content=system))
    d = Decision("gen_ai v1.37+ attributes", has_content=bool(messages))
    d.messages = messages
    d.tools = _tool_defs(attrs.get("gen_ai.tool.definitions"))
    outputs = _parts_messages(attrs.get("gen_ai.output.messages")) or []
    for msg in outputs:
        if msg.role == "assistant":
            d.text = msg.content
            d.calls = list(msg.tool_calls)
            break
    out_raw = _json(attrs.get("gen_ai.output.messages"))
    if isinstance(out_raw, list) and out_raw and isinstance(out_raw[0], dict):
        d.finish_reason = out_raw[0].get("finish_reason")
    return d


# --- v1.28–v1.36 log events --------------------------------------------------


def _openai_calls(value: Any) -> list[ToolCall]:
    calls = []
    for c in _json(value) or []:
        c = _json(c)
        if not isinstance(c, dict):
            continue
        fn: dict[str, Any] = c["function"] if isinstance(c.get("function"), dict) else c
        calls.append(_call(fn.get("name"), fn.get("arguments"), c.get("id")))
    return calls


def _legacy(logs: list[tuple[str, Any]]) -> Decision | None:
    if not logs:
        return None
    d = Decision("gen_ai v1.28-v1.36 log events", has_content=False)
    for name, body in logs:
        body = body if isinstance(body, dict) else {}
        if name in ("gen_ai.system.message", "gen_ai.user.message"):
            role = "system" if name == "gen_ai.system.message" else "user"
            if body.get("content") is not None:
                d.has_content = True
            d.messages.append(Message(role=role, content=_text(body.get("content"))))  # type: ignore[arg-type]
        elif name == "gen_ai.assistant.message":
            d.messages.append(
                Message(
                    role="assistant",
                    content=_text(body.get("content")),
                    tool_calls=_openai_calls(body.get("tool_calls")),
                )
            )
        elif name == "gen_ai.tool.message":
            d.messages.append(
                Message(
                    role="tool", content=_text(body.get("content")), tool_call_id=body.get("id")
                )
            )
        elif name == "gen_ai.choice":
            msg = body["message"] if isinstance(body.get("message"), dict) else {}
            d.finish_reason = body.get("finish_reason")
            d.text = _text(msg.get("content"))
            d.calls = _openai_calls(msg.get("tool_calls"))
        elif name == "gen_ai.client.inference.operation.details":
            return None  # its attributes hold the v1.37 layout; handled there
    return d


# --- OpenInference and OpenLLMetry: flattened indexed keys ---------------------


def _indexed(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """``PREFIX.N.rest`` keys as a list (numeric order) of {rest: value}."""
    groups: dict[int, dict[str, Any]] = {}
    start = len(prefix) + 1
    for key, value in attrs.items():
        if not key.startswith(prefix + "."):
            continue
        index, _, rest = key[start:].partition(".")
        if index.isdigit() and rest:
            groups.setdefault(int(index), {})[rest] = value
    return [groups[i] for i in sorted(groups)]


def _oi_message(fields: dict[str, Any], output: bool = False) -> Message:
    role = str(fields.get("message.role") or ("assistant" if output else "user"))
    calls = [
        _call(
            c.get("tool_call.function.name"),
            c.get("tool_call.function.arguments"),
            c.get("tool_call.id"),
        )
        for c in _indexed(fields, "message.tool_calls")
    ]
    content = fields.get("message.content")
    if content is None:
        parts = [
            str(p.get("message_content.text"))
            for p in _indexed(fields, "message.contents")
            if p.get("message_content.type") == "text" and p.get("message_content.text") is not None
        ]
        content = "\n".join(parts) if parts else None
    if role not in ("system", "user", "assistant", "tool"):
        role = "user"
    return Message(
        role=role,  # type: ignore[arg-type]
        content=_text(content),
        tool_calls=calls,
        tool_call_id=fields.get("message.tool_call_id"),
    )


def _openinference(attrs: dict[str, Any]) -> Decision | None:
    inputs = _indexed(attrs, "llm.input_messages")
    outputs = _indexed(attrs, "llm.output_messages")
    if not inputs and not outputs and "llm.tools.0.tool.json_schema" not in attrs:
        return None
    d = Decision("OpenInference", has_content=bool(inputs))
    d.messages = [_oi_message(f) for f in inputs]
    tools = [t.get("tool.json_schema") for t in _indexed(attrs, "llm.tools")]
    d.tools = _tool_defs(tools) if tools else None
    if outputs:
        first = _oi_message(outputs[0], output=True)
        d.text, d.calls = first.content, list(first.tool_calls)
    d.finish_reason = attrs.get("llm.finish_reason")
    d.model = attrs.get("llm.model_name")
    d.provider = attrs.get("llm.system") or attrs.get("llm.provider")
    d.input_tokens = _int(attrs.get("llm.token_count.prompt"))
    d.output_tokens = _int(attrs.get("llm.token_count.completion"))
    return d


def _openllmetry(attrs: dict[str, Any]) -> Decision | None:
    prompts = _indexed(attrs, "gen_ai.prompt")
    completions = _indexed(attrs, "gen_ai.completion")
    if not prompts and not completions:
        return None
    d = Decision("OpenLLMetry indexed keys", has_content=bool(prompts))
    for p in prompts:
        role = str(p.get("role") or "user")
        calls = [
            _call(c.get("name"), c.get("arguments"), c.get("id")) for c in _indexed(p, "tool_calls")
        ]
        if role not in ("system", "user", "assistant", "tool"):
            role = "user"
        d.messages.append(
            Message(
                role=role,  # type: ignore[arg-type]
                content=_text(p.get("content")),
                tool_calls=calls,
                tool_call_id=p.get("tool_call_id"),
            )
        )
    if completions:
        c0 = completions[0]
        d.text = _text(c0.get("content"))
        d.finish_reason = c0.get("finish_reason")
        d.calls = [
            _call(c.get("name"), c.get("arguments"), c.get("id"))
            for c in _indexed(c0, "tool_calls")
        ]
    functions = _indexed(attrs, "llm.request.functions")
    if functions:
        d.tools = _tool_defs(
            [
                {
                    "name": f.get("name"),
                    "description": f.get("description"),
                    "parameters": _json(f.get("parameters")),
                }
                for f in functions
            ]
        )
    return d


# --- Langfuse and raw OpenAI payloads -------------------------------------------


def _openai_messages(value: Any) -> list[Message]:
    out: list[Message] = []
    for m in _json(value) or []:
        m = _json(m)
        if not isinstance(m, dict):
            continue
        role = str(m.get("role") or "user")
        content = m.get("content")
        if isinstance(content, list):
            content = "\n".join(
                str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
            )
        if role == "developer":
            role = "system"
        if role not in ("system", "user", "assistant", "tool"):
            role = "user"
        out.append(
            Message(
                role=role,  # type: ignore[arg-type]
                content=_text(content),
                tool_calls=_openai_calls(m.get("tool_calls")),
                tool_call_id=m.get("tool_call_id"),
            )
        )
    return out


def _langfuse(attrs: dict[str, Any]) -> Decision | None:
    if attrs.get("langfuse.observation.type") != "generation":
        return None
    raw_in = _json(attrs.get("langfuse.observation.input"))
    d = Decision("Langfuse", has_content=raw_in is not None)
    if isinstance(raw_in, dict):
        d.messages = _openai_messages(raw_in.get("messages"))
        d.tools = _tool_defs(raw_in.get("tools"))
    elif isinstance(raw_in, list):
        d.messages = _openai_messages(raw_in)
    if d.tools is None and attrs.get("langfuse.tool_definitions") is not None:
        d.tools = _tool_defs(attrs.get("langfuse.tool_definitions"))
    out = _json(attrs.get("langfuse.observation.output"))
    if isinstance(out, dict):
        msg = out["message"] if isinstance(out.get("message"), dict) else out
        d.text = _text(msg.get("content"))
        d.calls = _openai_calls(msg.get("tool_calls"))
    elif isinstance(out, str):
        d.text = out
    d.model = attrs.get("langfuse.observation.model.name")
    return d


def decision_of(attrs: dict[str, Any], logs: list[tuple[str, Any]]) -> Decision:
    """What a chat span says, from whichever layout it carries (the richest wins)."""
    for event in logs:  # util-genai's event_only mode: the messages are the event's attributes
        if event[0] == "gen_ai.client.inference.operation.details" and isinstance(event[1], dict):
            attrs = {**attrs, **event[1]}
    try:
        found = (
            _latest(attrs)
            or _langfuse(attrs)
            or _openinference(attrs)
            or _openllmetry(attrs)
            or _legacy([e for e in logs if e[0] != "gen_ai.client.inference.operation.details"])
            or Decision("no content", has_content=False)
        )
    except _TooDeep as exc:  # the span is skipped and named, never read as one without content
        raise ValueError(f"{_too_deep_key(attrs, logs)}: {exc}") from None
    if found.model is None:
        found.model = attrs.get("gen_ai.response.model") or attrs.get("gen_ai.request.model")
    if found.provider is None:
        found.provider = attrs.get("gen_ai.provider.name") or attrs.get("gen_ai.system")
    if found.finish_reason is None:
        found.finish_reason = _finish(attrs)
    if found.input_tokens is None:
        found.input_tokens = _int(attrs.get("gen_ai.usage.input_tokens"))
    if found.output_tokens is None:
        found.output_tokens = _int(attrs.get("gen_ai.usage.output_tokens"))
    # untrusted attributes: a value of the wrong type is dropped, not carried
    found.model = _str_or_none(found.model)
    found.provider = _str_or_none(found.provider)
    found.finish_reason = _str_or_none(found.finish_reason)
    found.input_tokens = _int(found.input_tokens)
    found.output_tokens = _int(found.output_tokens)
    return found


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def tool_run_of(
    attrs: dict[str, Any], name: str, status: int, status_message: str | None
) -> ToolRun:
    """An execute_tool / TOOL / Langfuse tool span as a downstream outcome."""
    if attrs.get("langfuse.observation.type") == "tool":
        args, result = (
            attrs.get("langfuse.observation.input"),
            attrs.get("langfuse.observation.output"),
        )
        tool = name
        if attrs.get("langfuse.observation.level") == "ERROR":
            status = 2
            status_message = status_message or attrs.get("langfuse.observation.status_message")
    elif attrs.get("openinference.span.kind") == "TOOL":
        args, result = attrs.get("input.value"), attrs.get("output.value")
        tool = str(attrs.get("tool.name") or name)
    else:
        args, result = attrs.get("gen_ai.tool.call.arguments"), attrs.get("gen_ai.tool.call.result")
        tool = str(attrs.get("gen_ai.tool.name") or name.removeprefix("execute_tool "))
    call_id = attrs.get("gen_ai.tool.call.id") or attrs.get("tool_call.id")
    http = attrs.get("http.response.status_code")
    error = attrs.get("error.type")
    return ToolRun(
        name=tool,
        call_id=str(call_id) if call_id else None,
        arguments=_json_or_text(args),
        result=_json_or_text(result),
        error_type=str(error) if error else None,
        status=status,
        status_message=status_message,
        http_status=http if isinstance(http, int) else None,
    )
