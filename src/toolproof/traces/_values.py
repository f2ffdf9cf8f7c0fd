"""OTLP values: AnyValue, attribute lists, IDs, kinds and times, in every encoding seen.

OTLP/JSON writes IDs in hex, enums as integers and 64-bit integers as strings;
protobuf's ``MessageToJson`` writes base64 IDs and enum names; the Python SDK's
``ConsoleSpanExporter`` writes ``0x``-prefixed hex and flat attributes. Each is
decoded by hand here (protobuf's own parser would read hex IDs as base64).
"""

from __future__ import annotations

import base64
import binascii
import re
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "MAX_VALUE_CHARS",
    "BadValue",
    "any_value",
    "attributes",
    "clip",
    "decode_id",
    "kind_of",
    "status_of",
    "time_ns",
]

#: The longest string value kept; a longer one is dropped and counted (not cut, not coerced).
MAX_VALUE_CHARS = 1 << 20
#: How deep an AnyValue may nest (arrayValue / kvlistValue inside each other).
MAX_VALUE_DEPTH = 64


class BadValue(ValueError):
    """An attribute value toolproof will not carry: the message says why."""


_LAST_WORD = re.compile(r"[^\s'\"]+$")


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, never inside a word (then ``…``).

    A secret cut in two escapes redaction (its prefix alone, or its tail, matches no
    detector), so a word the cut would split is left out whole."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    if not (text[limit].isspace() or text[limit] in "'\""):
        cut = _LAST_WORD.sub("", cut)
    return cut + "…"


def any_value(value: Any, depth: int = 0) -> Any:
    """An OTLP AnyValue (``{"stringValue": ...}`` etc.) as a plain Python value."""
    if depth > MAX_VALUE_DEPTH:
        raise BadValue(f"value nested deeper than {MAX_VALUE_DEPTH} levels")
    if not isinstance(value, dict):
        return _plain(value)
    if "stringValue" in value:
        text = value["stringValue"]
        if isinstance(text, str) and len(text) > MAX_VALUE_CHARS:
            raise BadValue(f"string value of {len(text):,} characters (limit {MAX_VALUE_CHARS:,})")
        return text
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            shown = clip(str(value["intValue"]), 40)
            raise BadValue(f"intValue {shown!r} is not an integer") from None
    if "doubleValue" in value:
        try:
            return float(value["doubleValue"])
        except (TypeError, ValueError):
            raise BadValue("doubleValue is not a number") from None
    if "arrayValue" in value:
        items = (value["arrayValue"] or {}).get("values") or []
        return [any_value(v, depth + 1) for v in items]
    if "kvlistValue" in value:
        pairs = (value["kvlistValue"] or {}).get("values") or []
        return {
            str(p.get("key")): any_value(p.get("value"), depth + 1)
            for p in pairs
            if isinstance(p, dict)
        }
    if "bytesValue" in value:
        return value["bytesValue"]
    return None  # an empty AnyValue


def _plain(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_VALUE_CHARS:
        raise BadValue(f"string value of {len(value):,} characters (limit {MAX_VALUE_CHARS:,})")
    return value


def attributes(raw: Any) -> tuple[dict[str, Any], list[str]]:
    """``[{key, value}]`` (or a flat mapping) as a dict; the keys dropped and why."""
    out: dict[str, Any] = {}
    dropped: list[str] = []
    if isinstance(raw, dict):  # ConsoleSpanExporter: flat, already plain
        for key, value in raw.items():
            try:
                out[str(key)] = _checked(value)
            except BadValue as exc:
                dropped.append(f"{key}: {exc}")
        return out, dropped
    for item in raw or ():
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            dropped.append("an attribute without a key")
            continue
        try:
            out[item["key"]] = any_value(item.get("value"))
        except BadValue as exc:
            dropped.append(f"{item['key']}: {exc}")
    return out, dropped


def _checked(value: Any, depth: int = 0) -> Any:
    if depth > MAX_VALUE_DEPTH:
        raise BadValue(f"value nested deeper than {MAX_VALUE_DEPTH} levels")
    if isinstance(value, list):
        return [_checked(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {str(k): _checked(v, depth + 1) for k, v in value.items()}
    return _plain(value)


_LOWER_HEX = re.compile(r"[0-9a-f]+")


def decode_id(value: Any, size: int) -> str | None:
    """A trace (16 bytes) or span (8 bytes) ID as lowercase hex, from hex, 0x-hex or base64."""
    if not isinstance(value, str) or not value:
        return None
    if len(value) == size * 2 and _LOWER_HEX.fullmatch(value):  # OTLP/JSON's own form
        return None if value.count("0") == len(value) else value
    text = value[2:] if value.startswith("0x") else value
    if len(text) == size * 2:
        try:
            bytes.fromhex(text)
        except ValueError:
            pass
        else:
            return None if set(text) == {"0"} else text.lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(raw) != size or not any(raw):
        return None
    return raw.hex()


_KINDS = {
    "SPAN_KIND_UNSPECIFIED": 0, "SPAN_KIND_INTERNAL": 1, "SPAN_KIND_SERVER": 2,
    "SPAN_KIND_CLIENT": 3, "SPAN_KIND_PRODUCER": 4, "SPAN_KIND_CONSUMER": 5,
    "SpanKind.INTERNAL": 1, "SpanKind.SERVER": 2, "SpanKind.CLIENT": 3,
    "SpanKind.PRODUCER": 4, "SpanKind.CONSUMER": 5,
}  # fmt: skip


def kind_of(value: Any) -> int:
    if isinstance(value, int):
        return value
    return _KINDS.get(str(value), 0)


_STATUS = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2,
           "UNSET": 0, "OK": 1, "ERROR": 2}  # fmt: skip


def status_of(value: Any) -> tuple[int, str | None]:
    """(code, message) from ``{"code": 2, "message": ...}`` or ``{"status_code": "ERROR"}``."""
    if not isinstance(value, dict):
        return 0, None
    code = value.get("code", value.get("status_code", 0))
    number = code if isinstance(code, int) else _STATUS.get(str(code), 0)
    message = value.get("message", value.get("description"))
    return number, message if isinstance(message, str) else None


def time_ns(value: Any) -> int | None:
    """Unix nanoseconds from a decimal string, a number or an ISO 8601 time."""
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value if 0 <= value < 1 << 63 else None
    if isinstance(value, str) and value.isdigit() and len(value) <= 19:
        number = int(value)
        return number if number < 1 << 63 else None
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return int(moment.timestamp() * 1_000_000_000)
    return None
