"""BFCL (the Berkeley Function-Calling Leaderboard) as toolproof suites.

``bfcl_data_dir()`` finds the data that ships inside the ``bfcl-eval`` package
(``bfcl_eval/data/``) without importing the package, or takes a folder laid
out the same way. ``import_bfcl()`` reads the single-turn categories and
returns one suite per category, as data ready to write:

- every entry keeps its own function definitions (``tools`` in the case);
  BFCL's types become JSON Schema as BFCL maps them for OpenAI-style models
  (``dict`` → object, ``float`` → number, ``tuple`` → array, ``any`` and
  unknown types → string), with the hints BFCL adds to descriptions; in the
  Java and JavaScript categories every parameter is a string holding source
  text, as BFCL sends them;
- the ground truth's lists of acceptable values become ``one_of``, and ``""``
  among them ``optional`` (never one alternative per combination);
- the suites opt in to the ``bfcl`` matcher profile (``defaults.matching``),
  which compares text and numbers as BFCL's checker does.

The multi-turn categories (``multi_turn_base``, ``multi_turn_miss_param``,
``multi_turn_long_context``, ``multi_turn_miss_func``) become conversation cases
run on BFCL's own classes: see :mod:`toolproof.importers._bfcl_multi`. The
categories BFCL scores another way (memory, web search, format sensitivity) are
skipped and counted, with the reason. Entries that cannot be
read (a line that is not JSON, a missing answer, an unknown shape) are skipped
and counted with their file and line.
"""

from __future__ import annotations

import importlib.util
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from toolproof._shared.json_numbers import DuplicateKey, duplicate_key_error, no_duplicate_keys
from toolproof._shared.schema_validators import check_value
from toolproof.errors import UserError
from toolproof.match import MISSING, literal_values, standardize

__all__ = [
    "CATEGORIES",
    "NOT_IMPORTED",
    "BfclCategory",
    "BfclImport",
    "BfclSkip",
    "BfclSuite",
    "bfcl_data_dir",
    "convert_function",
    "expected_args",
    "import_bfcl",
    "java_source",
    "write_bfcl",
]

Kind = Literal[
    "simple", "multiple", "parallel", "parallel_multiple", "irrelevance", "relevance", "multi_turn"
]
Language = Literal["python", "java", "javascript"]


@dataclass(frozen=True)
class BfclCategory:
    name: str
    kind: Kind
    language: Language = "python"


#: The single-turn categories, by BFCL's category name (the file is BFCL_v4_<name>.json).
CATEGORIES: dict[str, BfclCategory] = {
    c.name: c
    for c in (
        BfclCategory("simple_python", "simple"),
        BfclCategory("simple_java", "simple", "java"),
        BfclCategory("simple_javascript", "simple", "javascript"),
        BfclCategory("multiple", "multiple"),
        BfclCategory("parallel", "parallel"),
        BfclCategory("parallel_multiple", "parallel_multiple"),
        BfclCategory("irrelevance", "irrelevance"),
        BfclCategory("live_simple", "simple"),
        BfclCategory("live_multiple", "multiple"),
        BfclCategory("live_parallel", "parallel"),
        BfclCategory("live_parallel_multiple", "parallel_multiple"),
        BfclCategory("live_irrelevance", "irrelevance"),
        BfclCategory("live_relevance", "relevance"),
        BfclCategory("multi_turn_base", "multi_turn"),
        BfclCategory("multi_turn_miss_param", "multi_turn"),
        BfclCategory("multi_turn_long_context", "multi_turn"),
        BfclCategory("multi_turn_miss_func", "multi_turn"),
    )
}

#: Categories BFCL scores with something other than its AST checker, and what is missing.
NOT_IMPORTED: dict[str, str] = {
    "memory": "memory: needs BFCL's memory backends and prerequisite conversations",
    "web_search": "web search: needs a live search backend and BFCL's agentic checker",
    "format_sensitivity": "format sensitivity: prompting-format variants of other "
    "categories, scored by BFCL's prompt handlers",
}

