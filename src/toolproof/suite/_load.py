"""Load a suite from YAML (and JSONL case files) into a resolved :class:`Suite`."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolproof._shared.gcpause import gc_paused
from toolproof._shared.locate import (
    JsonLineLocator,
    LazyLocator,
    Locator,
    Path_,
    Positions,
    all_errors,
    json_positions,
)
from toolproof._shared.schema_validators import schema_problems
from toolproof.errors import SuiteError, SuiteProblems
from toolproof.suite._yaml import load_yaml
from toolproof.trust import (
    DEFAULT_TRUST,
    PACING_BOUNDS,
    ROUTING_SETTINGS,
    TooDeep,
    Trust,
    UnsafePath,
    check_depth,
    has_long_digits,
    loads_json,
    pacing_problem,
    read_capped,
    resolve_inside,
)
from toolproof.types import (
    ARGUMENT_RUBRIC,
    BUILTIN_FIELDS,
    Case,
    CheckSpec,
    Defaults,
    Environment,
    Suite,
    SuiteJudge,
    SuiteTool,
    Thresholds,
    ToolMock,
)

SUITE_FILENAMES = ("suite.yaml", "suite.yml", "toolproof.yaml")


class SuiteFile(BaseModel):
    """The top level of a suite file, as written."""

    model_config = ConfigDict(extra="forbid")

    format: Literal[1] = Field(default=1, description="Suite format version.")
    suite: str = Field(description="The suite's name.")
    version: str | None = None
    description: str | None = None
    now: datetime | None = Field(default=None, description="The suite's 'now' for relative dates.")
    timezone: str = "UTC"
    system: str | None = Field(default=None, description="System prompt.")
    system_file: str | None = Field(default=None, description="File holding the system prompt.")
    tools: list[SuiteTool] | str = Field(description="Tool list, or a YAML file holding it.")
    defaults: Defaults = Field(default_factory=Defaults)
    thresholds: dict[Literal["default", "low", "medium", "high", "critical"], Thresholds] = Field(
        default_factory=dict
    )
    settings: dict[str, Any] = Field(
        default_factory=dict, description="Per-model settings: {MODEL_SPEC: {temperature: ...}}."
    )
    cases: list[Case] = Field(default_factory=list)
    cases_from: list[str] | str = Field(
        default_factory=list, description="Glob(s) of JSONL or YAML files with more cases."
    )
    mocks: dict[str, ToolMock] = Field(
        default_factory=dict, description="Mock tools for multi-step cases, by tool name."
    )
    environment: Environment | None = Field(
        default=None, description="A stateful environment for multi-step cases."
    )
    checks: list[CheckSpec] = Field(
        default_factory=list,
        description="The suite's own Python checks (FILE.py:FUNCTION inside the suite's "
        "folder). They run only with the user's consent (--allow-code).",
    )
    judge: SuiteJudge | None = Field(
        default=None, description="LLM judges: default judge and rubrics, custom rubrics."
    )


@dataclass
class Origin:
    """Where each case and tool came from, so later checks can point at a line."""

    cases: list[tuple[Locator, Path_]] = field(default_factory=list)
    tools: dict[str, tuple[Locator, Path_]] = field(default_factory=dict)
    suite: Locator | None = None
    code_names: list[tuple[Locator, Path_, str, str]] = field(default_factory=list)
    """Names a case calls in the tools file that are bound there otherwise than by a
    ``def`` (an import, an assignment, a class): accepted when loading with leave to run
    code, and checked to hold a function by running the file (``validate``)."""


@dataclass
class LoadedSuite:
    suite: Suite
    origin: Origin


def resolve_suite_path(path: str | Path) -> Path:
    p = Path(path)
    if p.is_dir():
        for name in SUITE_FILENAMES:
            if (p / name).is_file():
                try:  # the folder is the user's choice; its suite file must be in it
                    return resolve_inside(p, name)
                except UnsafePath as exc:
                    raise SuiteError(str(p / name), str(exc)) from None
        raise SuiteError(str(p), f"no suite file here (looked for {', '.join(SUITE_FILENAMES)})")
    if not p.exists():
        raise SuiteError(str(p), "file not found")
    return p


class _Reader:
    """Reads what a suite names: files inside its folder, size-capped, problems collected."""

    def __init__(self, root: Path, trust: Trust) -> None:
        self.root = root
        self.trust = trust
        self.problems: list[SuiteError] = []

    def add(self, error: SuiteError) -> None:
        self.problems.append(error)

    def path(self, where: Locator, field: Path_, name: str) -> Path | None:
        """The file ``name`` names, inside the suite's folder; None (and a problem) if not."""
        try:
            return resolve_inside(self.root, name)
        except UnsafePath as exc:
            self.add(where.error(field, str(exc)))
            return None

    def data(self, where: Locator, field: Path_, path: Path, name: str) -> bytes | None:
        try:
            return read_capped(path, self.trust.max_file_bytes, name)
        except FileNotFoundError:
            self.add(where.error(field, f"no such file '{name}'"))
        except UnsafePath as exc:
            self.add(where.error(field, str(exc)))
        except OSError as exc:
            self.add(where.error(field, f"cannot read '{name}': {exc.strerror or exc}"))
        return None

    def text(self, where: Locator, field: Path_, path: Path, name: str) -> str | None:
        data = self.data(where, field, path, name)
        if data is None:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.add(SuiteError(str(path), f"not UTF-8 text ({exc.reason} at byte {exc.start})"))
            return None

    def yaml(self, text: str, file: str) -> tuple[Any, Positions] | None:
        try:
            return load_yaml(text, file, self.trust)
        except SuiteError as exc:
            self.add(exc)
            return None

    def validate(
        self, model: type[BaseModel], data: Any, where: Locator, prefix: Path_ = ()
    ) -> Any:
        """The validated model, or None with every problem recorded."""
        try:  # what model_validate runs, without its wrapper (once per case)
            return model.__pydantic_validator__.validate_python(data)
        except ValidationError as exc:
            self.problems.extend(all_errors(exc, data, model, where, prefix))
            return None


