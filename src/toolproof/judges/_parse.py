"""Strict parsing of a judge's reply against its rubric. Anything else is a judge error."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from toolproof.trust import TooDeep, loads_json
from toolproof.types import Rubric

_FENCE = re.compile(r"\A```(?:json)?[ \t]*\n(.*)\n```\Z", re.DOTALL)

FieldValue = bool | int | str


@dataclass(frozen=True)
class Parsed:
    """A reply that parsed: every field typed and in range, plus the judge's reasoning."""

    fields: dict[str, FieldValue]
    reasoning: str


class JudgeReplyError(ValueError):
    """The judge's reply is not one JSON object matching the rubric."""


def parse_reply(text: str | None, rubric: Rubric) -> Parsed:
    """One JSON object (optionally in one ```json fence), exactly the rubric's keys."""
    if text is None or not text.strip():
        raise JudgeReplyError("empty reply")
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        data = loads_json(body)
    except json.JSONDecodeError as exc:
        raise JudgeReplyError(f"not one JSON object: {exc.msg} at char {exc.pos}") from None
    except TooDeep as exc:
        raise JudgeReplyError(f"not one JSON object: {exc}") from None
    if not isinstance(data, dict):
        raise JudgeReplyError(f"expected a JSON object, got {type(data).__name__}")
    wanted = {"reasoning", *rubric.fields}
    missing = sorted(wanted - set(data))
    extra = sorted(set(data) - wanted)
    if missing:
        raise JudgeReplyError("missing key(s): " + ", ".join(missing))
    if extra:
        raise JudgeReplyError("unexpected key(s): " + ", ".join(extra))
    reasoning = data["reasoning"]
    if not isinstance(reasoning, str):
        raise JudgeReplyError("'reasoning' is not a string")
    fields: dict[str, FieldValue] = {}
    for name, spec in rubric.fields.items():
        fields[name] = check_value(name, spec.type, spec.min, spec.max, spec.values, data[name])
    return Parsed(fields, reasoning)


def check_value(
    name: str, kind: str, low: int | None, high: int | None, values: list[str] | None, v: Any
) -> FieldValue:
    if kind == "bool":
        if not isinstance(v, bool):
            raise JudgeReplyError(f"{name!r}: expected true or false, got {json.dumps(v)}")
        return v
    if kind == "int":
        if isinstance(v, bool) or not isinstance(v, int):
            raise JudgeReplyError(f"{name!r}: expected an integer, got {json.dumps(v)}")
        if low is not None and v < low:
            raise JudgeReplyError(f"{name!r}: {v} is below {low}")
        if high is not None and v > high:
            raise JudgeReplyError(f"{name!r}: {v} is above {high}")
        return v
    if not isinstance(v, str) or v not in (values or []):
        raise JudgeReplyError(f"{name!r}: {json.dumps(v)} is not one of {', '.join(values or [])}")
    return v
