"""Recover tool calls that a model printed as text instead of emitting them.

Small local models often answer a tool request with the call written out, in
the format their chat template asked for, rather than as a structured call::

    <tool_call>
    {"name": "lookup_order", "arguments": {"order_id": "ORD-1"}}
    </tool_call>

or as the bare JSON object, maybe inside one Markdown code fence. Reading that
text back into a :class:`~toolproof.types.ToolCall` is protocol normalisation,
like parsing an OpenAI ``arguments`` string, so it happens in the adapter.
Each recovered call is marked ``extracted_from_text=True`` and keeps the exact
text of its arguments in ``raw_arguments``.

The rules are strict, so a call is never invented:

* Only objects of the form ``{"name": NAME, "arguments": VALUE}`` count, and
  NAME must be one of the tools offered in the request.
* Inside ``<tool_call>`` tags (an explicit signal), each block with an offered
  name becomes a call and the rest of the text is kept as text. Arguments that
  are not valid JSON are kept as data with ``parse_error`` set.
* Without tags, the whole answer must be nothing but calls: one object, a JSON
  list of objects, or objects separated by whitespace, optionally inside one
  code fence. Prose around the JSON (an example, an explanation) means nothing
  is extracted, and one object that is not a call of an offered tool means
  nothing is extracted.

These are pure functions: text in, calls out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass

from toolproof.types import ToolCall

__all__ = ["TextCalls", "extract_text_calls"]

_DECODER = json.JSONDecoder()
_WS = " \t\r\n"
_TAG_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
_FENCE = re.compile(r"\A```[A-Za-z0-9_-]*[ \t]*\n(.*?)\n?```\Z", re.DOTALL)
_CALL_KEYS = frozenset({"name", "arguments"})


@dataclass(frozen=True, slots=True)
class TextCalls:
    """What was recovered: the calls, and the text left once they are taken out."""

    calls: list[ToolCall]
    text: str | None


@dataclass(frozen=True, slots=True)
class _Span:
    start: int
    end: int


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WS:
        pos += 1
    return pos


def _object_spans(text: str, pos: int) -> tuple[dict[str, _Span], int]:
    """Scan one JSON object at ``pos``: the span of each member's value, and the end.

    Raises ValueError when the text there is not one well-formed object.
    """
    if text[pos : pos + 1] != "{":
        raise ValueError("not an object")
    spans: dict[str, _Span] = {}
    pos = _skip_ws(text, pos + 1)
    if text[pos : pos + 1] == "}":
        return spans, pos + 1
    while True:
        key, pos = _DECODER.raw_decode(text, pos)
        if not isinstance(key, str) or key in spans:
            raise ValueError("bad or repeated key")
        pos = _skip_ws(text, pos)
        if text[pos : pos + 1] != ":":
            raise ValueError("expected ':'")
        start = _skip_ws(text, pos + 1)
        _, end = _DECODER.raw_decode(text, start)
        spans[key] = _Span(start, end)
        pos = _skip_ws(text, end)
        sep = text[pos : pos + 1]
        if sep == "}":
            return spans, pos + 1
        if sep != ",":
            raise ValueError("expected ',' or '}'")
        pos = _skip_ws(text, pos + 1)


def _call_at(text: str, pos: int, tools: Collection[str]) -> tuple[ToolCall, int] | None:
    """A well-formed ``{"name", "arguments"}`` object of an offered tool at ``pos``."""
    try:
        spans, end = _object_spans(text, pos)
    except (ValueError, RecursionError):
        return None
    if set(spans) != _CALL_KEYS:
        return None
    name = json.loads(text[spans["name"].start : spans["name"].end])
    if not isinstance(name, str) or name not in tools:
        return None
    raw = text[spans["arguments"].start : spans["arguments"].end]
    call = ToolCall(
        name=name, raw_arguments=raw, arguments=json.loads(raw), extracted_from_text=True
    )
    return call, end


def _calls_in_sequence(body: str, tools: Collection[str]) -> list[ToolCall] | None:
    """Objects separated only by whitespace, or one JSON list of them; else None."""
    pos = _skip_ws(body, 0)
    if body[pos : pos + 1] == "[":
        return _calls_in_list(body, pos, tools)
    calls: list[ToolCall] = []
    while pos < len(body):
        found = _call_at(body, pos, tools)
        if found is None:
            return None
        calls.append(found[0])
        pos = _skip_ws(body, found[1])
    return calls or None


def _calls_in_list(body: str, pos: int, tools: Collection[str]) -> list[ToolCall] | None:
    calls: list[ToolCall] = []
    pos = _skip_ws(body, pos + 1)
    while body[pos : pos + 1] != "]":
        found = _call_at(body, pos, tools)
        if found is None:
            return None
        calls.append(found[0])
        pos = _skip_ws(body, found[1])
        if body[pos : pos + 1] == ",":
            pos = _skip_ws(body, pos + 1)
        elif body[pos : pos + 1] != "]":
            return None
    if _skip_ws(body, pos + 1) != len(body) or not calls:
        return None
    return calls


_NAME_THEN_ARGS = re.compile(
    r'\A\s*\{\s*"name"\s*:\s*"([^"\\]+)"\s*,\s*"arguments"\s*:\s*', re.DOTALL
)


def _malformed_tagged_call(body: str, tools: Collection[str]) -> ToolCall | None:
    """A tagged call whose name is clear but whose arguments are not valid JSON."""
    match = _NAME_THEN_ARGS.match(body)
    if match is None or match.group(1) not in tools:
        return None
    raw = body[match.end() :].rstrip()
    if raw.endswith("}") and raw.count("{") < raw.count("}"):
        raw = raw[:-1].rstrip()  # the closing brace of the call object, not of the arguments
    try:
        arguments = json.loads(raw)
    except ValueError as exc:
        return ToolCall(
            name=match.group(1), raw_arguments=raw, parse_error=str(exc), extracted_from_text=True
        )
    return ToolCall(
        name=match.group(1), raw_arguments=raw, arguments=arguments, extracted_from_text=True
    )


def _tagged_calls(text: str, tools: Collection[str]) -> TextCalls | None:
    calls: list[ToolCall] = []
    kept: list[str] = []
    last = 0
    for block in _TAG_BLOCK.finditer(text):
        found = _calls_in_sequence(_unfence(block.group(1).strip()), tools)
        if found is None:
            single = _malformed_tagged_call(block.group(1), tools)
            found = [single] if single is not None else None
        if found is None:
            continue
        calls.extend(found)
        kept.append(text[last : block.start()])
        last = block.end()
    if not calls:
        return None
    kept.append(text[last:])
    rest = "".join(kept).strip()
    return TextCalls(calls=calls, text=rest or None)


def _unfence(text: str) -> str:
    match = _FENCE.match(text)
    return match.group(1) if match else text


def _numbered(calls: list[ToolCall]) -> list[ToolCall]:
    return [c.model_copy(update={"id": f"call_text_{i}"}) for i, c in enumerate(calls)]


def extract_text_calls(text: str | None, tools: Collection[str]) -> TextCalls:
    """Recover the tool calls printed in ``text``, given the names of the offered tools.

    Returns no calls and the text unchanged when nothing qualifies. Recovered
    calls get the ids ``call_text_0``, ``call_text_1``... in order of appearance.
    """
    if not text or not tools:
        return TextCalls(calls=[], text=text)
    tagged = _tagged_calls(text, tools)
    if tagged is not None:
        return TextCalls(calls=_numbered(tagged.calls), text=tagged.text)
    bare = _calls_in_sequence(_unfence(text.strip()), tools)
    if bare is None:
        return TextCalls(calls=[], text=text)
    return TextCalls(calls=_numbered(bare), text=None)
