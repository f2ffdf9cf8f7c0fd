"""OpenAPI 3.0 / 3.1 specs: one tool per operation.

Path, query and header parameters and the JSON request body become one
object schema; the name comes from ``operationId`` (made valid for every
provider); the description from ``summary`` and ``description``; the effect
from the method (GET read; POST, PUT, PATCH write; DELETE destructive).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any

from toolproof.importers._model import ImportedTool, ImportResult, Level
from toolproof.importers._names import sanitise, unique
from toolproof.importers._openapi_schema import Resolver
from toolproof.importers._problems import ImportProblem
from toolproof.types import Effect, Risk, SuiteTool

Path = tuple[str | int, ...]

METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
EFFECTS = {
    "get": Effect.read,
    "head": Effect.read,
    "options": Effect.read,
    "trace": Effect.read,
    "post": Effect.write,
    "put": Effect.write,
    "patch": Effect.write,
    "delete": Effect.destructive,
}
RISKS = {Effect.read: Risk.low, Effect.write: Risk.medium, Effect.destructive: Risk.high}
_IGNORED_HEADERS = {"accept", "content-type", "authorization"}
_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


@dataclass(frozen=True)
class OperationFilter:
    """Which operations to import: by tag, and by path (shell-style globs)."""

    include_tags: tuple[str, ...] = ()
    exclude_tags: tuple[str, ...] = ()
    include_paths: tuple[str, ...] = ()
    exclude_paths: tuple[str, ...] = ()

    def keeps(self, path: str, tags: list[str]) -> bool:
        if self.include_tags and not set(tags) & set(self.include_tags):
            return False
        if set(tags) & set(self.exclude_tags):
            return False
        if self.include_paths and not any(fnmatch.fnmatchcase(path, p) for p in self.include_paths):
            return False
        return not any(fnmatch.fnmatchcase(path, p) for p in self.exclude_paths)


def is_openapi(data: Any) -> bool:
    return isinstance(data, dict) and ("openapi" in data or "swagger" in data)


def read_openapi(
    spec: dict[str, Any], source: str, only: OperationFilter | None = None
) -> ImportResult:
    """One tool per operation of ``spec``. Raises ImportProblem on a broken spec."""
    if "swagger" in spec:
        raise ImportProblem(("swagger",), "Swagger 2.0 is not supported: convert it to OpenAPI 3")
    version = str(spec.get("openapi"))
    if not (version.startswith("3.0") or version.startswith("3.1")):
        raise ImportProblem(
            ("openapi",), f"OpenAPI version '{version}' is not supported (3.0 and 3.1 are)"
        )
    paths = spec.get("paths") or {}
    if not isinstance(paths, dict):
        raise ImportProblem(("paths",), "paths must be a mapping")
    result = ImportResult(source=source, format=f"openapi-{version[:3]}")
    resolver = Resolver(spec, result)
    only = only or OperationFilter()
    taken: dict[str, str] = {}
    for route, item in paths.items():
        item, item_path = resolver.deref(item, ("paths", route))
        if not isinstance(item, dict):
            raise ImportProblem(item_path, "a path item must be a mapping")
        for method in METHODS:
            op = item.get(method)
            if op is None:
                continue
            where: Path = (*item_path, method)
            if not isinstance(op, dict):
                raise ImportProblem(where, "an operation must be a mapping")
            tags = op.get("tags") or []
            if not only.keeps(route, [str(t) for t in tags]):
                continue
            result.items.append(
                _operation(resolver, route, method, item, op, where, item_path, taken)
            )
    if not result.items:
        result.note(None, "no operation imported (none in the spec, or all filtered out)")
    _spec_notes(spec, result)
    return result


def _operation(
    resolver: Resolver,
    route: str,
    method: str,
    item: dict[str, Any],
    op: dict[str, Any],
    where: Path,
    item_path: Path,
    names: dict[str, str],
) -> ImportedTool:
    label = f"{method.upper()} {route}"
    name = _name(resolver, op, method, route, label, names)
    resolver.start(name)
    body_props, body_required, closed = _body(resolver, op, where)
    taken: dict[str, Any] = dict(body_props)
    path_props: dict[str, Any] = {}
    other_props: dict[str, Any] = {}
    required: list[str] = []
    for param, param_path in _parameters(resolver, item, op, item_path, where):
        key, schema, needed = _parameter(resolver, param, param_path, taken)
        if key is None:
            continue
        taken[key] = schema
        (path_props if param["in"] == "path" else other_props)[key] = schema
        if needed:
            required.append(key)
    # path parameters first, then the body, then query and header parameters
    properties = {**path_props, **body_props, **other_props}
    required = [k for k in properties if k in required or k in body_required]
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    if closed:
        parameters["additionalProperties"] = False
    effect = EFFECTS[method]
    if op.get("deprecated") is True:
        resolver.note("the operation is deprecated", where, Level.info)
    resolver.finish()
    tool = SuiteTool(
        name=name,
        description=_description(resolver, op, where),
        parameters=parameters,
        effect=effect,
        risk=RISKS[effect],
    )
    return ImportedTool(tool=tool, raw=op, comment=label)


def _name(
    resolver: Resolver,
    op: dict[str, Any],
    method: str,
    route: str,
    label: str,
    taken: dict[str, str],
) -> str:
    op_id = op.get("operationId")
    base = sanitise(op_id) if isinstance(op_id, str) and op_id else sanitise(f"{method}_{route}")
    name = unique(base, set(taken))
    if name != base:
        resolver.result.note(
            name,
            f"name collision: {label} and {taken[base]} both give '{base}'; "
            f"this one is named '{name}'",
        )
    elif not isinstance(op_id, str) or not op_id:
        resolver.result.note(name, f"{label} has no operationId; named '{name}'", Level.info)
    elif name != op_id:
        resolver.result.note(
            name, f"operationId '{op_id}' is not a valid tool name everywhere; named '{name}'"
        )
    taken[name] = label
    return name


def _parameters(
    resolver: Resolver, item: dict[str, Any], op: dict[str, Any], item_path: Path, where: Path
) -> list[tuple[dict[str, Any], Path]]:
    """Path-level then operation-level parameters; the operation's win on (name, in)."""
    chosen: dict[tuple[str, str], tuple[dict[str, Any], Path]] = {}
    for owner, owner_path in ((item, item_path), (op, where)):
        listed = owner.get("parameters") or []
        if not isinstance(listed, list):
            raise ImportProblem((*owner_path, "parameters"), "parameters must be a list")
        for i, raw in enumerate(listed):
            param, path = resolver.deref(raw, (*owner_path, "parameters", i))
            if not isinstance(param, dict):
                raise ImportProblem(path, "a parameter must be a mapping")
            name, location = param.get("name"), param.get("in")
            if not isinstance(name, str) or location not in ("path", "query", "header", "cookie"):
                raise ImportProblem(
                    path, "a parameter needs a name and 'in' (path, query, header or cookie)"
                )
            chosen[(name, location)] = (param, path)
    return list(chosen.values())


