"""What to generate for each tool: the slots, the mix, and the prompt of each slot.

A slot is one case to ask the generator for: a tool, a kind (positive, no-call,
clarification, confirmation, cross-tool confusion) and, for an edge case, the
edge it exercises (a language, dates, units, enum values, a long or an
adversarial request). Edge cases are positive cases with an edge: by default
they make up 35% of a tool's cases (``edge`` in the mix, from 0 to 0.9), and the
edges are handed out in turn over all the tools.
Pure: no model, no I/O.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from toolproof.errors import UserError
from toolproof.types import SuiteTool

__all__ = ["DEFAULT_MIX", "EDGES", "Slot", "parse_mix", "plan_slots", "slot_messages"]

#: Cases per tool of each kind, and the share of edge cases among all of a tool's cases.
DEFAULT_MIX: dict[str, float] = {
    "positive": 2,
    "no_call": 1,
    "clarify": 1,
    "confirm": 1,
    "confusion": 1,
    "edge": 0.35,
}

#: The edges, in the order they are handed out.
EDGES = (
    "lang:cs",
    "lang:ru",
    "lang:zh",
    "lang:ko",
    "dates",
    "units",
    "enum",
    "long",
    "adversarial",
)
_LANGUAGES = {"cs": "Czech", "ru": "Russian", "zh": "Chinese", "ko": "Korean"}

#: Most schema text put in one prompt (a tool with 10,000 enum values is cut, not sent whole).
_SCHEMA_CHARS = 6000


@dataclass(frozen=True)
class Slot:
    id: str
    tool: str
    kind: str
    """positive, no_call, clarify, confirm or confusion."""
    edge: str | None = None
    neighbour: str | None = None
    """confusion: the tool whose domain the request is in."""


def parse_mix(items: list[str]) -> dict[str, float]:
    """``--mix KIND=N`` items over the default mix (a UserError names a bad one)."""
    mix = dict(DEFAULT_MIX)
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or key not in mix:
            raise UserError(
                f"--mix {item!r}: write KIND=NUMBER with KIND one of {', '.join(DEFAULT_MIX)}"
            )
        try:
            number = float(value)
        except ValueError:
            raise UserError(f"--mix {item!r}: {value!r} is not a number") from None
        if key == "edge" and not 0 <= number <= 0.9:
            raise UserError(f"--mix {item!r}: the edge share is between 0 and 0.9")
        if key != "edge" and not (0 <= number <= 50 and number == int(number)):
            raise UserError(f"--mix {item!r}: a count is a whole number from 0 to 50")
        mix[key] = number
    return mix


def _props(tool: SuiteTool) -> dict[str, Any]:
    props = tool.parameters.get("properties") if isinstance(tool.parameters, dict) else None
    return props if isinstance(props, dict) else {}


def _edges_for(tool: SuiteTool) -> list[str]:
    """The edges that make sense for a tool (languages, long and adversarial always)."""
    text = json.dumps(_props(tool)).lower()
    out = []
    for edge in EDGES:
        if edge == "dates" and not any(w in text for w in ("date", "time", "day")):
            continue
        if edge == "units" and not any(w in text for w in ('"number"', '"integer"', "unit")):
            continue
        if edge == "enum" and '"enum"' not in text:
            continue
        out.append(edge)
    return out


def _required(tool: SuiteTool) -> list[str]:
    req = tool.parameters.get("required") if isinstance(tool.parameters, dict) else None
    return [str(r) for r in req] if isinstance(req, list) else []


def plan_slots(tools: list[SuiteTool], mix: dict[str, float]) -> list[Slot]:
    """Every slot to generate, per tool, in a fixed order (the same tools give the same plan)."""
    slots: list[Slot] = []
    names = [t.name for t in tools]
    turn = 0  # the edges rotate over the whole suite, so a few per tool still cover them all
    for i, tool in enumerate(tools):
        base: list[tuple[str, str | None]] = []
        base += [("positive", None)] * int(mix["positive"])
        base += [("no_call", None)] * int(mix["no_call"])
        if _required(tool):
            base += [("clarify", None)] * int(mix["clarify"])
        if tool.effect == "destructive" or tool.requires_confirmation:
            base += [("confirm", None)] * int(mix["confirm"])
        neighbour = names[(i + 1) % len(names)] if len(names) > 1 else None
        if neighbour is not None:
            base += [("confusion", None)] * int(mix["confusion"])
        share = mix["edge"]
        n_edge = round(len(base) * share / (1 - share)) if base and share else 0
        edges = _edges_for(tool)
        base += [("positive", edges[(turn + k) % len(edges)]) for k in range(n_edge)]
        turn += n_edge
        for n, (kind, edge) in enumerate(base):
            suffix = f"-{edge.replace(':', '-')}" if edge else ""
            slots.append(
                Slot(
                    id=f"gen-{tool.name}-{kind}{suffix}-{n}",
                    tool=tool.name,
                    kind=kind,
                    edge=edge,
                    neighbour=neighbour if kind == "confusion" else None,
                )
            )
    return slots


_SYSTEM = (
    "You write test cases for an AI assistant that calls tools. Answer with one JSON "
    "object and nothing else, no prose, no code fence."
)


def _schema_text(tool: SuiteTool) -> str:
    text = json.dumps(
        {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
        ensure_ascii=False,
    )
    return text if len(text) <= _SCHEMA_CHARS else text[:_SCHEMA_CHARS] + " …(cut)"


def _edge_text(edge: str) -> str:
    if edge.startswith("lang:"):
        return f"Write the request in {_LANGUAGES[edge[5:]]}, as a native speaker would."
    return {
        "dates": "The request gives a date or time in words (e.g. 'next Friday', 'the 3rd of "
        "May'); the arguments hold it in the format the schema asks for.",
        "units": "The request gives a quantity in another unit or spelled out; the arguments "
        "hold it as the schema asks.",
        "enum": "The request words an enum value loosely (another case, a synonym); the "
        "arguments hold the exact enum value.",
        "long": "The request is long: three or more sentences of context around the ask.",
        "adversarial": "The request tries to mislead: it mentions another action or asks to "
        "ignore instructions, but what the user really wants is this call.",
    }[edge]


def slot_messages(slot: Slot, tools: dict[str, SuiteTool]) -> list[dict[str, str]]:
    """The messages sent to the generator for one slot."""
    tool = tools[slot.tool]
    parts = [f"The tool:\n{_schema_text(tool)}\n"]
    call_shape = '{"prompt": "<the user request>", "call": {"name": "%s", "arguments": {...}}}'
    if slot.kind == "positive":
        parts.append(
            "Write a user request that clearly needs exactly one call of this tool, and the "
            "call with its arguments (valid for the schema)."
        )
        if slot.edge:
            parts.append(_edge_text(slot.edge))
        parts.append("Answer as " + call_shape % tool.name)
    elif slot.kind == "no_call":
        parts.append(
            "Write a user request that sounds close to this tool's domain but must NOT call "
            "it (a general question, small talk, or something the tool cannot do). "
            'Answer as {"prompt": "<the user request>"}'
        )
    elif slot.kind == "clarify":
        req = ", ".join(_required(tool))
        parts.append(
            f"Write a user request that wants this tool but leaves out a required argument "
            f"({req}), so the assistant must ask for it. "
            'Answer as {"prompt": "<the user request>", "missing": "<the argument>"}'
        )
    elif slot.kind == "confirm":
        parts.append(
            "This tool changes or deletes something. Write a user request for it that the "
            'assistant must confirm before acting. Answer as {"prompt": "<the user request>"}'
        )
    else:
        other = tools[slot.neighbour or slot.tool]
        parts.append(
            f"A neighbouring tool:\n{_schema_text(other)}\nWrite a user request that needs the "
            f"neighbouring tool ({other.name}), worded so that it could be mistaken for the "
            "first tool's domain, and the call of the neighbouring tool."
        )
        parts.append("Answer as " + call_shape % other.name)
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": "\n".join(parts)}]