_PREFIX = "BFCL_v4_"

#: BFCL's type names and the JSON Schema type they are sent as (its OpenAI mapping).
_TYPES = {
    "integer": "integer",
    "number": "number",
    "float": "number",
    "string": "string",
    "boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "list": "array",
    "dict": "object",
    "object": "object",
    "tuple": "array",
    "any": "string",
    "byte": "integer",
    "short": "integer",
    "long": "integer",
    "double": "number",
    "char": "string",
    "ArrayList": "array",
    "Array": "array",
    "HashMap": "object",
    "Hashtable": "object",
    "Queue": "array",
    "Stack": "array",
    "Any": "string",
    "String": "string",
    "Bigint": "integer",
}

_HINT = {
    "python": " Note that the provided function is in Python 3 syntax.",
    "java": " Note that the provided function is in Java 8 SDK syntax.",
    "javascript": " Note that the provided function is in JavaScript syntax.",
}
_LANGUAGE_NAME = {"java": "Java", "javascript": "JavaScript"}

#: Deepest schema nesting converted (deeper: a located skip, never a recursion error).
_MAX_DEPTH = 32


@dataclass(frozen=True)
class BfclSkip:
    """One entry (or category) not imported, and why."""

    where: str
    reason: str


@dataclass
class BfclSuite:
    category: BfclCategory
    suite: dict[str, Any]
    cases: list[dict[str, Any]]
    files: dict[str, str] = field(default_factory=dict)
    """Other files of the suite's folder, by path inside it (a multi-turn suite's env/)."""


@dataclass
class BfclImport:
    data_dir: Path
    suites: list[BfclSuite] = field(default_factory=list)
    skipped: list[BfclSkip] = field(default_factory=list)
    categories_skipped: list[BfclSkip] = field(default_factory=list)
    dropped: list[BfclSkip] = field(default_factory=list)
    """Acceptable values left out of a case because they break its tool's schema."""
    confined: Path | None = None
    """The folder (links followed) every file read must be in: ``--data``'s; None for the
    installed package's."""


