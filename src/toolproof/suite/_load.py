"""Load a suite from YAML (and JSONL case files) into a resolved :class:`Suite`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolproof._locate import JsonLineLocator, Locator, Path_, first_error
from toolproof.errors import SuiteError
from toolproof.suite._yaml import load_yaml
from toolproof.types import (
    BUILTIN_FIELDS,
    Case,
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
    judge: SuiteJudge | None = Field(
        default=None, description="LLM judges: default judge and rubrics, custom rubrics."
    )


@dataclass
class Origin:
    """Where each case and tool came from, so later checks can point at a line."""

    cases: list[tuple[Locator, Path_]] = field(default_factory=list)
    tools: dict[str, tuple[Locator, Path_]] = field(default_factory=dict)
    suite: Locator | None = None


@dataclass
class LoadedSuite:
    suite: Suite
    origin: Origin


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SuiteError(str(path), "file not found") from None
    except UnicodeDecodeError as exc:
        raise SuiteError(str(path), f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise SuiteError(str(path), exc.strerror or "cannot read file") from None


def resolve_suite_path(path: str | Path) -> Path:
    p = Path(path)
    if p.is_dir():
        for name in SUITE_FILENAMES:
            if (p / name).is_file():
                return p / name
        raise SuiteError(str(p), f"no suite file here (looked for {', '.join(SUITE_FILENAMES)})")
    if not p.exists():
        raise SuiteError(str(p), "file not found")
    return p


def _validate(model: type[BaseModel], data: Any, where: Locator, prefix: Path_ = ()) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise first_error(exc, data, model, where, prefix) from None


def _load_tools(
    value: list[SuiteTool] | str, raw: Any, base: Path, where: Locator, origin: Origin
) -> list[SuiteTool]:
    if isinstance(value, list):
        for i, tool in enumerate(value):
            origin.tools.setdefault(tool.name, (where, ("tools", i)))
        return value
    path = base / value
    data, positions = load_yaml(_read(path), str(path))
    if isinstance(data, dict) and "tools" in data:
        data, positions = (
            data["tools"],
            {k[1:]: v for k, v in positions.items() if k[:1] == ("tools",)},
        )
    tools_where = Locator(str(path), positions)
    if not isinstance(data, list):
        raise tools_where.error((), "expected a list of tools")
    tools = []
    for i, item in enumerate(data):
        tool = _validate(SuiteTool, item, Locator(str(path), _shift(positions, i)), (i,))
        origin.tools.setdefault(tool.name, (tools_where, (i,)))
        tools.append(tool)
    return tools


def _shift(positions: dict[Path_, tuple[int, int]], index: int) -> dict[Path_, tuple[int, int]]:
    """Positions of the item at ``index``, re-rooted so its errors keep their full path."""
    return {k: v for k, v in positions.items() if k[:1] == (index,) or k == ()}


def _load_case_file(path: Path, origin: Origin) -> list[Case]:
    text = _read(path)
    if path.suffix in (".yaml", ".yml"):
        data, positions = load_yaml(text, str(path))
        where = Locator(str(path), positions)
        if isinstance(data, dict) and "cases" in data:
            data = data["cases"]
            positions = {k[1:]: v for k, v in positions.items() if k[:1] == ("cases",)}
            where = Locator(str(path), positions)
        if not isinstance(data, list):
            raise where.error((), "expected a list of cases")
        cases = [_validate(Case, item, where, (i,)) for i, item in enumerate(data)]
        origin.cases.extend((where, (i,)) for i in range(len(cases)))
        return cases
    return _load_jsonl_cases(path, text, origin)


def _load_jsonl_cases(path: Path, text: str, origin: Origin) -> list[Case]:
    cases = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = JsonLineLocator(str(path), number, line)
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SuiteError(
                str(path), f"not valid JSON: {exc.msg}", line=number, column=exc.colno
            ) from None
        if not isinstance(data, dict):
            raise SuiteError(
                str(path), "expected a JSON object (one case per line)", line=number, column=1
            )
        case = _validate(Case, data, where)
        origin.cases.append((where, ()))
        cases.append(case)
    return cases



def load_suite_with_origin(path: str | Path) -> LoadedSuite:
    """Load a suite and remember where each piece came from."""
    file = resolve_suite_path(path)
    data, positions = load_yaml(_read(file), str(file))
    where = Locator(str(file), positions)
    if not isinstance(data, dict):
        raise where.error((), "a suite file must be a mapping with 'suite', 'tools' and 'cases'")
    raw = _validate(SuiteFile, data, where)
    origin = Origin(suite=where)
    base = file.parent
    tools = _load_tools(raw.tools, data.get("tools"), base, where, origin)
    origin.cases.extend((where, ("cases", i)) for i in range(len(raw.cases)))
    cases = list(raw.cases)
    patterns = [raw.cases_from] if isinstance(raw.cases_from, str) else raw.cases_from
    for i, pattern in enumerate(patterns):
        matches = sorted(base.glob(pattern))
        if not matches:
            raise where.error(
                ("cases_from", i) if isinstance(raw.cases_from, list) else ("cases_from",),
                f"no file matches '{pattern}'",
            )
        for case_file in matches:
            cases.extend(_load_case_file(case_file, origin))
    system = raw.system
    if raw.system_file is not None:
        if system is not None:
            raise where.error(("system_file",), "give 'system' or 'system_file', not both")
        system = _read(base / raw.system_file).strip()
    suite = Suite(
        name=raw.suite,
        version=raw.version,
        description=raw.description,
        now=raw.now,
        timezone=raw.timezone,
        system=system,
        tools=tools,
        defaults=raw.defaults,
        thresholds=dict(raw.thresholds),
        settings=raw.settings,
        cases=cases,
        mocks=raw.mocks,
        environment=raw.environment,
        environment_digest=_environment_digest(raw.environment, base, where),
        judge=raw.judge,
        source=str(file),
    )
    _check_judges(suite, origin, where)
    return LoadedSuite(suite, origin)


def _check_judges(suite: Suite, origin: Origin, where: Locator) -> None:
    """Every rubric a case names exists; every judge threshold names a field of the right type."""
    judge = suite.judge or SuiteJudge()
    fields = {**BUILTIN_FIELDS, **{n: r.fields for n, r in judge.rubrics.items()}}
    for i, case in enumerate(suite.cases):
        if case.judge is None or case.judge is False:
            continue
        at, prefix = origin.cases[i]
        if case.judge is True:
            if not judge.default:
                raise at.error(
                    (*prefix, "judge"), "'judge: true' needs the suite's judge.default rubrics"
                )
            continue
        for j, name in enumerate(case.judge):
            if name not in fields:
                known = ", ".join(sorted(fields))
                raise at.error((*prefix, "judge", j), f"unknown rubric {name!r}; known: {known}")
    for key, th in judge.thresholds.items():
        rubric, _, name = key.partition(".")
        spec = fields.get(rubric, {}).get(name)
        if spec is None:
            raise where.error(("judge", "thresholds", key), "not a RUBRIC.FIELD of a known rubric")
        if th.min is not None and spec.type != "bool":
            raise where.error(("judge", "thresholds", key), "'min' needs a bool field")
        if th.max is not None and spec.type != "int":
            raise where.error(("judge", "thresholds", key), "'max' needs an int field")


def _environment_digest(env: Environment | None, base: Path, where: Locator) -> str | None:
    """A hash of the environment's files; a missing file is an error at its field."""
    if env is None:
        return None
    import hashlib

    digest = hashlib.sha256()
    for key, name in (("state", env.state), ("tools", env.tools)):
        path = base / name
        if not path.is_file():
            raise where.error(("environment", key), f"no such file '{name}'")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]
