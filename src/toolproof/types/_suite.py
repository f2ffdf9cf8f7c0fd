from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from toolproof.types._case import Case, Order, ToolMock
from toolproof.types._judging import SuiteJudge
from toolproof.types._tool import SuiteTool, Tool

SUITE_FORMAT = 1


class Defaults(BaseModel):
    model_config = ConfigDict(extra="forbid")

    extra_args: bool = Field(default=False, description="Allow arguments a call does not list.")
    order: Order = Field(default=Order.unordered, description="Default order of expected calls.")
    graceful_failure: bool = Field(
        default=False,
        description="Fail multi-step cases whose reply handles a tool failure badly "
        "(heuristic). Off: the heuristic is reported, and fails only cases that set "
        "expect.graceful.",
    )
    matching: Literal["strict", "bfcl"] = Field(
        default="strict",
        description="The matcher profile of expected arguments. strict: toolproof's own "
        "(exact values unless a matcher says otherwise). bfcl: plain strings and numbers "
        "compare as BFCL's AST checker compares them (text standardised: case, spaces and "
        "some punctuation ignored; an int accepted for a float, a float refused for an int).",
    )


class CheckSpec(BaseModel):
    """A suite's own check: a Python function in a file inside the suite's folder."""

    model_config = ConfigDict(extra="forbid")

    python: str = Field(
        description="FILE.py:FUNCTION, the file relative to the suite file, inside its folder.",
        pattern=r"^[^:]+\.py:[A-Za-z_][A-Za-z0-9_]*$",
    )
    tags: list[str] | None = Field(
        default=None, description="Run only on cases with one of these tags (default: every case)."
    )


class Thresholds(BaseModel):
    """Minimum rates (0..1) and maximum counts a run must meet."""

    model_config = ConfigDict(extra="forbid")

    selection: float | None = Field(default=None, ge=0, le=1)
    strict_pass: float | None = Field(default=None, ge=0, le=1)
    arguments: float | None = Field(default=None, ge=0, le=1)
    schema_adherence: float | None = Field(default=None, ge=0, le=1)
    no_call_accuracy: float | None = Field(default=None, ge=0, le=1)
    unsafe_calls: int | None = Field(default=None, ge=0)
    failures: int | None = Field(default=None, ge=0, description="Maximum failed cases.")


class Environment(BaseModel):
    """A stateful environment for multi-step cases: Python tools on a state, or a real MCP server.

    Paths are relative to the suite file. ``state`` is a JSON file (a mapping of
    tables), or an SQLite database (``.db``, ``.sqlite``) or SQL script (``.sql``).
    ``tools`` is a Python file whose functions ``name(state, args)`` implement
    the tools of the same name. Tool code runs against an in-memory copy of the
    state; it is the suite author's own code and is trusted like a test fixture.

    ``mcp`` instead names a real MCP server (``stdio:COMMAND ARGS...``): each
    attempt starts a fresh server in a temporary copy of ``folder`` and every
    tool call really runs on it, with a timeout of ``call_timeout`` seconds.
    The end state is what ``state_tool`` returns after the attempt, if given.
    """

    model_config = ConfigDict(extra="forbid")

    state: str | None = Field(
        default=None, description="Initial state: a .json, .db/.sqlite or .sql file."
    )
    tools: str | None = Field(default=None, description="A Python file with one function per tool.")
    mcp: str | None = Field(
        default=None,
        pattern=r"^stdio:",
        description="A real MCP server, 'stdio:COMMAND ARGS...', started fresh for each attempt "
        "in a temporary copy of 'folder'. Its tools really run: it needs --allow-code.",
    )
    folder: str | None = Field(
        default=None,
        description="MCP: the working folder copied for each attempt, inside the suite's "
        "folder (default: the suite's folder).",
    )
    call_timeout: float | None = Field(
        default=None, gt=0, le=3600, description="MCP: seconds each tool call may take (30)."
    )
    state_tool: str | None = Field(
        default=None,
        min_length=1,
        description="MCP: a server tool called with no arguments after each attempt; its "
        "result (JSON) is the end state that 'end_state.state' is compared with.",
    )

    @model_validator(mode="after")
    def _one_kind(self) -> Environment:
        if self.mcp is not None:
            if self.state is not None or self.tools is not None:
                raise ValueError(
                    "give 'mcp' (a real MCP server) or 'state' and 'tools' (Python tools), not both"
                )
            return self
        for key in ("state", "tools"):
            if getattr(self, key) is None:
                raise ValueError(f"missing required key '{key}' (or 'mcp' for an MCP server)")
        for key in ("folder", "call_timeout", "state_tool"):
            if getattr(self, key) is not None:
                raise ValueError(f"'{key}' applies only to an 'mcp' environment")
        return self