def bfcl_data_dir(explicit: str | Path | None = None) -> Path:
    """The folder holding BFCL's data: ``explicit``, or the installed ``bfcl_eval`` package's.

    The package is located, never imported (importing it writes folders).
    """
    if explicit is not None:
        path = Path(explicit)
        if not path.is_dir():
            raise UserError(f"{path}: not a folder (--data needs BFCL's data folder)")
        return path
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        from toolproof._shared.install_hint import install_hint

        raise UserError(
            f"BFCL's data ships in the bfcl-eval package: {install_hint('bfcl')} "
            "(or pip install --no-deps bfcl-eval, enough for the data), or give --data DIR"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "data"
    if not path.is_dir():
        raise UserError(f"{path}: the installed bfcl-eval has no data folder")
    return path


def _lines(path: Path, skipped: list[BfclSkip]) -> Iterator[tuple[int, dict[str, Any]]]:
    """The JSON objects of a JSONL file, by line; an unreadable line is a counted skip."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read: {exc}") from None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line, object_pairs_hook=no_duplicate_keys)
        except DuplicateKey as exc:  # a plain reader would keep the last value, unsaid
            where = duplicate_key_error(line, exc)
            why = f"{exc} (column {where.colno}): an entry names a key once"
            try:  # read once more only to name the entry
                named = json.loads(line)
            except (ValueError, RecursionError):
                named = None
            if isinstance(named, dict) and isinstance(named.get("id"), str):
                why = f"{named['id']}: {why}"
            skipped.append(BfclSkip(f"{path}:{number}", why))
            continue
        except (ValueError, RecursionError) as exc:
            skipped.append(BfclSkip(f"{path}:{number}", f"not JSON ({exc}); truncated?"))
            continue
        if not isinstance(value, dict) or not isinstance(value.get("id"), str):
            skipped.append(BfclSkip(f"{path}:{number}", "not an entry (no string 'id')"))
            continue
        yield number, value


def read_answers(answer_path: Path, path: Path, result: BfclImport) -> dict[str, dict[str, Any]]:
    """The ground truth of the category file ``path``, by id: a UserError naming the file
    when it is missing, cannot be read, or holds no entry (never a suite of no case)."""
    inside(answer_path, result)
    if not answer_path.is_file():
        raise UserError(f"{answer_path}: missing (the ground truth of {path.name})")
    why = f", so no entry of {path.name} has a ground truth"
    return {e["id"]: e for _, e in entries(answer_path, result, why)}


def entries(path: Path, result: BfclImport, why: str = "") -> list[tuple[int, dict[str, Any]]]:
    """The entries of a JSONL file, by line (unreadable lines: counted skips); a UserError
    naming the file when it holds none (a category is never a suite of no case unsaid)."""
    before = len(result.skipped)
    found = list(_lines(path, result.skipped))
    if not found:
        bad = result.skipped[before:]
        first = f" (line {bad[0].where.rsplit(':', 1)[1]}: {bad[0].reason})" if bad else ""
        raise UserError(
            f"{path}: holds no entry (no line is a JSON object with a string 'id'){why}{first}"
        )
    return found


def inside(path: Path, result: BfclImport) -> Path:
    """``path``, when it stays inside the ``--data`` folder once its symbolic links are
    followed; a link leading out of it is refused, naming the file and where it leads (the
    folder may come from anyone: it never makes the import read elsewhere). The installed
    package's own folder is not confined (it holds no link)."""
    if result.confined is None:
        return path
    try:
        target = path.resolve()
    except (OSError, RuntimeError) as exc:  # a loop of links
        raise UserError(f"{path}: cannot follow its symbolic links: {exc}") from None
    if not target.is_relative_to(result.confined):
        raise UserError(
            f"{path}: leads out of the data folder ({result.confined}) through a symbolic "
            f"link, to {target}: not read"
        )
    return path


def _convert_type(name: Any) -> str:
    return _TYPES.get(name, "string") if isinstance(name, str) else "string"


def _schema(prop: Any, depth: int = 0) -> dict[str, Any]:
    """One BFCL property as JSON Schema (BFCL's type mapping, applied at every depth)."""
    if depth > _MAX_DEPTH:
        raise ValueError(f"nested deeper than {_MAX_DEPTH} levels")
    if not isinstance(prop, dict):
        raise ValueError(f"a property is {type(prop).__name__}, not an object")
    out = dict(prop)
    raw = prop.get("type")
    out["type"] = _convert_type(raw)
    if raw == "float":
        out["format"] = "float"
        out["description"] = str(prop.get("description", "")) + " This is a float type value."
    for key in ("optional", "required"):
        if key in out and not isinstance(out[key], list):
            out.pop(key)  # BFCL's per-property flags (true/false): not JSON Schema
    if out["type"] == "object" and isinstance(prop.get("properties"), dict):
        out["properties"] = {str(k): _schema(v, depth + 1) for k, v in prop["properties"].items()}
    if out["type"] == "array" and isinstance(prop.get("items"), dict):
        out["items"] = _schema(prop["items"], depth + 1)
    elif "items" in out and out["type"] != "array":
        out.pop("items")
    return out


def _source_property(prop: dict[str, Any], language: Language) -> dict[str, Any]:
    """A Java or JavaScript parameter as BFCL sends it: a string holding source text."""
    kind = prop.get("type")
    desc = str(prop.get("description", ""))
    lang = _LANGUAGE_NAME[language]
    if kind == "any":
        desc += f" This parameter can be of any type of {lang} object in string representation."
    else:
        desc += f" This is {lang} {kind} type parameter in string representation."
    items = prop.get("items")
    if kind in (("ArrayList", "Array") if language == "java" else ("array",)) and isinstance(
        items, dict
    ):
        desc += (
            f" The list elements are of type {items.get('type')}; they are not in string "
            "representation."
        )
    if language == "javascript" and kind == "dict" and isinstance(prop.get("properties"), dict):
        desc += (
            " The dictionary entries have the following schema; they are not in string "
            f"representation. {json.dumps(prop['properties'])}"
        )
    out = {k: v for k, v in prop.items() if k not in ("items", "properties", "type")}
    out["type"] = "string"
    out["description"] = desc
    return out


def convert_function(fn: Any, language: Language) -> dict[str, Any]:
    """A BFCL function definition as a toolproof tool (a case's own definition).

    Raises ValueError for a definition that is not one.
    """
    if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
        raise ValueError("a function needs a string 'name'")
    params = fn.get("parameters", {})
    if not isinstance(params, dict):
        raise ValueError(f"function '{fn['name']}': 'parameters' is not an object")
    props = params.get("properties", {})
    if not isinstance(props, dict):
        raise ValueError(f"function '{fn['name']}': 'properties' is not an object")
    if language == "python":
        properties = {str(k): _schema(v) for k, v in props.items()}
    else:
        for k, v in props.items():
            if not isinstance(v, dict):
                raise ValueError(f"function '{fn['name']}': property '{k}' is not an object")
        properties = {str(k): _source_property(v, language) for k, v in props.items()}
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    required = params.get("required")
    if isinstance(required, list) and required:
        schema["required"] = [str(r) for r in required]
    return {
        "name": fn["name"],
        "description": str(fn.get("description", "")) + _HINT[language],
        "parameters": schema,
    }


_JAVA_ELEMENT = {
    "integer": "int",
    "long": "long",
    "float": "float",
    "double": "double",
    "boolean": "boolean",
    "String": "String",
    "char": "char",
}


def java_source(value: Any, language: Language, prop: dict[str, Any] | None = None) -> str:
    """A ground-truth value as the source text a model writes for it (Java/JavaScript).

    ``prop``: the parameter's BFCL definition, whose type picks the spelling BFCL's
    parsers read (``42L`` for a Java long, ``1.5f`` for a float, ``new int[]{...}``).
    """
    kind = prop.get("type") if prop is not None else None
    items = prop.get("items") if prop is not None else None
    item_prop = items if isinstance(items, dict) else None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float) and language == "java":
        if kind == "long":
            return f"{int(value)}L"
        if kind == "float":
            return f"{float(value)}f"
        return repr(float(value)) if kind == "double" else repr(value)
    if isinstance(value, int | float):
        return repr(value)
    if value is None:
        return "null"
    if language == "java" and isinstance(value, list):
        parts = [_java_item(v, item_prop) for v in value]
        if kind == "Array":
            element = _JAVA_ELEMENT.get(str(item_prop.get("type")) if item_prop else "", "Object")
            return f"new {element}[]{{{', '.join(parts)}}}"
        return f"new ArrayList<>(Arrays.asList({', '.join(parts)}))"
    if language == "java" and isinstance(value, dict):
        puts = " ".join(f'put("{k}", {_java_item(_first(v), None)});' for k, v in value.items())
        return f"new HashMap<>() {{{{ {puts} }}}}"
    return json.dumps(_first_options(value), ensure_ascii=False)