def _parameter(
    resolver: Resolver, param: dict[str, Any], path: Path, taken: dict[str, Any]
) -> tuple[str | None, Any, bool]:
    name, location = param["name"], param["in"]
    if location == "cookie":
        resolver.note(f"cookie parameter '{name}' not carried", path)
        return None, None, False
    if location == "header" and name.lower() in _IGNORED_HEADERS:
        resolver.note(
            f"header '{name}' is set by the client, not the model; skipped", path, Level.info
        )
        return None, None, False
    if "schema" in param:
        schema = resolver.schema(param["schema"], (*path, "schema"))
    elif isinstance(param.get("content"), dict) and param["content"]:
        media, content = next(iter(param["content"].items()))
        schema = resolver.schema(
            (content or {}).get("schema", {}), (*path, "content", media, "schema")
        )
    else:
        resolver.note(f"parameter '{name}' has no schema; any value accepted", path)
        schema = {}
    if isinstance(schema, dict):
        schema = dict(schema)
        if isinstance(param.get("description"), str) and "description" not in schema:
            schema = {"description": param["description"], **schema}
        if "example" in param and "examples" not in schema:
            schema["examples"] = [param["example"]]
        if param.get("deprecated") is True:
            schema["deprecated"] = True
    key = name
    if key in taken:
        key = unique(f"{name}_{location}", set(taken))
        resolver.note(
            f"{location} parameter '{name}' collides with another argument of that name; "
            f"named '{key}'",
            path,
        )
    return key, schema, location == "path" or param.get("required") is True