def _load_tools(
    value: list[Any] | str, reader: _Reader, where: Locator, origin: Origin
) -> list[SuiteTool]:
    if isinstance(value, list):
        tools = []
        for i, item in enumerate(value):
            tool = reader.validate(SuiteTool, item, where, ("tools", i))
            if tool is not None:
                origin.tools.setdefault(tool.name, (where, ("tools", i)))
                tools.append(tool)
        return tools
    path = reader.path(where, ("tools",), value)
    text = None if path is None else reader.text(where, ("tools",), path, value)
    if text is None or path is None:
        return []
    data = _json_document(text, reader.trust) if path.suffix == ".json" else _NOT_JSON
    tools_where: Locator
    root: Path_ = ()
    if data is not _NOT_JSON:
        if isinstance(data, dict) and "tools" in data:  # a tools file: `tools: [...]`
            data, root = data["tools"], ("tools",)
        tools_where = LazyLocator(str(path), lambda: json_positions(text))
    else:  # YAML, or a .json file that only the YAML reader reads (it says what is wrong)
        parsed = reader.yaml(text, str(path))
        if parsed is None:
            return []
        data, found = parsed
        if isinstance(data, dict) and "tools" in data:
            data, root = data["tools"], ("tools",)
        tools_where = Locator(str(path), found)
    if not isinstance(data, list):
        reader.add(tools_where.error(root, "expected a list of tools"))
        return []
    tools = []
    for i, item in enumerate(data):
        tool = reader.validate(SuiteTool, item, tools_where, (*root, i))
        if tool is not None:
            origin.tools.setdefault(tool.name, (tools_where, (*root, i)))
            tools.append(tool)
    return tools


class _NotJson:
    pass


_NOT_JSON: Any = _NotJson()