def _first(options: Any) -> Any:
    """A dict entry's first acceptable value (BFCL lists them per key)."""
    if isinstance(options, list):
        return next((o for o in options if not (type(o) is str and o == "")), "")
    return options


def _first_options(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _first_options(_first(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_first_options(v) for v in value]
    return value


def _java_item(value: Any, prop: dict[str, Any] | None) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return java_source(value, "java", prop)


def _param_schema(tool: dict[str, Any], param: str) -> dict[str, Any] | None:
    prop = tool["parameters"]["properties"].get(param)
    return prop if isinstance(prop, dict) else None


def _value(
    value: Any, json_type: str | None, language: Language, raw: dict[str, Any] | None = None
) -> Any:
    """One acceptable value of a parameter, in the expectation language."""
    if language != "python":
        return java_source(value, language, raw)
    if json_type == "number" and type(value) is int:
        return float(value)  # BFCL accepts an int for a float parameter, and equal floats
    if isinstance(value, dict):
        return _dict_value(value)
    if isinstance(value, list):  # a list of dicts lists acceptable values per key too
        return [_dict_value(v) if isinstance(v, dict) else v for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"the value {value!r} cannot be written in JSON")
    return value


def _dict_value(value: dict[str, Any]) -> dict[str, Any]:
    """A dict parameter's acceptable value: BFCL lists acceptable values per key."""
    out: dict[str, Any] = {}
    for key, options in value.items():
        if isinstance(options, list):
            out[key] = _alternatives(options, None, "python", nested=True)
        else:
            out[key] = options
    return out


@dataclass
class _Dropped:
    """Acceptable values left out because they break the tool's own schema."""

    values: list[str] = field(default_factory=list)


def _fits(prop: dict[str, Any] | None, value: Any) -> Any:
    """``value`` if the parameter's schema accepts it; an enum member BFCL reads as equal
    to it (a string); else MISSING."""
    if prop is None or literal_values(value) is MISSING or check_value(prop, value) is None:
        return value
    if isinstance(value, str) and isinstance(prop.get("enum"), list):
        for member in prop["enum"]:
            if isinstance(member, str) and standardize(member) == standardize(value):
                return member if check_value(prop, member) is None else MISSING
    return MISSING


#: The Python type BFCL's checker wants for each of its parameter types.
_PY_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "any": str,
}
#: The same for a JSON Schema type (a parameter type BFCL has no entry for).
_JSON_PY_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
}


