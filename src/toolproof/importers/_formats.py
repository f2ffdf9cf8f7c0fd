"""Tool definitions written for a provider API: OpenAI Chat, OpenAI Responses, Anthropic,
Gemini, and MCP ``tools/list`` results. Detected per entry, or forced with ``fmt``.

Accepted layouts: a list of tools; a request body or any mapping with ``tools``;
a JSON-RPC ``tools/list`` response; a Gemini ``{functionDeclarations: [...]}``;
or one tool on its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import ValidationError

from toolproof.importers._annotations import HINTS, describe_hints, effect_and_risk
from toolproof.importers._gemini_schema import Notes, gemini_to_json_schema
from toolproof.importers._model import ImportedTool, ImportResult, Level
from toolproof.importers._names import TOOLPROOF_NAME, sanitise
from toolproof.importers._problems import ImportProblem
from toolproof.types import SuiteTool

Path = tuple[str | int, ...]

FILE_FORMATS = ("openai-chat", "openai-responses", "anthropic", "gemini", "mcp")

#: Fields each format defines beyond name, description, parameters and strict: not
#: part of a toolproof tool, so reported when present.
_NOT_CARRIED = {
    "openai-chat": set(),
    "openai-responses": {"output_schema", "defer_loading", "allowed_callers"},
    "anthropic": {"cache_control", "defer_loading", "input_examples", "eager_input_streaming"},
    "gemini": {"response", "responseJsonSchema", "behavior"},
    "mcp": {"title", "outputSchema", "icons", "_meta", "execution"},
}
_KNOWN = {
    "openai-chat": {"name", "description", "parameters", "strict"},
    "openai-responses": {"type", "name", "description", "parameters", "strict"},
    "anthropic": {"type", "name", "description", "input_schema", "strict"},
    "gemini": {"name", "description", "parameters", "parametersJsonSchema"},
    "mcp": {"name", "description", "inputSchema", "annotations"},
}


def read_definitions(data: Any, source: str, fmt: str | None = None) -> ImportResult:
    """Every tool in ``data`` (parsed JSON or YAML). Raises ImportProblem on bad input."""
    if fmt is not None and fmt not in FILE_FORMATS:
        raise ImportProblem((), f"unknown format '{fmt}' (known: {', '.join(FILE_FORMATS)})")
    result = ImportResult(source=source, format=fmt or "")
    seen: list[str] = []
    for path, entry in _entries(data, ()):
        kind = fmt or _detect(entry, path, result)
        if kind is None:
            continue
        if fmt is not None:
            _check_forced(entry, path, fmt)
        item = _convert(kind, entry, path, result)
        result.items.append(item)
        if kind not in seen:
            seen.append(kind)
    if not result.items and not result.notes:
        raise ImportProblem((), "no tool definitions found")
    if not fmt:
        result.format = "+".join(seen) or "none"
    if any(kind != "mcp" for kind in seen):
        result.note(
            None,
            "provider tool formats say nothing of effect or risk: every tool was imported "
            "as effect: read, risk: low; set them for tools that change things",
            Level.info,
        )
    return result


def _entries(data: Any, path: Path) -> Iterator[tuple[Path, Any]]:
    """(path, entry) for each tool entry, flattening the known wrappers."""
    if isinstance(data, list):
        for i, item in enumerate(data):
            if isinstance(item, dict) and _declarations_key(item) is not None:
                yield from _entries(item, (*path, i))
            else:
                yield (*path, i), item
        return
    if not isinstance(data, dict):
        raise ImportProblem(path, "expected a list of tools or a mapping")
    key = _declarations_key(data)
    if key is not None:
        decls = data[key]
        if not isinstance(decls, list):
            raise ImportProblem((*path, key), "expected a list of function declarations")
        for i, item in enumerate(decls):
            yield (*path, key, i), _GeminiEntry(item)
        return
    if "result" in data and isinstance(data["result"], dict) and "tools" in data["result"]:
        yield from _entries(data["result"]["tools"], (*path, "result", "tools"))
        return
    if "tools" in data and isinstance(data["tools"], list):
        yield from _entries(data["tools"], (*path, "tools"))
        return
    yield path, data


def _declarations_key(item: dict[str, Any]) -> str | None:
    for key in ("functionDeclarations", "function_declarations"):
        if key in item:
            return key
    return None


class _GeminiEntry(dict[str, Any]):
    """A mapping found inside ``functionDeclarations``: Gemini by position."""


def _detect(entry: Any, path: Path, result: ImportResult) -> str | None:
    if not isinstance(entry, dict):
        raise ImportProblem(path, "a tool definition must be a mapping")
    if isinstance(entry, _GeminiEntry):
        return "gemini"
    kind = entry.get("type")
    if kind == "function":
        return "openai-chat" if isinstance(entry.get("function"), dict) else "openai-responses"
    if "input_schema" in entry and kind in (None, "custom"):
        return "anthropic"
    if "inputSchema" in entry:
        return "mcp"
    if "parametersJsonSchema" in entry or "parameters_json_schema" in entry:
        return "gemini"
    if kind is not None or (entry and "name" not in entry):
        label = entry.get("name") or kind or next(iter(entry), "?")
        result.note(
            str(label),
            f"built-in tool of type '{kind or next(iter(entry))}' runs at the provider and "
            "has no schema to import; skipped",
            where=_render(path),
        )
        return None
    if "name" in entry:
        # a bare {name, description, parameters}: Gemini's subset if it looks like it,
        # otherwise the legacy OpenAI `functions` shape (plain JSON Schema)
        return "gemini" if _looks_gemini(entry.get("parameters")) else "openai-chat"
    raise ImportProblem(path, "not a tool definition in any known format")


def _looks_gemini(schema: Any) -> bool:
    if isinstance(schema, dict):
        kind = schema.get("type")
        if isinstance(kind, str) and kind.isupper():
            return True
        if "nullable" in schema or "propertyOrdering" in schema:
            return True
        return any(_looks_gemini(v) for v in schema.values())
    if isinstance(schema, list):
        return any(_looks_gemini(v) for v in schema)
    return False


def _check_forced(entry: Any, path: Path, fmt: str) -> None:
    if not isinstance(entry, dict):
        raise ImportProblem(path, "a tool definition must be a mapping")
    required = {
        "openai-chat": "function",
        "openai-responses": "name",
        "anthropic": "input_schema",
        "gemini": "name",
        "mcp": "inputSchema",
    }[fmt]
    other = {"input_schema", "inputSchema", "parametersJsonSchema"}
    legacy = fmt == "openai-chat" and "name" in entry and not other & set(entry)
    if required not in entry and not legacy:
        raise ImportProblem(path, f"not a {fmt} tool definition: no '{required}'")


def _convert(kind: str, entry: dict[str, Any], path: Path, result: ImportResult) -> ImportedTool:
    body, body_path = entry, path
    if kind == "openai-chat" and isinstance(entry.get("function"), dict):
        extra = set(entry) - {"type", "function"}
        if extra:
            _not_carried(result, entry["function"].get("name"), extra, path)
        body, body_path = entry["function"], (*path, "function")
    name = body.get("name")
    if not isinstance(name, str) or not name:
        raise ImportProblem((*body_path, "name"), "a tool needs a name (a non-empty string)")
    description = body.get("description", "")
    if not isinstance(description, str):
        raise ImportProblem((*body_path, "description"), "description must be a string")
    notes: Notes = []
    parameters = _parameters(kind, body, body_path, name, result, notes)
    for where, message, warn in notes:
        result.note(name, message, Level.warning if warn else Level.info, _render(where))
    strict = body.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise ImportProblem((*body_path, "strict"), "strict must be true or false")
    if kind == "openai-responses" and strict is None:
        strict = True
        result.note(
            name,
            "no 'strict': the Responses API treats an omitted strict as strict; "
            "imported as strict: true",
            Level.info,
        )
    fields: dict[str, Any] = {"name": name, "description": description, "parameters": parameters}
    if strict is not None:
        fields["strict"] = strict
    comment = ""
    if kind == "mcp":
        annotations = body.get("annotations")
        if annotations is not None and not isinstance(annotations, dict):
            raise ImportProblem((*body_path, "annotations"), "annotations must be a mapping")
        fields["effect"], fields["risk"] = effect_and_risk(annotations)
        comment = f"MCP annotations: {describe_hints(annotations)}"
        _annotation_extras(annotations or {}, name, body_path, result)
    unknown = set(body) - _KNOWN[kind] - _NOT_CARRIED[kind]
    if kind == "gemini":
        unknown -= {"parameters_json_schema"}
    if unknown | (set(body) & _NOT_CARRIED[kind]):
        _not_carried(result, name, unknown | (set(body) & _NOT_CARRIED[kind]), body_path)
    fields["name"] = _valid_name(name, result)
    try:
        tool = SuiteTool.model_validate(fields)
    except ValidationError as exc:  # pragma: no cover - fields are checked above
        raise ImportProblem(body_path, str(exc.errors()[0]["msg"])) from None
    return ImportedTool(tool=tool, raw=dict(entry), comment=comment)


def _parameters(
    kind: str,
    body: dict[str, Any],
    path: Path,
    name: str,
    result: ImportResult,
    notes: Notes,
) -> dict[str, Any]:
    key = {"anthropic": "input_schema", "mcp": "inputSchema"}.get(kind, "parameters")
    if kind == "gemini":
        keys = ("parametersJsonSchema", "parameters_json_schema")
        js_key = next((k for k in keys if k in body), None)
        if js_key is not None and "parameters" in body:
            raise ImportProblem(
                (*path, js_key), "give 'parameters' or 'parametersJsonSchema', not both"
            )
        if js_key is not None:
            key = js_key
        elif "parameters" in body:
            return _object(
                gemini_to_json_schema(body["parameters"], (*path, "parameters"), notes),
                (*path, "parameters"),
            )
    if key not in body or body[key] is None:
        if kind in ("anthropic", "mcp"):
            raise ImportProblem(path, f"a {kind} tool needs '{key}'")
        result.note(name, "no parameters: imported as an empty object schema", Level.info)
        return {"type": "object", "properties": {}}
    return _object(body[key], (*path, key))


def _object(schema: Any, path: Path) -> dict[str, Any]:
    if not isinstance(schema, dict):
        raise ImportProblem(path, "the parameters schema must be a mapping")
    return schema


def _annotation_extras(hints: dict[str, Any], name: str, path: Path, result: ImportResult) -> None:
    for key, value in hints.items():
        if key in HINTS and not isinstance(value, bool):
            raise ImportProblem((*path, "annotations", key), f"{key} must be true or false")
    extra = set(hints) - set(HINTS)
    if extra:
        result.note(
            name,
            f"annotation(s) {', '.join(sorted(extra))} not carried (only the hints map to "
            "effect and risk)",
            Level.info,
        )


_DISPLAY_ONLY = {"title", "icons", "_meta"}


def _not_carried(result: ImportResult, name: Any, keys: set[str], path: Path) -> None:
    """Report fields a toolproof tool cannot hold; display-only ones as info."""
    for group, level in ((keys - _DISPLAY_ONLY, Level.warning), (keys & _DISPLAY_ONLY, Level.info)):
        if group:
            result.note(
                str(name),
                f"field(s) {', '.join(sorted(group))} not carried: a toolproof tool has no "
                "place for them",
                level,
                _render(path),
            )


def _valid_name(name: str, result: ImportResult) -> str:
    if TOOLPROOF_NAME.match(name):
        return name
    fixed = sanitise(name)
    result.note(
        name,
        f"name is not valid for toolproof (a letter or _, then A-Z a-z 0-9 _ . : -); "
        f"renamed to '{fixed}'",
    )
    return fixed


def _render(path: Path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