class Suite(BaseModel):
    """A loaded, resolved suite: tools, cases and settings."""

    model_config = ConfigDict(extra="forbid")

    format: Literal[1] = 1
    name: str
    version: str | None = None
    description: str | None = None
    now: datetime | None = None
    timezone: str = "UTC"
    system: str | None = None
    tools: list[SuiteTool]
    defaults: Defaults = Field(default_factory=Defaults)
    thresholds: dict[str, Thresholds] = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict)
    cases: list[Case]
    checks: list[CheckSpec] = Field(
        default_factory=list,
        description="The suite's own Python checks. Loading them runs suite code, so it needs "
        "the user's opt-in (--allow-code).",
    )
    mocks: dict[str, ToolMock] = Field(
        default_factory=dict, description="Mock tools for multi-step cases, by tool name."
    )
    environment: Environment | None = Field(
        default=None, description="A stateful environment for multi-step cases."
    )
    environment_digest: str | None = Field(
        default=None,
        description="Hash of the environment's state and tool files (set by the loader), "
        "so that changing them changes the suite's fingerprint.",
    )
    judge: SuiteJudge | None = Field(
        default=None, description="LLM judges: default judge and rubrics, custom rubrics."
    )
    source: str | None = Field(default=None, description="Where the suite was loaded from.")
    tools_source: str | None = Field(
        default=None,
        description="Where the tools came from when they replace the suite's own "
        "(`run --tools FILE`); None: the suite's.",
    )

    def tool(self, name: str) -> SuiteTool | None:
        for t in self.tools:
            if t.name == name:
                return t
        return None

    def case_tools(self, case: Case) -> list[SuiteTool]:
        """The tools offered in a case, as defined for it.

        No ``tools`` in the case: the suite's tools. Otherwise each entry in
        order: a name picks the suite's tool of that name, a definition is
        used as written (an unknown name is left out; the checks report it).
        """
        if case.tools is None:
            return self.tools
        by_name = {t.name: t for t in self.tools}
        out: list[SuiteTool] = []
        for entry in case.tools:
            tool = by_name.get(entry) if isinstance(entry, str) else entry
            if tool is not None:
                out.append(tool)
        return out

    def tool_index(
        self, case: Case, base: dict[str, SuiteTool] | None = None
    ) -> dict[str, SuiteTool]:
        """Every tool a case may name, by name.

        The suite's tools, with the case's own definitions in place of the
        suite's tools of the same name. ``base``: the suite's index, if built.
        """
        index = base if base is not None else {t.name: t for t in self.tools}
        own = case.definitions
        if not own:
            return index
        return {**index, **{t.name: t for t in own}}

    def tools_for(self, case: Case) -> list[Tool]:
        """The canonical tools offered to the model in a case."""
        return [t.canonical() for t in self.case_tools(case)]

    def with_tools(self, tools: list[SuiteTool], source: str) -> Suite:
        """The suite with another list of tools, from ``source`` (e.g. a tools file).

        Case entries that name a tool pick it from the new list; the cases' own
        definitions are kept. A run of the result records the tools it sent.
        """
        return self.model_copy(update={"tools": list(tools), "tools_source": source})

    def fingerprint(self, *, tools: bool = True) -> str:
        """A hash of everything that changes what the model is asked (``tools=False``:
        but the suite's tool list, to tell a change of the tools alone)."""
        leave_out = {"source", "tools_source", "thresholds"} | (set() if tools else {"tools"})
        payload = self.model_dump(mode="json", exclude=leave_out)
        # judges never change what the target model is asked
        payload.pop("judge", None)
        _drop_unset(payload, ("mocks", "environment", "environment_digest"))
        if payload["defaults"].get("matching") == "strict":  # the default: hashes as before
            payload["defaults"].pop("matching")
        for case in payload["cases"]:  # multi-step fields change the hash only when used
            case.pop("judge", None)
            case.pop("nl_assertions", None)  # checked by a judge, never asked of the model
            case.pop("generated", None)  # reviewing a case does not change what is asked
            _drop_unset(
                case,
                (
                    "mocks",
                    "trajectory",
                    "end_state",
                    "user",
                    "max_turns",
                    "state",
                    "setup",
                    "history",
                    "communicate",
                ),
            )
            if isinstance(case.get("end_state"), dict):
                _drop_unset(case["end_state"], ("assertions",))
        # surrogatepass: a lone surrogate in a suite is hashed, not a crash (same bytes otherwise)
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False).encode(
            "utf-8", "surrogatepass"
        )
        return hashlib.sha256(blob).hexdigest()[:16]


def _drop_unset(data: dict[str, Any], keys: tuple[str, ...]) -> None:
    for key in keys:
        if not data.get(key):
            data.pop(key, None)