def _bfcl_type(raw: dict[str, Any] | None, json_type: Any) -> type | None:
    """The Python type BFCL's checker wants for a parameter (None: not known)."""
    kind = raw.get("type") if raw is not None else None
    if isinstance(kind, str) and kind in _PY_TYPES:
        return _PY_TYPES[kind]
    return _JSON_PY_TYPES.get(json_type) if isinstance(json_type, str) else None


def _passes_bfcl_type(value: Any, want: type | None, first: type | None) -> bool:
    """BFCL's type check of a top-level value: the parameter's type (an int for a float),
    or the type of the ground truth's first acceptable value (BFCL's "variable")."""
    kind = type(value)
    return want is None or kind is want or kind is first or (want is float and kind is int)


def _alternatives(
    options: list[Any],
    prop: dict[str, Any] | None,
    language: Language,
    nested: bool = False,
    dropped: _Dropped | None = None,
    raw: dict[str, Any] | None = None,
    profile: str = "bfcl",
) -> Any:
    """BFCL's list of acceptable values as one expectation: one_of, optional, or a value.

    Values no answer can pass are left out and noted in ``dropped``. In the ``bfcl``
    profile those are the values BFCL's own type check refuses (neither the parameter's
    type nor that of the ground truth's first value); the JSON Schema does not decide
    there (see ``grade.ProfileSchema``). A string BFCL compares exactly (a "variable": the
    first value's type is not the parameter's) stays exact. In the ``strict`` profile they
    are the values the parameter's schema refuses (a call holding one fails the schema
    check before its values are compared).
    """
    json_type = prop.get("type") if prop is not None else None
    optional = any(type(o) is str and o == "" for o in options)
    kept = [o for o in options if not (type(o) is str and o == "")]
    lenient = profile == "bfcl" and not nested and language == "python"
    want = _bfcl_type(raw, json_type) if lenient else None
    first = type(kept[0]) if kept else None
    variable = lenient and first is not None and want is not None and first is not want
    values: list[Any] = []
    for option in kept:
        v = _nested(option) if nested else _value(option, json_type, language, raw)
        if lenient:
            if not _passes_bfcl_type(option, want, first):
                if dropped is not None:
                    dropped.values.append(repr(v)[:60])
                continue
            if variable and type(v) is str:
                v = {"exact": v}  # BFCL compares a "variable" as it is, not standardised
        elif not nested and language == "python":
            fitted = _fits(prop, v)
            if fitted is MISSING:
                if dropped is not None:
                    dropped.values.append(repr(v)[:60])
                continue
            v = fitted
        if not any(type(w) is type(v) and w == v for w in values):
            values.append(v)
    if lenient:
        if optional and str in (want, first):
            values.append({"exact": ""} if variable else "")  # BFCL passes a literal "" too
    elif optional and (nested or json_type == "string") and _fits(prop, "") == "":
        values.append("")  # BFCL lets a literal empty string through too
    if not values:
        if not optional and kept:
            raise ValueError("no acceptable value fits the tool's own schema")
        return {"absent": True}
    spec = values[0] if len(values) == 1 else {"one_of": values}
    return {"optional": spec} if optional else spec