def _body(
    resolver: Resolver, op: dict[str, Any], where: Path
) -> tuple[dict[str, Any], list[str], bool]:
    """(properties, required, closed) contributed by the request body."""
    if "requestBody" not in op:
        return {}, [], False
    body, path = resolver.deref(op["requestBody"], (*where, "requestBody"))
    if not isinstance(body, dict) or not isinstance(body.get("content"), dict):
        raise ImportProblem(path, "a request body needs 'content'")
    content: dict[str, Any] = body["content"]
    media = _media_type(content)
    if media is None:
        resolver.note(
            f"request body of type {', '.join(content)} not carried (JSON or form only)",
            (*path, "content"),
        )
        return {}, [], False
    if media not in ("application/json",) and not media.endswith("json"):
        resolver.note(f"request body imported from {media}", (*path, "content", media), Level.info)
    raw_schema = (content[media] or {}).get("schema", {})
    schema = resolver.schema(raw_schema, (*path, "content", media, "schema"), request=True)
    needed = body.get("required") is True
    if isinstance(schema, dict) and _plain_object(schema):
        extra = set(schema) - {
            "type",
            "properties",
            "required",
            "additionalProperties",
            "description",
            "title",
            "examples",
        }
        if extra:
            resolver.note(
                f"request body keyword(s) {', '.join(sorted(extra))} not carried "
                "when its properties are merged",
                path,
            )
        required = list(schema.get("required") or [])
        if required and not needed:
            resolver.note(
                "the request body is optional, so its required properties are imported as optional",
                path,
                Level.info,
            )
            required = []
        closed = schema.get("additionalProperties") is False
        return dict(schema.get("properties") or {}), required, closed
    return {"body": schema}, ["body"] if needed else [], False


def _plain_object(schema: dict[str, Any]) -> bool:
    return (schema.get("type") == "object" or "properties" in schema) and not any(
        k in schema for k in ("oneOf", "anyOf", "allOf", "not", "if")
    )


def _media_type(content: dict[str, Any]) -> str | None:
    if "application/json" in content:
        return "application/json"
    for media in content:
        if media.split(";")[0].strip().endswith("json"):
            return media
    for media in _FORM_TYPES:
        if media in content:
            return media
    return None


def _description(resolver: Resolver, op: dict[str, Any], where: Path) -> str:
    summary = op.get("summary") if isinstance(op.get("summary"), str) else ""
    detail = op.get("description") if isinstance(op.get("description"), str) else ""
    summary, detail = (summary or "").strip(), (detail or "").strip()
    if not summary and not detail:
        resolver.note("no summary or description: the model sees only the name", where)
        return ""
    if summary and detail and not detail.startswith(summary):
        return f"{summary}\n\n{detail}"
    return detail or summary


def _spec_notes(spec: dict[str, Any], result: ImportResult) -> None:
    for key in ("servers", "security"):
        if spec.get(key):
            result.note(
                None, f"'{key}' not carried: toolproof only shows the model the tools", Level.info
            )
