"""OpenAPI 3.0 / 3.1 schemas to self-contained JSON Schema (2020-12).

Local ``$ref``s are inlined. A reference to a schema that is already being
inlined (a recursive schema) is cut: it becomes a schema of the same type
whose description says where the recursion was cut, and a note says so too.
OpenAPI 3.0's ``nullable``, boolean ``exclusiveMinimum``/``exclusiveMaximum``
and ``example`` become their JSON Schema forms; ``discriminator``, ``xml``,
``externalDocs`` and ``x-`` extensions are dropped and reported; ``readOnly``
properties are dropped from request bodies (the server sets them). An
``allOf`` whose parts merge without conflict becomes one schema.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from toolproof.importers._model import ImportResult, Level
from toolproof.importers._problems import ImportProblem

Path = tuple[str | int, ...]

_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "dependentSchemas")
_SCHEMA_ONE = (
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
)
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_DROPPED = {"discriminator", "xml", "externalDocs"}

#: Most schema nodes one operation may inline: shared $refs inlined many times over can
#: grow a schema exponentially (a spec is untrusted input).
MAX_NODES = 50_000
#: Deepest chain of $refs inlined one inside another, and deepest schema nesting:
#: a chain of hundreds of local $refs would otherwise end in a RecursionError.
MAX_REF_DEPTH = 64
MAX_SCHEMA_DEPTH = 200


class Resolver:
    """Resolves references inside one spec and converts its schemas."""

    def __init__(self, spec: dict[str, Any], result: ImportResult) -> None:
        self.spec = spec
        self.result = result
        self.v31 = str(spec.get("openapi", "")).startswith("3.1")
        self.tool: str | None = None
        self._extensions: set[str] = set()
        self._nodes = 0

    def start(self, tool: str) -> None:
        """Notes that follow belong to this tool."""
        self.tool = tool
        self._extensions = set()
        self._nodes = 0

    def finish(self) -> None:
        if self._extensions:
            self.result.note(
                self.tool,
                "OpenAPI extension(s) dropped from schemas: " + ", ".join(sorted(self._extensions)),
                Level.info,
            )

    def note(self, message: str, where: Path, level: Level = Level.warning) -> None:
        self.result.note(self.tool, message, level, _render(where))

    def lookup(self, ref: str, where: Path) -> tuple[Any, Path]:
        """The node a local ``$ref`` points at, and its path in the spec."""
        if not ref.startswith("#"):
            raise ImportProblem(where, f"external $ref '{ref}' is not supported (only '#/...')")
        node: Any = self.spec
        path: list[str | int] = []
        for raw in ref[1:].split("/")[1:] if ref != "#" else []:
            part = unquote(raw).replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise ImportProblem(where, f"$ref '{ref}' points at nothing")
            path.append(part)
        return node, tuple(path)

    def deref(self, node: Any, where: Path) -> tuple[Any, Path]:
        """Follow ``$ref`` chains of a parameter, request body or path item."""
        seen: set[str] = set()
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            if ref in seen:
                raise ImportProblem(where, f"$ref '{ref}' refers to itself")
            seen.add(ref)
            node, where = self.lookup(ref, (*where, "$ref"))
        return node, where

    def schema(
        self, node: Any, where: Path, stack: tuple[str, ...] = (), *, request: bool = False
    ) -> Any:
        """``node`` as self-contained JSON Schema."""
        if isinstance(node, bool):
            return node
        if not isinstance(node, dict):
            raise ImportProblem(where, "a schema must be a mapping")
        self._nodes += 1
        if len(where) > MAX_SCHEMA_DEPTH:
            message = f"the schema nests deeper than {MAX_SCHEMA_DEPTH} levels"
            raise ImportProblem(where[:8], message)
        if self._nodes > MAX_NODES:
            raise ImportProblem(
                where, f"{self.tool}: more than {MAX_NODES} schema nodes once $refs are inlined"
            )
        if isinstance(node.get("$ref"), str):
            return self._ref(node, where, stack, request)
        out: dict[str, Any] = {}
        nullable = False
        for key, value in node.items():
            at = (*where, key)
            if key in _SCHEMA_MAPS and isinstance(value, dict):
                out[key] = {
                    n: self.schema(s, (*at, n), stack, request=request) for n, s in value.items()
                }
            elif key in _SCHEMA_ONE and isinstance(value, dict | bool):
                out[key] = self.schema(value, at, stack, request=request)
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                out[key] = [
                    self.schema(s, (*at, i), stack, request=request) for i, s in enumerate(value)
                ]
            elif key == "nullable" and not self.v31:
                nullable = value is True
            elif key in ("exclusiveMinimum", "exclusiveMaximum") and isinstance(value, bool):
                bound = "minimum" if key == "exclusiveMinimum" else "maximum"
                if value and bound in node:
                    out[key] = node[bound]
            elif key == "example":
                out.setdefault("examples", [value])
            elif key in _DROPPED:
                level = Level.warning if key == "discriminator" else Level.info
                self.note(f"'{key}' has no JSON Schema equivalent; dropped", at, level)
            elif key.startswith("x-"):
                self._extensions.add(key)
            else:
                out[key] = value
        _drop_bounds(node, out)
        if request:
            self._drop_read_only(out, where)
        if nullable:
            _make_nullable(out)
        if isinstance(out.get("allOf"), list):
            merged = merge_all_of(out)
            if merged is not None:
                self.note("allOf merged into one schema", (*where, "allOf"), Level.info)
                out = merged
        return out

    def _ref(self, node: dict[str, Any], where: Path, stack: tuple[str, ...], request: bool) -> Any:
        ref: str = node["$ref"]
        if len(stack) >= MAX_REF_DEPTH:
            raise ImportProblem(
                where,
                f"$refs nest more than {MAX_REF_DEPTH} deep (from {stack[0]} to {ref}); "
                "toolproof inlines them and stops there",
            )
        target, target_path = self.lookup(ref, (*where, "$ref"))
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        if ref in stack:
            name = ref.rsplit("/", 1)[-1]
            cut: dict[str, Any] = {}
            if isinstance(target, dict) and isinstance(target.get("type"), str | list):
                cut["type"] = target["type"]
            cut["description"] = (
                f"A {name} (recursive reference to {ref}, cut here: toolproof inlines "
                "schemas and does not nest one inside itself)."
            )
            self.note(f"recursive $ref '{ref}' cut", where)
            return cut
        resolved = self.schema(target, target_path, (*stack, ref), request=request)
        if not siblings:
            return resolved
        if not self.v31:
            self.note("siblings of a $ref (ignored by OpenAPI 3.0) merged", where, Level.info)
        extra = self.schema(siblings, where, stack, request=request)
        if isinstance(resolved, dict):
            return {**resolved, **extra}
        return {"allOf": [resolved, extra]}

    def _drop_read_only(self, out: dict[str, Any], where: Path) -> None:
        props = out.get("properties")
        if not isinstance(props, dict):
            return
        dropped = [n for n, s in props.items() if isinstance(s, dict) and s.get("readOnly") is True]
        for name in dropped:
            del props[name]
            self.note(
                f"readOnly property '{name}' dropped from the request",
                (*where, "properties", name),
                Level.info,
            )
        if dropped and isinstance(out.get("required"), list):
            out["required"] = [n for n in out["required"] if n not in dropped]
            if not out["required"]:
                del out["required"]


def _drop_bounds(node: dict[str, Any], out: dict[str, Any]) -> None:
    """3.0's ``minimum: 1, exclusiveMinimum: true`` is 2020-12's ``exclusiveMinimum: 1``."""
    for flag, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if node.get(flag) is True and bound in out:
            del out[bound]


def _make_nullable(out: dict[str, Any]) -> None:
    kind = out.get("type")
    if isinstance(kind, str):
        out["type"] = [kind, "null"]
    elif isinstance(kind, list):
        if "null" not in kind:
            out["type"] = [*kind, "null"]
    else:
        return  # no type: null is already allowed
    if isinstance(out.get("enum"), list) and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]


_MERGEABLE_TEXT = {"description", "title"}


def merge_all_of(schema: dict[str, Any]) -> dict[str, Any] | None:
    """One schema equal to ``schema``'s allOf, or None when the parts conflict."""
    merged = {k: v for k, v in schema.items() if k != "allOf"}
    for part in schema["allOf"]:
        if not isinstance(part, dict) or "allOf" in part:
            return None
        if "additionalProperties" in part or "unevaluatedProperties" in part:
            return None  # a closed part rejects the other parts' properties
        for key, value in part.items():
            if key == "properties" and isinstance(value, dict):
                props = merged.setdefault("properties", {})
                for name, sub in value.items():
                    if name in props and props[name] != sub:
                        return None
                    props[name] = sub
            elif key == "required" and isinstance(value, list):
                required = merged.setdefault("required", [])
                required.extend(n for n in value if n not in required)
            elif key in _MERGEABLE_TEXT:
                merged.setdefault(key, value)
            elif key not in merged:
                merged[key] = value
            elif merged[key] != value:
                return None
    if "properties" in merged and "type" not in merged:
        merged = {"type": "object", **merged}
    return merged


def _render(path: Path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