def _nested(value: Any) -> Any:
    if isinstance(value, dict):
        return _dict_value(value)
    return value


def expected_args(
    answer: dict[str, Any],
    tool: dict[str, Any] | None,
    language: Language,
    dropped: _Dropped | None = None,
    raw: dict[str, Any] | None = None,
    profile: str = "bfcl",
) -> dict[str, Any]:
    """The expected arguments of one ground-truth call (``tool``: its converted definition;
    ``raw``: BFCL's own, whose types pick the spelling of Java and JavaScript values)."""
    out: dict[str, Any] = {}
    for param, options in answer.items():
        if not isinstance(options, list):
            raise ValueError(f"parameter '{param}': acceptable values are not a list")
        prop = _param_schema(tool, param) if tool is not None else None
        if tool is not None and prop is None:
            raise ValueError(
                f"the ground truth gives '{param}', which '{tool['name']}' does not define "
                "(no answer can pass BFCL's checker)"
            )
        try:
            raw_props = raw.get("parameters", {}).get("properties", {}) if raw else {}
            raw_prop = raw_props.get(param) if isinstance(raw_props, dict) else None
            out[param] = _alternatives(
                options,
                prop,
                language,
                dropped=dropped,
                raw=raw_prop if raw_prop else None,
                profile=profile,
            )
        except ValueError as exc:
            raise ValueError(f"parameter '{param}': {exc}") from None
    return out


def _question(entry: dict[str, Any]) -> list[dict[str, Any]]:
    turns = entry.get("question")
    if not isinstance(turns, list) or not turns:
        raise ValueError("no 'question'")
    if len(turns) != 1:
        raise ValueError(f"{len(turns)} turns: a multi-turn entry")
    messages = turns[0]
    if not isinstance(messages, list) or not messages:
        raise ValueError("the question's turn holds no messages")
    out = []
    for m in messages:
        if not isinstance(m, dict) or m.get("role") not in ("system", "user", "assistant"):
            raise ValueError("a message needs a role of system, user or assistant")
        if not isinstance(m.get("content"), str):
            raise ValueError("a message needs string 'content'")
        out.append({"role": m["role"], "content": m["content"]})
    return out


def _case(
    entry: dict[str, Any],
    answer: dict[str, Any] | None,
    cat: BfclCategory,
    dropped: _Dropped | None = None,
    profile: str = "bfcl",
) -> dict[str, Any]:
    """One BFCL entry as a toolproof case (raises ValueError for one that is not one)."""
    messages = _question(entry)
    functions = entry.get("function")
    if not isinstance(functions, list):
        raise ValueError("'function' is not a list")
    tools = [convert_function(fn, cat.language) for fn in functions]
    case: dict[str, Any] = {"id": entry["id"]}
    if len(messages) == 1 and messages[0]["role"] == "user":
        case["prompt"] = messages[0]["content"]
    else:
        case["messages"] = messages
    case["tools"] = tools
    if cat.kind == "irrelevance":
        case["expect"] = {"kind": "none"}
    elif cat.kind == "relevance":
        case["expect"] = {"kind": "call", "count": {"min": 1}}
    else:
        case["expect"] = _expect(answer, tools, cat, dropped, functions, profile)
    case["tags"] = ["bfcl", cat.name]
    return case