class _DuplicateKey(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _DuplicateKey
    return out


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _json_document(text: str, trust: Trust) -> Any:
    """A JSON file's data, or _NOT_JSON when the JSON reader will not take it as it stands.

    Duplicate keys, NaN or Infinity, and nesting beyond the limit are left to
    the YAML reader (JSON is YAML), which reports each at its line.
    """
    try:
        data = json.loads(text, object_pairs_hook=_pairs, parse_constant=_refuse_constant)
        check_depth(data, trust.max_depth)
    except (ValueError, RecursionError):  # JSONDecodeError and TooDeep are ValueErrors
        return _NOT_JSON
    return data


def _load_case_file(path: Path, text: str, reader: _Reader, origin: Origin) -> list[Case]:
    if path.suffix in (".yaml", ".yml"):
        parsed = reader.yaml(text, str(path))
        if parsed is None:
            return []
        data, positions = parsed
        where = Locator(str(path), positions)
        if isinstance(data, dict) and "cases" in data:
            data = data["cases"]
            positions = {k[1:]: v for k, v in positions.items() if k[:1] == ("cases",)}
            where = Locator(str(path), positions)
        if not isinstance(data, list):
            reader.add(where.error((), "expected a list of cases"))
            return []
        cases = []
        for i, item in enumerate(data):
            case = reader.validate(Case, item, where, (i,))
            if case is not None:
                cases.append(case)
                origin.cases.append((where, (i,)))
        return cases
    return _load_jsonl_cases(path, text, reader, origin)


def _load_jsonl_cases(path: Path, text: str, reader: _Reader, origin: Origin) -> list[Case]:
    cases = []
    file = str(path)
    depth = reader.trust.max_depth
    checked = not has_long_digits(text)  # once for every line
    for number, line in enumerate(text.splitlines(), start=1):
        if not line or line.isspace():
            continue
        try:
            data = loads_json(line, depth, digits_checked=checked, unique_keys=True)
        except json.JSONDecodeError as exc:
            reader.add(
                SuiteError(file, f"not valid JSON: {exc.msg}", line=number, column=exc.colno)
            )
            continue
        except TooDeep as exc:
            reader.add(SuiteError(file, f"not accepted: {exc}", line=number, column=1))
            continue
        if not isinstance(data, dict):
            reader.add(
                SuiteError(
                    file, "expected a JSON object (one case per line)", line=number, column=1
                )
            )
            continue
        where = JsonLineLocator(file, number, line)
        case = reader.validate(Case, data, where)
        if case is not None:
            origin.cases.append((where, ()))
            cases.append(case)
    return cases


def _tools_file(path: str | Path, reader: _Reader, origin: Origin) -> list[SuiteTool] | None:
    """The tools of a tools file the user named; None (and a problem) when it cannot be read.

    The file is the user's choice (``run --tools FILE``), so it is read from
    where it is named, not confined to the suite's folder; its content is
    still untrusted YAML 1.2 (JSON is YAML), size-capped like the suite.
    """
    file = Path(path)
    if not file.is_file():
        reader.add(SuiteError(str(file), "no such tools file"))
        return None
    own = _Reader(file.parent, reader.trust)
    tools = _load_tools(file.name, own, Locator(str(file)), origin)
    reader.problems.extend(own.problems)
    return None if own.problems else tools


def load_tools_file(path: str | Path, trust: Trust = DEFAULT_TRUST) -> list[SuiteTool]:
    """The tools of a tools file (a list, or ``tools: [...]``, as ``tools import`` writes).

    Problems are raised together as :class:`~toolproof.errors.SuiteProblems`.
    """
    reader = _Reader(Path(path).parent, trust)
    tools = _tools_file(path, reader, Origin())
    if tools is None or reader.problems:
        raise SuiteProblems(reader.problems)
    return tools


def load_suite_with_origin(
    path: str | Path, trust: Trust = DEFAULT_TRUST, *, tools: str | Path | None = None
) -> LoadedSuite:
    """Load a suite and remember where each piece came from.

    Every file the suite names must be inside the suite's folder and within
    ``trust.max_file_bytes``. All the problems found are raised together as
    :class:`~toolproof.errors.SuiteProblems`. ``tools``: a tools file whose
    tools replace the suite's (``run --tools FILE``); the cases' own
    definitions are kept.
    """
    with gc_paused():
        return _load_suite_with_origin(path, trust, tools)


def _load_suite_with_origin(
    path: str | Path, trust: Trust, tools: str | Path | None
) -> LoadedSuite:
    file = resolve_suite_path(path)
    reader = _Reader(file.parent, trust)
    try:
        text = read_capped(file, trust.max_file_bytes).decode("utf-8")
    except UnsafePath as exc:
        raise SuiteError(str(file), str(exc)) from None
    except UnicodeDecodeError as exc:
        raise SuiteError(str(file), f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise SuiteError(str(file), exc.strerror or "cannot read file") from None
    data, positions = load_yaml(text, str(file), trust)
    where = Locator(str(file), positions)
    if not isinstance(data, dict):
        raise where.error((), "a suite file must be a mapping with 'suite', 'tools' and 'cases'")
    origin = Origin(suite=where)
    raw = _top_level(data, reader, where)
    _check_settings(data.get("settings"), where, reader)
    replacement, tools_source = tools, None
    before_tools = len(reader.problems)
    suite_tools = _load_tools(
        data["tools"] if isinstance(data.get("tools"), list) else raw.tools, reader, where, origin
    )
    if replacement is not None:
        origin.tools = {}
        suite_tools = _tools_file(replacement, reader, origin) or []
        tools_source = str(Path(replacement).resolve())
    tools_whole = len(reader.problems) == before_tools
    cases = _inline_cases(data.get("cases"), reader, where, origin)
    cases.extend(_cases_from(raw.cases_from, reader, where, origin))
    system = raw.system
    if raw.system_file is not None:
        if system is not None:
            reader.add(where.error(("system_file",), "give 'system' or 'system_file', not both"))
        found = reader.path(where, ("system_file",), raw.system_file)
        content = (
            None if found is None else reader.text(where, ("system_file",), found, raw.system_file)
        )
        system = content.strip() if content is not None else system
    digest = _environment_digest(raw.environment, reader, where)
    digest = _case_states(cases, origin, reader, digest)
    offered = {t.name for t in suite_tools} | {t.name for c in cases for t in c.definitions}
    _case_functions(cases, origin, reader, raw.environment, where, offered)
    _check_judges(raw.judge, cases, origin, where, reader)
    if reader.problems:
        # independent of the rest, so listed too (check_suite will not run)
        for tool in suite_tools:
            at, prefix = origin.tools.get(tool.name, (where, ()))
            for sub, message in schema_problems(tool.parameters):
                reader.add(at.error((*prefix, "parameters", *sub), message))
        problems = SuiteProblems(
            sorted(reader.problems, key=lambda e: (e.file, e.line or 0, e.column or 0))
        )
        if tools_whole:  # else a case naming a tool that did not parse would be "unknown"
            try:
                partial = Suite(
                    name=raw.suite, version=raw.version, now=raw.now, timezone=raw.timezone,
                    system=system, tools=suite_tools, defaults=raw.defaults,
                    settings=raw.settings, cases=cases, mocks=raw.mocks, checks=raw.checks,
                    environment=raw.environment, environment_digest=digest, judge=raw.judge,
                    source=str(file), tools_source=tools_source,
                )  # fmt: skip
                problems.partial = LoadedSuite(partial, origin)
            except ValueError:  # (a pydantic ValidationError): nothing more to check
                pass
        raise problems
    suite = Suite(
        name=raw.suite,
        version=raw.version,
        description=raw.description,
        now=raw.now,
        timezone=raw.timezone,
        system=system,
        tools=suite_tools,
        defaults=raw.defaults,
        thresholds={str(k): v for k, v in raw.thresholds.items()},
        settings=raw.settings,
        cases=cases,
        mocks=raw.mocks,
        checks=raw.checks,
        environment=raw.environment,
        environment_digest=digest,
        judge=raw.judge,
        source=str(file),
        tools_source=tools_source,
    )
    return LoadedSuite(suite, origin)


def _check_judges(
    judge: SuiteJudge | None, cases: list[Case], origin: Origin, where: Locator, reader: _Reader
) -> None:
    """Every rubric a case names exists; every judge threshold names a field of the right type."""
    judge = judge or SuiteJudge()
    fields = {**BUILTIN_FIELDS, **{n: r.fields for n, r in judge.rubrics.items()}}
    for (at, prefix), case in zip(origin.cases, cases, strict=True):
        if case.judge is None or case.judge is False:
            continue
        if case.judge is True:
            if not judge.default:
                reader.add(
                    at.error(
                        (*prefix, "judge"), "'judge: true' needs the suite's judge.default rubrics"
                    )
                )
            continue
        for j, name in enumerate(case.judge):
            if name == ARGUMENT_RUBRIC:
                reader.add(
                    at.error(
                        (*prefix, "judge", j),
                        f"'{ARGUMENT_RUBRIC}' judges single arguments: ask for it with "
                        "{semantic: TEXT, judge: true} on the argument, not in a case's judge:",
                    )
                )
            elif name not in fields:
                known = ", ".join(sorted(n for n in fields if n != ARGUMENT_RUBRIC))
                reader.add(
                    at.error((*prefix, "judge", j), f"unknown rubric {name!r}; known: {known}")
                )
    for key, th in judge.thresholds.items():
        rubric, _, name = key.partition(".")
        spec = fields.get(rubric, {}).get(name)
        at_key = ("judge", "thresholds", key)
        if spec is None:
            reader.add(where.error(at_key, "not a RUBRIC.FIELD of a known rubric"))
        elif th.min is not None and spec.type != "bool":
            reader.add(where.error(at_key, "'min' needs a bool field"))
        elif th.max is not None and spec.type != "int":
            reader.add(where.error(at_key, "'max' needs an int field"))


def _top_level(data: dict[str, Any], reader: _Reader, where: Locator) -> SuiteFile:
    """The suite file's own fields (cases and inline tools are checked one by one).

    A field with a problem is recorded and then left out, so that the rest of
    the suite can still be read and checked.
    """
    top = dict(data)
    top["cases"] = []
    if isinstance(top.get("tools"), list):
        top["tools"] = []
    raw: SuiteFile | None = reader.validate(SuiteFile, top, where)
    if raw is not None:
        return raw
    bad = {p.path[0] for p in reader.problems if p.path and p.file == where.file}
    fallback: dict[str, Any] = {"suite": "?", "tools": []}
    top = {k: v for k, v in top.items() if k not in bad}
    for key, value in fallback.items():
        top.setdefault(key, value)
    try:
        return SuiteFile.model_validate(top)
    except ValidationError:
        return SuiteFile.model_validate(fallback)


def _check_settings(settings: Any, where: Locator, reader: _Reader) -> None:
    """A suite may not choose where requests go or which key they carry, nor pace
    requests so slowly, or retry them so often, that a run never ends."""
    if not isinstance(settings, dict):
        return
    layer, prefix = settings, ("settings",)  # type: tuple[Any, Path_]
    if isinstance(settings.get("models"), dict):
        layer, prefix = settings["models"], ("settings", "models")
    for spec, values in layer.items():
        if not isinstance(values, dict):
            continue
        for key, value in values.items():
            problem = pacing_problem(key, value) if key in PACING_BOUNDS else None
            if problem is not None:
                reader.add(where.error((*prefix, spec, key), problem))
            if key in ROUTING_SETTINGS:
                reader.add(
                    where.error(
                        (*prefix, spec, key),
                        f"'{key}' chooses where requests and keys go, so a suite may not set it; "
                        "put it in your own toolproof.yaml "
                        f"(models: {{{json.dumps(spec)}: {{{key}: ...}}}}) "
                        "or the file you pass with --config",
                    )
                )


def _inline_cases(value: Any, reader: _Reader, where: Locator, origin: Origin) -> list[Case]:
    if value is None:
        return []
    if not isinstance(value, list):
        reader.add(where.error(("cases",), "expected a list of cases"))
        return []
    cases = []
    for i, item in enumerate(value):
        case = reader.validate(Case, item, where, ("cases", i))
        if case is not None:
            cases.append(case)
            origin.cases.append((where, ("cases", i)))
    return cases


#: At most this many case files per suite.
MAX_CASE_FILES = 10_000
#: Bounds on the folders a ``**`` in ``cases_from`` walks: pathlib's glob expands
#: each ``**`` on its own, so ``**/**/**/...`` over nested folders takes exponential time.
MAX_GLOB_FOLDERS = 10_000
MAX_GLOB_DEPTH = 32
#: Without --allow-code, a Python environment's tools file is parsed (never run) to check
#: the names a suite uses, up to this many characters: Python's parser takes a hundred
#: times a file's size and more in memory.
MAX_READ_TOOLS_CHARS = 1_000_000


def _glob_match(parts: list[str], names: list[str]) -> bool:
    """Whether path ``names`` matches glob ``parts`` (``**``: any number of folders).

    Dynamic programming over (pattern part, path part): linear in both, however
    many ``**`` the pattern holds.
    """
    from fnmatch import fnmatchcase

    # ok[j]: the pattern parts so far match the first j names
    ok = [True] + [False] * len(names)
    for part in parts:
        if part == "**":
            for j in range(1, len(names) + 1):
                ok[j] = ok[j] or ok[j - 1]
        else:
            ok = [False] + [
                ok[j - 1] and fnmatchcase(names[j - 1], part) for j in range(1, len(names) + 1)
            ]
    return ok[len(names)]


def _glob(root: Path, pattern: str) -> list[Path]:
    """The files and folders ``pattern`` matches under ``root``, walking a bounded tree.

    A pattern without ``**`` is pathlib's glob. With ``**``, the tree is walked
    once (at most :data:`MAX_GLOB_FOLDERS` folders, :data:`MAX_GLOB_DEPTH`
    deep) and each path matched against the whole pattern: linear in the tree,
    however many ``**`` the pattern holds. Raises ``ValueError`` past a bound.
    """
    if "**" not in pattern:
        return sorted(root.glob(pattern))
    parts = [p for p in pattern.replace("\\", "/").split("/") if p not in ("", ".")]
    folders_only = parts[-1] == "**"  # as pathlib: a trailing '**' matches folders
    found: list[Path] = []
    stack: list[tuple[Path, str, int]] = [(root, "", 0)]
    folders = 0
    while stack:
        folder, rel, depth = stack.pop()
        folders += 1
        if folders > MAX_GLOB_FOLDERS:
            raise ValueError(f"'{pattern}' walks more than {MAX_GLOB_FOLDERS:,} folders")
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            name = rel + entry.name
            try:
                is_dir = entry.is_dir()  # a link is followed: the file check refuses it later
            except OSError:
                is_dir = False
            if (is_dir or not folders_only) and _glob_match(parts, name.split("/")):
                found.append(root / name)
            if is_dir:
                if depth + 1 > MAX_GLOB_DEPTH:
                    raise ValueError(f"'{pattern}' reaches folders deeper than {MAX_GLOB_DEPTH}")
                stack.append((Path(entry.path), name + "/", depth + 1))
    return sorted(found)


def _cases_from(
    value: list[str] | str, reader: _Reader, where: Locator, origin: Origin
) -> list[Case]:
    patterns = [value] if isinstance(value, str) else value
    cases: list[Case] = []
    count = 0
    for i, pattern in enumerate(patterns):
        field: Path_ = ("cases_from", i) if isinstance(value, list) else ("cases_from",)
        try:
            resolve_inside(reader.root, pattern)
            matches = _glob(reader.root, pattern)
        except (UnsafePath, ValueError, NotImplementedError) as exc:
            reader.add(where.error(field, str(exc)))
            continue
        if not matches:
            reader.add(where.error(field, f"no file matches '{pattern}'"))
        for case_file in matches:
            count += 1
            if count > MAX_CASE_FILES:
                reader.add(where.error(field, f"more than {MAX_CASE_FILES} case files"))
                return cases
            name = str(case_file.relative_to(reader.root))
            path = reader.path(where, field, name)
            text = None if path is None else reader.text(where, field, path, name)
            if path is not None and text is not None:
                cases.extend(_load_case_file(path, text, reader, origin))
    return cases


def _environment_digest(env: Environment | None, reader: _Reader, where: Locator) -> str | None:
    """A hash of the environment's files; a missing or unsafe file is an error at its field."""
    if env is None:
        return None
    import hashlib

    digest = hashlib.sha256()
    if env.mcp is not None:
        for part in _mcp_files(env, env.mcp, reader, where):
            digest.update(part)
        return digest.hexdigest()[:16]
    for key, name in (("state", env.state), ("tools", env.tools)):
        assert name is not None  # the model checks a Python environment has both
        path = reader.path(where, ("environment", key), name)
        data = None if path is None else reader.data(where, ("environment", key), path, name)
        if data is not None:
            digest.update(data)
    return digest.hexdigest()[:16]


#: The file types a case's ``state:`` may name.
STATE_SUFFIXES = (".json", ".yaml", ".yml")


def parse_state(
    data: bytes, name: str, trust: Trust = DEFAULT_TRUST, *, file: str | None = None
) -> dict[str, Any]:
    """A case's starting state read from a file's bytes (JSON or YAML, a mapping of tables).

    Raises :class:`SuiteError` (in the state file itself, ``file`` or ``name``, for
    a YAML syntax error) or :class:`ValueError` naming what is wrong.
    """
    suffix = Path(name).suffix.lower()
    if suffix not in STATE_SUFFIXES:
        raise ValueError(f"'{name}': a case's state must be a .json, .yaml or .yml file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"'{name}' is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if suffix == ".json":
        try:
            value = loads_json(text, trust.max_depth)
        except TooDeep as exc:
            raise ValueError(f"'{name}' is not a valid state: {exc}") from None
        except ValueError as exc:
            raise ValueError(f"'{name}' is not valid JSON: {exc}") from None
    else:
        value = load_yaml(text, file or name, trust)[0]
    return checked_state(value, name, trust)


def checked_state(value: Any, name: str, trust: Trust = DEFAULT_TRUST) -> dict[str, Any]:
    """``value`` if it can be a starting state: a mapping, nested within ``trust.max_depth``."""
    if not isinstance(value, dict):
        raise ValueError(f"{name} must be a mapping of tables, not {type(value).__name__}")
    try:
        check_depth(value, trust.max_depth)
    except TooDeep as exc:
        raise ValueError(f"{name} is not a valid state: {exc}") from None
    return value


def _case_states(
    cases: list[Case], origin: Origin, reader: _Reader, digest: str | None
) -> str | None:
    """Each case's ``state`` file exists inside the suite's folder and reads as a state.

    The files' bytes join the environment's digest, so a changed state file
    changes the suite's fingerprint.
    """
    import hashlib

    files: list[bytes] = []
    for (at, prefix), case in zip(origin.cases, cases, strict=False):
        field_ = (*prefix, "state")
        if isinstance(case.state, dict):
            try:
                checked_state(case.state, "the case's state", reader.trust)
            except ValueError as exc:
                reader.add(at.error(field_, str(exc)))
            continue
        if not isinstance(case.state, str):
            continue
        path = reader.path(at, field_, case.state)
        data = None if path is None else reader.data(at, field_, path, case.state)
        if data is None:
            continue
        try:
            parse_state(data, case.state, reader.trust, file=str(path))
        except SuiteError as exc:
            reader.add(exc)
        except ValueError as exc:
            reader.add(at.error(field_, str(exc)))
        else:
            files.append(case.state.encode() + b"\0" + data)
    if not files:
        return digest
    h = hashlib.sha256((digest or "").encode())
    for part in files:
        h.update(part)
    return h.hexdigest()[:16]


def _case_functions(
    cases: list[Case],
    origin: Origin,
    reader: _Reader,
    env: Environment | None,
    where: Locator,
    tools: set[str],
) -> None:
    """Each function an ``end_state.assert`` names, each ``setup`` call that names no
    suite tool, and each of a simulated user's ``tools``, is defined at the top of the
    tools file (a user's tools need a Python environment).

    The file is parsed, never run (its names are read from the syntax tree).
    """
    import ast

    wanted = [
        (at, (*prefix, "end_state", "assert", i, "function"), spec["function"], "function")
        for (at, prefix), case in zip(origin.cases, cases, strict=False)
        if case.end_state is not None
        for i, spec in enumerate(case.end_state.assertions or ())
        if isinstance(spec.get("function"), str)
    ]
    # a setup call names a suite tool, or a function of the tools file kept for setup
    wanted += [
        (at, (*prefix, "setup", i, "tool"), action.tool, "tool")
        for (at, prefix), case in zip(origin.cases, cases, strict=False)
        for i, action in enumerate(case.setup or ())
        if action.tool not in tools
    ]
    # a user tool runs on the state: a function of the tools file, suite tool or not
    users = [
        (at, (*prefix, "user", "tools", i), name, "user tool")
        for (at, prefix), case in zip(origin.cases, cases, strict=False)
        if case.user is not None
        for i, name in enumerate(case.user.tools)
    ]
    if users and (env is None or env.tools is None):
        kind = "an MCP environment" if env is not None else "no environment"
        for at, field_, name, _ in users:
            reader.add(
                at.error(
                    field_,
                    f"user tool '{name}': a user's tools run on a Python environment (a "
                    f"tools file and a state); this suite has {kind}",
                )
            )
        return
    wanted += users
    if not wanted or env is None or env.tools is None:
        return
    path = reader.path(where, ("environment", "tools"), env.tools)
    text = None if path is None else reader.text(where, ("environment", "tools"), path, env.tools)
    if text is None:
        return
    if not reader.trust.allow_code and len(text) > MAX_READ_TOOLS_CHARS:
        # (parsing Python takes a hundred times its size and more: a 10 MB file of one long
        # list took 3.5 GB and 24 s; a file this check reads is untrusted until --allow-code)
        reader.add(
            where.error(
                ("environment", "tools"),
                f"the tools file '{env.tools}' holds {len(text):,} characters; without "
                f"--allow-code it is read, never run, and at most {MAX_READ_TOOLS_CHARS:,} "
                "characters of Python are read so (give --allow-code to check it by running it)",
            )
        )
        return
    try:
        tree = ast.parse(text, env.tools)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        reader.add(where.error(("environment", "tools"), unparsable(env.tools, exc)))
        return
    functions, others = tools_file_names(tree)
    # with leave to run code, a name the file binds anywhere is checked by running it
    # (validate): what it holds once the file ran (a def in an if or try, a rebinding)
    bound = _bound_anywhere(tree) if reader.trust.allow_code else set()
    for at, field_, name, kind in wanted:
        if name in bound:
            origin.code_names.append((at, field_, name, kind))
            continue
        if name in functions:
            continue
        if name in others:
            how, line = others[name]
            message = (
                f"{kind} '{name}' is bound by {how} at line {line} of the tools file "
                f"'{env.tools}', not defined there as a function (def): without "
                "--allow-code the file is read, never run, so what it holds cannot be "
                "checked (give --allow-code, or define it with def)"
            )
        else:
            message = missing_function(name, kind, env.tools, tools)
            message += "" if reader.trust.allow_code else _READ_ONLY
        reader.add(at.error(field_, message))


#: Why a name the file binds only inside an ``if``/``try`` (or otherwise than at its top
#: level) is not found without --allow-code.
_READ_ONLY = (
    " defined at its top level (without --allow-code the file is read, never run: a def "
    "inside an if or try is not seen; --allow-code runs the file to check what it holds)"
)


def _bound_anywhere(tree: Any) -> set[str]:
    """Every name the file binds anywhere: a def or class, an assignment target, an import."""
    import ast

    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            out.add(node.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
    return out


def missing_function(name: str, kind: str, file: str, tools: Iterable[str]) -> str:
    """The message for a name a case calls that the tools file ``file`` does not have."""
    if kind == "tool":
        from toolproof.match import did_you_mean

        known = did_you_mean(name, sorted(tools))
        return (
            f"unknown tool '{name}'{known}: neither a suite tool nor a function of the "
            f"tools file '{file}'"
        )
    if kind == "user tool":
        return f"user tool '{name}': the tools file '{file}' has no function '{name}'"
    return f"the tools file '{file}' has no function '{name}'"


def unparsable(name: str, exc: BaseException) -> str:
    """Why the tools file ``name`` cannot be parsed, in words (with the line of a syntax
    error; Python's parser gives up on code nested too deeply for it)."""
    if isinstance(exc, SyntaxError):
        at = f" at line {exc.lineno}" if exc.lineno else ""
        return f"the tools file '{name}' cannot be parsed: {exc.msg}{at}"
    if isinstance(exc, RecursionError | MemoryError):
        return f"the tools file '{name}' cannot be parsed: nested too deeply for Python's parser"
    return f"the tools file '{name}' cannot be parsed: {exc}"


def tools_file_names(tree: Any) -> tuple[set[str], dict[str, tuple[str, int]]]:
    """The names a tools file binds at its top level, read from its syntax tree (never
    run): its functions (``def``, ``async def``), and every other name with how it is
    bound and the line (an import, an assignment, a class). A name bound twice holds what
    its last binding gives."""
    import ast

    last: dict[str, tuple[str, int]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            last[node.name] = ("def", node.lineno)
        elif isinstance(node, ast.ClassDef):
            last[node.name] = ("a class", node.lineno)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for a in node.names:
                last[(a.asname or a.name).split(".")[0]] = ("an import", node.lineno)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name):
                        last[sub.id] = ("an assignment", node.lineno)
    functions = {name for name, (how, _) in last.items() if how == "def"}
    others = {name: bound for name, bound in last.items() if bound[0] != "def"}
    return functions, others


def _mcp_files(env: Environment, mcp: str, reader: _Reader, where: Locator) -> list[bytes]:
    """An MCP environment's command, checked to run the suite's own files, and those files."""
    import shlex

    from toolproof.trust import check_command

    folder = reader.root
    if env.folder is not None:
        found = reader.path(where, ("environment", "folder"), env.folder)
        if found is None:
            return []
        if not found.is_dir():
            reader.add(where.error(("environment", "folder"), f"no such folder '{env.folder}'"))
            return []
        folder = found
    try:
        argv = tuple(shlex.split(mcp[len("stdio:") :]))
    except ValueError as exc:
        reader.add(where.error(("environment", "mcp"), f"cannot split the command: {exc}"))
        return []
    if not argv:
        reader.add(where.error(("environment", "mcp"), "give the command after 'stdio:'"))
        return []
    if argv not in reader.trust.commands:
        try:
            check_command(folder, argv)
        except UnsafePath as exc:
            reader.add(where.error(("environment", "mcp"), str(exc)))
            return []
    out = [mcp.encode("utf-8", "surrogatepass")]
    for word in argv:
        try:
            path = resolve_inside(folder, word)
            if path.is_file():
                out.append(read_capped(path, reader.trust.max_file_bytes, word))
        except (UnsafePath, OSError):
            continue  # a trusted command may name files elsewhere; they are not hashed
    return out
