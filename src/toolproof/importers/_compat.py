"""What each provider will refuse or ignore in a tool: names, and strict-mode schemas.

The rules are those of ``formats.md``'s summary in the README: OpenAI's strict
mode needs ``additionalProperties: false`` and every property required on every
object, an object root, and no ``oneOf``/``allOf``/``not``/conditionals;
Anthropic's strict mode enforces only a subset of keywords (the rest is not
enforced), and string formats from a fixed list.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from toolproof.importers._model import ImportResult, Level
from toolproof.importers._names import name_problems
from toolproof.types import SuiteTool

Path = tuple[str | int, ...]

_OPENAI_STRICT_REFUSES = (
    "oneOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "patternProperties",
)
_ANTHROPIC_STRICT_KEYWORDS = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "oneOf",
    "allOf",
    "$ref",
    "$defs",
    "definitions",
    "description",
    "title",
    "format",
    "minItems",
    "default",
    "examples",
}
_ANTHROPIC_FORMATS = {
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
}
_OPENAI_MAX_DEPTH = 10


def check_compatibility(result: ImportResult) -> None:
    """Add a note for each name or strict-mode schema a provider will refuse."""
    for tool in result.tools:
        for problem in name_problems(tool.name):
            result.note(tool.name, problem)
        if tool.strict:
            for where, message in openai_strict_problems(tool):
                result.note(tool.name, f"OpenAI strict mode: {message}", where=where)
            for where, message in anthropic_strict_problems(tool):
                result.note(tool.name, f"Anthropic strict mode: {message}", Level.info, where)


def _walk(schema: Any, path: Path, depth: int = 0) -> Iterator[tuple[Path, dict[str, Any], int]]:
    """Every sub-schema with its path and its object nesting depth."""
    if not isinstance(schema, dict):
        return
    yield path, schema, depth
    deeper = depth + (1 if schema.get("type") == "object" or "properties" in schema else 0)
    for key in ("properties", "$defs", "definitions", "patternProperties"):
        subs = schema.get(key)
        if isinstance(subs, dict):
            for name, sub in subs.items():
                yield from _walk(sub, (*path, key, name), deeper)
    for key in ("items", "additionalProperties", "not", "if", "then", "else", "contains"):
        if isinstance(schema.get(key), dict):
            yield from _walk(schema[key], (*path, key), deeper)
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        subs = schema.get(key)
        if isinstance(subs, list):
            for i, sub in enumerate(subs):
                yield from _walk(sub, (*path, key, i), depth)


def _is_object(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind)


def _where(path: Path) -> str:
    out = "parameters"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def openai_strict_problems(tool: SuiteTool) -> list[tuple[str, str]]:
    """(where, problem) for each rule of OpenAI's strict mode the schema breaks."""
    out: list[tuple[str, str]] = []
    root = tool.parameters
    if "anyOf" in root or root.get("type") != "object":
        out.append((_where(()), "the root must be a plain object schema"))
    for path, schema, depth in _walk(root, ()):
        if depth > _OPENAI_MAX_DEPTH:
            out.append((_where(path), f"nested deeper than {_OPENAI_MAX_DEPTH} levels"))
        for key in _OPENAI_STRICT_REFUSES:
            if key in schema:
                out.append((_where((*path, key)), f"'{key}' is not supported"))
        if _is_object(schema):
            if schema.get("additionalProperties") is not False:
                out.append((_where(path), "objects need additionalProperties: false"))
            props = schema.get("properties")
            required = set(schema.get("required") or [])
            if isinstance(props, dict):
                optional = [n for n in props if n not in required]
                if optional:
                    out.append(
                        (
                            _where(path),
                            "every property must be required (make optional ones nullable): "
                            + ", ".join(optional),
                        )
                    )
    return out


def anthropic_strict_problems(tool: SuiteTool) -> list[tuple[str, str]]:
    """(where, problem) for each keyword Anthropic's strict mode does not enforce."""
    out: list[tuple[str, str]] = []
    for path, schema, _ in _walk(tool.parameters, ()):
        for key in schema:
            if key not in _ANTHROPIC_STRICT_KEYWORDS:
                out.append((_where((*path, key)), f"'{key}' is not enforced"))
        if "oneOf" in schema:
            out.append((_where((*path, "oneOf")), "'oneOf' is read as 'anyOf'"))
        fmt = schema.get("format")
        if isinstance(fmt, str) and fmt not in _ANTHROPIC_FORMATS:
            out.append((_where((*path, "format")), f"format '{fmt}' is not enforced"))
        if isinstance(schema.get("minItems"), int) and schema["minItems"] > 1:
            out.append((_where((*path, "minItems")), "minItems above 1 is not enforced"))
    return out