def _expect(
    answer: dict[str, Any] | None,
    tools: list[dict[str, Any]],
    cat: BfclCategory,
    dropped: _Dropped | None = None,
    functions: list[Any] | None = None,
    profile: str = "bfcl",
) -> dict[str, Any]:
    if answer is None:
        raise ValueError("no ground truth for this id")
    truth = answer.get("ground_truth")
    if not isinstance(truth, list) or not truth:
        raise ValueError("'ground_truth' is not a non-empty list")
    by_name = {t["name"]: t for t in tools}
    calls = []
    for call in truth:
        if not isinstance(call, dict) or len(call) != 1:
            raise ValueError("a ground-truth call is not {name: {parameter: [values]}}")
        ((name, args),) = call.items()
        if not isinstance(args, dict):
            raise ValueError(f"ground truth of '{name}': arguments are not an object")
        if name not in by_name:
            raise ValueError(f"the ground truth calls '{name}', which the entry does not define")
        raw = next(
            (f for f in functions or () if isinstance(f, dict) and f.get("name") == name), None
        )
        expected = expected_args(args, by_name[name], cat.language, dropped, raw, profile)
        calls.append({"tool": name, "args": expected})
    if len(calls) == 1:
        return {"call": calls[0]["tool"], "args": calls[0]["args"]}
    return {"calls": calls, "order": "unordered"}


def _category_of(stem: str) -> str:
    return stem[len(_PREFIX) :] if stem.startswith(_PREFIX) else stem


def import_bfcl(
    data_dir: str | Path | None = None,
    categories: list[str] | None = None,
    profile: str = "bfcl",
    underscore_names: bool = False,
) -> BfclImport:
    """Read BFCL's single-turn categories as suites (see the module).

    ``underscore_names``: dots in function names become underscores, in the tools
    and the expected calls alike, as BFCL does for providers whose tool names
    cannot hold a dot (OpenAI, Anthropic, Gemini, Mistral...).
    """
    root = bfcl_data_dir(data_dir)
    result = BfclImport(root)
    if data_dir is not None:
        try:
            result.confined = root.resolve()
        except (OSError, RuntimeError) as exc:
            raise UserError(f"{root}: cannot follow its symbolic links: {exc}") from None
    wanted = list(categories) if categories else None
    if wanted:
        for name in wanted:
            if name not in CATEGORIES and not any(name.startswith(p) for p in NOT_IMPORTED):
                known = ", ".join(CATEGORIES)
                raise UserError(f"unknown BFCL category '{name}' (those imported: {known})")
    files = sorted(root.glob(f"{_PREFIX}*.json"))
    if not files:
        raise UserError(f"{root}: no {_PREFIX}*.json files (is this BFCL's data folder?)")
    found = {_category_of(path.stem) for path in files}
    for name in wanted or ():
        if name not in found:  # asked for by name: never a quiet import of nothing
            raise UserError(f"{root}: no {_PREFIX}{name}.json (asked for with --category {name})")
    for path in files:
        name = _category_of(path.stem)
        if wanted is not None and name not in wanted:
            continue
        inside(path, result)
        cat = CATEGORIES.get(name)
        if cat is None:
            reason = next(
                (r for p, r in NOT_IMPORTED.items() if name.startswith(p)),
                "an unknown category: not imported",
            )
            entries = sum(1 for line in path.read_bytes().splitlines() if line.strip())
            result.categories_skipped.append(BfclSkip(str(path), f"{reason} ({entries} entries)"))
            continue
        if cat.kind == "multi_turn":
            from toolproof.importers._bfcl_multi import read_multi_turn

            made = read_multi_turn(path, root, cat, profile, result)
            result.suites.append(made)
            continue
        made = _read_category(path, root, cat, profile, result)
        if underscore_names:
            made.cases = [_underscored(c) for c in made.cases]
        result.suites.append(made)
    return result


