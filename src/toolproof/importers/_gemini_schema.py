"""Gemini's OpenAPI-subset ``Schema`` (``parameters``) to JSON Schema.

The subset writes types in upper case (``STRING``), marks nulls with
``nullable``, sends 64-bit integers such as ``minItems`` as strings, and has
``example`` and ``propertyOrdering``. Each is turned into its JSON Schema
equivalent; anything outside the subset is kept and reported.
"""

from __future__ import annotations

import re
from typing import Any

from toolproof.importers._problems import ImportProblem

_TYPES = {
    "STRING": "string",
    "NUMBER": "number",
    "INTEGER": "integer",
    "BOOLEAN": "boolean",
    "ARRAY": "array",
    "OBJECT": "object",
    "NULL": "null",
}
_COUNTS = {"minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"}
_BOUNDS = {"minimum", "maximum"}
_COPIED = {"title", "description", "format", "pattern", "enum", "required", "default"}

Path = tuple[str | int, ...]
Notes = list[tuple[Path, str, bool]]  # (where, message, is_warning)


def _camel(key: str) -> str:
    """The REST spelling of a field the Python SDK writes in snake_case."""
    head, *rest = key.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def gemini_to_json_schema(node: Any, path: Path, notes: Notes) -> dict[str, Any]:
    """Convert one Gemini ``Schema`` (and everything under it) to JSON Schema."""
    if not isinstance(node, dict):
        raise ImportProblem(path, "a schema must be a mapping")
    out: dict[str, Any] = {}
    nullable = False
    ordering: list[str] | None = None
    for key, value in node.items():
        k = _camel(key) if not key.startswith("$") else key
        where = (*path, key)
        if k == "type":
            nullable = _type(value, where, out, notes) or nullable
        elif k == "nullable":
            if not isinstance(value, bool):
                raise ImportProblem(where, "nullable must be true or false")
            nullable = nullable or value
        elif k in ("properties", "defs", "$defs"):
            if not isinstance(value, dict):
                raise ImportProblem(where, f"{key} must be a mapping")
            target = "properties" if k == "properties" else "$defs"
            if target == "$defs" and k != "$defs":
                notes.append((where, "'defs' written as JSON Schema '$defs'", False))
            out[target] = {
                name: gemini_to_json_schema(sub, (*where, name), notes)
                for name, sub in value.items()
            }
        elif k == "items":
            out["items"] = gemini_to_json_schema(value, where, notes)
        elif k == "anyOf":
            if not isinstance(value, list):
                raise ImportProblem(where, "anyOf must be a list")
            out["anyOf"] = [
                gemini_to_json_schema(sub, (*where, i), notes) for i, sub in enumerate(value)
            ]
        elif k in _COUNTS:
            out[k] = _integer(value, where)
        elif k in _BOUNDS:
            out[k] = _number(value, where)
        elif k == "example":
            out["examples"] = [value]
            notes.append((where, "'example' written as JSON Schema 'examples: [...]'", False))
        elif k == "propertyOrdering":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ImportProblem(where, "propertyOrdering must be a list of names")
            ordering = value
        elif k in ("ref", "$ref"):
            out["$ref"] = re.sub(r"^#/defs/", "#/$defs/", str(value))
        elif k in _COPIED:
            out[k] = value
        else:
            out[key] = value
            message = f"'{key}' is not part of Gemini's schema subset; kept as is"
            notes.append((where, message, True))
    if nullable:
        _make_nullable(out)
    if ordering is not None:
        _order(out, ordering, path, notes)
    return out


def _type(value: Any, where: Path, out: dict[str, Any], notes: Notes) -> bool:
    """Set ``out['type']``; return True when the source type was NULL."""
    if not isinstance(value, str):
        raise ImportProblem(where, "type must be a string such as STRING or OBJECT")
    upper = value.upper()
    if upper == "TYPE_UNSPECIFIED":
        notes.append((where, "type TYPE_UNSPECIFIED: no type constraint", False))
        return False
    if upper not in _TYPES:
        known = ", ".join(_TYPES)
        raise ImportProblem(where, f"unknown type '{value}' (known: {known})")
    out["type"] = _TYPES[upper]
    return False


def _make_nullable(out: dict[str, Any]) -> None:
    kind = out.get("type")
    if isinstance(kind, str) and kind != "null":
        out["type"] = [kind, "null"]
    elif "anyOf" in out and {"type": "null"} not in out["anyOf"]:
        out["anyOf"] = [*out["anyOf"], {"type": "null"}]
    enum = out.get("enum")
    if isinstance(enum, list) and None not in enum:
        out["enum"] = [*enum, None]


def _order(out: dict[str, Any], ordering: list[str], path: Path, notes: Notes) -> None:
    props = out.get("properties")
    if not isinstance(props, dict):
        return
    ranked = [n for n in ordering if n in props] + [n for n in props if n not in ordering]
    out["properties"] = {n: props[n] for n in ranked}
    notes.append(
        ((*path, "propertyOrdering"), "propertyOrdering applied to the order of properties", False)
    )


def _integer(value: Any, where: Path) -> int:
    if isinstance(value, bool):
        raise ImportProblem(where, "must be an integer")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
        return int(value)
    raise ImportProblem(where, f"must be an integer, not {value!r}")


def _number(value: Any, where: Path) -> int | float:
    if isinstance(value, bool):
        raise ImportProblem(where, "must be a number")
    if isinstance(value, int | float):
        return value
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            pass
        else:
            return int(number) if number.is_integer() and "." not in value else number
    raise ImportProblem(where, f"must be a number, not {value!r}")