def _underscored(case: dict[str, Any]) -> dict[str, Any]:
    """A case with the dots of its tool names turned into underscores."""

    def name(n: str) -> str:
        return n.replace(".", "_")

    case = dict(case)
    case["tools"] = [{**t, "name": name(t["name"])} for t in case["tools"]]
    expect = dict(case["expect"])
    if "call" in expect:
        expect["call"] = name(expect["call"])
    if "calls" in expect:
        expect["calls"] = [{**c, "tool": name(c["tool"])} for c in expect["calls"]]
    case["expect"] = expect
    return case


def _read_category(
    path: Path, root: Path, cat: BfclCategory, profile: str, result: BfclImport
) -> BfclSuite:
    skipped = result.skipped
    answers: dict[str, dict[str, Any]] = {}
    if cat.kind not in ("irrelevance", "relevance"):
        answers = read_answers(root / "possible_answer" / path.name, path, result)
    cases = []
    for number, entry in entries(path, result):
        dropped = _Dropped()
        try:
            cases.append(_case(entry, answers.get(entry["id"]), cat, dropped, profile))
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            skipped.append(BfclSkip(f"{path}:{number}", f"{entry['id']}: {exc}"))
            continue
        if dropped.values:
            result.dropped.append(
                BfclSkip(f"{path}:{number}", f"{entry['id']}: {', '.join(dropped.values)}")
            )
    suite: dict[str, Any] = {
        "format": 1,
        "suite": f"bfcl-{cat.name}",
        "description": f"BFCL category {cat.name} ({cat.kind}, {cat.language}), "
        f"imported from {path.name}.",
        "defaults": {"matching": profile} if profile != "strict" else {},
        "tools": [],
        "cases_from": "cases.jsonl",
    }
    if not suite["defaults"]:
        del suite["defaults"]
    return BfclSuite(cat, suite, cases)


def write_bfcl(result: BfclImport, out: Path, force: bool = False) -> list[Path]:
    """Write each suite as ``OUT/<category>/suite.yaml`` with its ``cases.jsonl``.

    Refuses (a UserError naming it) to overwrite a file that exists, unless ``force``.
    Returns the suite files written.
    """
    import yaml

    targets = []
    for s in result.suites:
        folder = out / s.category.name
        for name in ("suite.yaml", "cases.jsonl", *s.files):
            _writable(folder / name)
            if ((folder / name).exists() or (folder / name).is_symlink()) and not force:
                raise UserError(f"{folder / name}: exists (--force to overwrite)")
        targets.append((folder, s))
    written = []
    try:
        for folder, s in targets:
            folder.mkdir(parents=True, exist_ok=True)
            header = yaml.safe_dump(s.suite, sort_keys=False, allow_unicode=True)
            (folder / "suite.yaml").write_text(header, encoding="utf-8")
            with (folder / "cases.jsonl").open("w", encoding="utf-8") as fh:
                for case in s.cases:
                    fh.write(json.dumps(case, ensure_ascii=False) + "\n")
            for name, text in s.files.items():
                (folder / name).parent.mkdir(parents=True, exist_ok=True)
                (folder / name).write_text(text, encoding="utf-8")
            written.append(folder / "suite.yaml")
    except OSError as exc:
        raise UserError(f"{exc.filename or out}: cannot be written: {exc.strerror}") from None
    return written


def _writable(path: Path) -> None:
    """Refuse (a UserError naming it) a file to write that is a folder, or that lies
    under something that is not one: checked before anything is written."""
    if path.is_dir():
        raise UserError(f"{path}: is a folder, where a file is to be written")
    for parent in path.parents:
        if parent.is_dir():
            return
        if parent.exists() or parent.is_symlink():
            raise UserError(f"{parent}: not a folder, so {path} cannot be written")
