"""Checks on a loaded suite: the test data itself must be right."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from toolproof._shared.gcpause import gc_paused
from toolproof._shared.locate import Locator, Path_
from toolproof._shared.schema_validators import schema_problems, value_checker
from toolproof.errors import SuiteError
from toolproof.grade import (
    ArgMemo,
    ToolIndex,
    compile_expectations,
    compile_state_asserts,
    compile_trajectory,
    value_key,
)
from toolproof.match import (
    OPTIONS,
    CompiledMock,
    Decisions,
    Embeddings,
    SpecError,
    context,
    did_you_mean,
    literal_options,
)
from toolproof.suite._load import LoadedSuite
from toolproof.trust import Trust
from toolproof.types import Case, Suite, SuiteTool


def check_suite(loaded: LoadedSuite, trust: Trust | None = None) -> list[SuiteError]:
    """Every problem found in the suite, each located at its file, line and field.

    With ``trust``, a suite that runs its own Python is a problem unless
    ``trust.allow_code``: it could not run as the user asked.
    """
    with gc_paused():
        return _check_suite(loaded, trust)


def _check_suite(loaded: LoadedSuite, trust: Trust | None) -> list[SuiteError]:
    suite, origin = loaded.suite, loaded.origin
    root = origin.suite or Locator(suite.source or "<suite>")
    errors: list[SuiteError] = []
    env = suite.environment
    if trust is not None and not trust.allow_code and env is not None:
        errors.append(
            root.error(
                ("environment", "mcp" if env.mcp is not None else "tools"),
                (
                    f"'{env.mcp}' starts a real MCP server whose tools run real code"
                    if env.mcp is not None
                    else f"'{env.tools}' is Python from the suite"
                )
                + "; toolproof runs suite code only with --allow-code or allow_code: true "
                "in your own toolproof.yaml (never for untrusted pull requests)",
            )
        )

    def tool_error(tool: SuiteTool, sub: Path_, message: str) -> None:
        where, prefix = origin.tools.get(tool.name, (root, ()))
        errors.append(where.error((*prefix, *sub), message))

    index = {id(c): i for i, c in enumerate(suite.cases)}

    def case_error(case: Case, sub: Path_, message: str) -> None:
        i = index.get(id(case))
        where, prefix = origin.cases[i] if i is not None and i < len(origin.cases) else (root, ())
        errors.append(where.error((*prefix, *sub), message))

    seen_tools: set[str] = set()
    for tool in suite.tools:
        if tool.name in seen_tools:
            tool_error(tool, ("name",), f"duplicate tool name '{tool.name}'")
        seen_tools.add(tool.name)
        _check_tool(tool, tool_error)

    try:
        ctx = context(suite)
    except ValueError as exc:
        errors.append(root.error(("timezone",), str(exc)))
        return errors
    # expectations are graded against answers, so they may compare text by meaning;
    # mock rules answer calls during a run, where no embeddings are computed
    graded = replace(ctx, embeddings=Embeddings(), decisions=Decisions())
    by_name = ToolIndex(suite.tools)
    memo = ArgMemo(by_name, graded)  # values that cases repeat are compiled once
    args: dict[int, _ToolArgs] = {}
    seen_cases: dict[str, int] = {}
    for case in suite.cases:
        if case.id in seen_cases:
            case_error(case, ("id",), f"duplicate case id '{case.id}'")
            continue
        seen_cases[case.id] = 1
        tools: dict[str, SuiteTool] = by_name
        if case.tools:
            _check_case_tools(case, by_name, case_error)
            if case.definitions:
                tools = suite.tool_index(case, by_name)
        # in the bfcl profile BFCL's own type rule, not the schema, bounds expected values
        _check_case(case, tools, args, case_error, suite.defaults.matching != "bfcl")
        try:
            compile_expectations(case, suite, by_name, graded, memo)
        except SpecError as exc:
            case_error(case, exc.path, str(exc))
        if case.multistep:
            _check_multistep(case, suite, tools, ctx, graded, case_error)
        if case.held_back:
            _check_offers(case, tools, case_error)
    defined = {t.name for c in suite.cases if c.tools for t in c.definitions} if suite.mocks else ()
    for name in suite.mocks:
        if name not in by_name and name not in defined:
            errors.append(root.error(("mocks", name), f"mock for unknown tool '{name}'"))
    return errors


def _check_multistep(
    case: Case, suite: Suite, by_name: dict[str, SuiteTool], ctx: Any, graded: Any, report: Any
) -> None:
    """Mocks, trajectory and gold actions of a multi-step case name real tools and compile."""
    for name, mock in case.mocks.items():
        if name not in by_name:
            report(case, ("mocks", name), f"mock for unknown tool '{name}'")
        try:
            CompiledMock(mock, ctx)
        except SpecError as exc:
            report(case, ("mocks", name, *exc.path), str(exc))
    if case.trajectory is not None:
        for g, group in enumerate(case.trajectory.groups()):
            for spec in group:
                for name in spec.tools:
                    if name not in by_name:
                        report(case, ("trajectory", "steps", g), f"unknown tool '{name}'")
        try:
            compile_trajectory(case.trajectory, by_name, graded, suite.defaults.extra_args)
        except SpecError as exc:
            report(case, exc.path, str(exc))
    actions = case.end_state.actions if case.end_state is not None else None
    env = suite.environment
    if actions is not None and env is None:
        report(case, ("end_state", "actions"), "gold actions need a suite 'environment'")
    elif actions is not None and env is not None and env.mcp is not None:
        report(
            case,
            ("end_state", "actions"),
            "gold actions are not replayed on an MCP environment: give the expected "
            "'end_state.state' (read with the environment's state_tool), or check the "
            "trajectory and the reply",
        )
    state = case.end_state.state if case.end_state is not None else None
    if state is not None and env is not None and env.mcp is not None and env.state_tool is None:
        report(
            case,
            ("end_state", "state"),
            "an MCP environment has no end state to compare unless 'environment.state_tool' "
            "names a server tool that returns it; check the trajectory and the reply instead",
        )
    for i, action in enumerate(actions or []):
        if action.tool not in by_name:
            report(case, ("end_state", "actions", i, "tool"), f"unknown tool '{action.tool}'")
    _check_state(case, suite, by_name, report)
    _check_asserts(case, suite, graded, report)


def _check_asserts(case: Case, suite: Suite, graded: Any, report: Any) -> None:
    """``end_state.assert`` compiles; ``communicate`` facts can be decided."""
    specs = case.end_state.assertions if case.end_state is not None else None
    if specs:
        try:
            _, functions = compile_state_asserts(specs, graded)
        except SpecError as exc:
            report(case, ("end_state", "assert", *exc.path), str(exc))
        else:
            env = suite.environment
            if functions and (env is None or env.mcp is not None):
                report(
                    case,
                    ("end_state", "assert", functions[0].index, "function"),
                    "a function assertion calls a function of a Python environment's tools "
                    "file: the suite has " + ("an MCP environment" if env else "no 'environment'"),
                )
    # 'judged' facts are left to the nl_assertion judge (with --judge), like nl_assertions


#: The unknown names, and the names given again, one ``offer`` list reports by name (the
#: others are counted).
_SHOWN_OFFERS = 3


def _check_offers(case: Case, by_name: dict[str, SuiteTool], report: Any) -> None:
    """Each tool a scripted user's entry or rule offers (``offer``) is one of the case's
    tools: a suite tool, listed in the case's ``tools`` when it has one, given once."""
    assert case.user is not None and case.user.script is not None
    listed = None if case.tools is None else set(case.tool_names or ())
    for i, entry in enumerate(case.user.script):
        if isinstance(entry, str) or not entry.offer:
            continue
        seen: set[str] = set()
        unknown: list[int] = []  # where each name the suite does not define is
        twice: list[int] = []  # where each name given again is
        for j, name in enumerate(entry.offer):
            where = ("user", "script", i, "offer", j)
            if name in seen:
                twice.append(j)
                if len(twice) <= _SHOWN_OFFERS:
                    report(case, where, f"tool '{name}' is offered twice in this entry")
                continue
            seen.add(name)
            if name not in by_name:
                unknown.append(j)
                if len(unknown) <= _SHOWN_OFFERS:
                    hint = did_you_mean(name, list(by_name))
                    report(
                        case, where, f"unknown tool '{name}'{hint}: the suite defines no such tool"
                    )
            elif listed is not None and name not in listed:
                report(
                    case,
                    where,
                    f"tool '{name}' is not one of the case's tools: list it in the case's "
                    "'tools' too (a tool offered later is held back until then)",
                )
        at = ("user", "script", i, "offer")
        if len(unknown) > _SHOWN_OFFERS:
            j, more = unknown[_SHOWN_OFFERS], len(unknown) - _SHOWN_OFFERS - 1
            said = f"unknown tool '{entry.offer[j]}', and {more} more names here the suite "
            report(case, (*at, j), said + "does not define")
        if len(twice) > _SHOWN_OFFERS:
            j, more = twice[_SHOWN_OFFERS], len(twice) - _SHOWN_OFFERS - 1
            said = f"tool '{entry.offer[j]}' is offered twice in this entry, and {more} more "
            report(case, (*at, j), said + "names here are given again")


def _check_state(case: Case, suite: Suite, by_name: dict[str, SuiteTool], report: Any) -> None:
    """A case's own starting state and setup calls fit the suite's environment."""
    env = suite.environment
    if case.state is not None and env is not None:
        if env.mcp is not None:
            report(
                case,
                ("state",),
                "a case's state replaces a Python environment's starting state; an MCP "
                "server keeps its own state",
            )
        elif env.state is not None and not env.state.lower().endswith(".json"):
            report(
                case,
                ("state",),
                f"a case's state (JSON data) cannot replace the environment's SQLite state "
                f"'{env.state}': its tools read a database",
            )
    for i, message in enumerate(case.history or ()):
        for j, call in enumerate(message.tool_calls or ()):
            if call.name not in by_name:
                known = did_you_mean(call.name, list(by_name))
                where = ("history", i, "tool_calls", j, "name")
                report(case, where, f"unknown tool '{call.name}'{known}")
    for i, action in enumerate(case.setup or ()):
        python_env = env is not None and env.mcp is None and env.tools is not None
        if action.tool not in by_name and not python_env:
            known = did_you_mean(action.tool, list(by_name))
            report(case, ("setup", i, "tool"), f"unknown tool '{action.tool}'{known}")
        elif env is None or env.mcp is not None:
            report(
                case,
                ("setup", i, "tool"),
                "setup calls run on a Python environment's state: the suite has "
                + ("an MCP environment" if env is not None else "no 'environment'"),
            )


def tool_problems(tool: SuiteTool) -> list[tuple[Path_, str]]:
    """What ``validate`` finds wrong with one tool's definition: (field path, message)."""
    found: list[tuple[Path_, str]] = []
    _check_tool(tool, lambda _tool, path, message: found.append((path, message)))
    return found


def expected_args_problems(tool: SuiteTool, args: dict[str, Any]) -> list[tuple[Path_, str]]:
    """What ``validate`` finds wrong with a case's expected arguments of ``tool`` (a valid
    definition): (path below the arguments, message), as it checks ``expect.calls[i].args``."""
    found: list[tuple[Path_, str]] = []
    facts = _ToolArgs(tool)
    for key, spec in args.items():
        found.extend(((key, *sub), message) for sub, message in _arg_problems(facts, key, spec))
    return found


def _check_tool(tool: SuiteTool, report: Any) -> None:
    schema = tool.parameters
    problems = schema_problems(schema)
    for path, message in problems:
        report(tool, ("parameters", *path), message)
    if problems:
        return
    if schema.get("type") != "object":
        report(tool, ("parameters", "type"), "the parameters schema must have type: object")
    props = schema.get("properties", {})
    for key, default in tool.match.items():
        if isinstance(props, dict) and key not in props:
            report(tool, ("match", key), f"'{key}' is not a parameter of {tool.name}")
        name = (
            default
            if isinstance(default, str)
            else (default or {}).get("use")
            if isinstance(default, dict)
            else None
        )
        if name not in OPTIONS:
            hint = did_you_mean(str(name), OPTIONS)
            report(
                tool,
                ("match", key),
                f"unknown matcher '{name}'{hint} (known: {', '.join(OPTIONS)})",
            )


def _check_case_tools(case: Case, by_name: dict[str, SuiteTool], report: Any) -> None:
    """A case's tool list: names of suite tools, or definitions checked like the suite's."""
    seen: set[str] = set()
    for i, entry in enumerate(case.tools or []):
        name = entry if isinstance(entry, str) else entry.name
        if name in seen:
            field = ("tools", i) if isinstance(entry, str) else ("tools", i, "name")
            report(case, field, f"tool '{name}' is offered twice in this case")
        seen.add(name)
        if isinstance(entry, str):
            if entry not in by_name:
                known = ", ".join(by_name) or "none"
                report(case, ("tools", i), f"unknown tool '{entry}' (known: {known})")
            continue

        def at_entry(_tool: SuiteTool, sub: Path_, message: str, i: int = i) -> None:
            report(case, ("tools", i, *sub), message)

        _check_tool(entry, at_entry)


def _check_case(
    case: Case,
    by_name: dict[str, SuiteTool],
    args: dict[int, _ToolArgs],
    report: Any,
    schema_values: bool = True,
) -> None:
    """``schema_values``: check expected values against their parameter's schema."""
    expect = case.expect
    offered = None if case.tools is None else case.tool_names
    for i, name in enumerate(expect.forbidden):
        if name not in by_name:
            report(case, ("expect", "forbidden", i), f"unknown tool '{name}'")
    alternatives, calls = expect.alternatives, expect.calls
    for s, specs in enumerate(expect.call_sets()):
        for c, spec in enumerate(specs):
            if alternatives is not None:
                base: Path_ = ("expect", "alternatives", s, c)
            elif calls is not None:
                base = ("expect", "calls", c)
            else:
                base = ("expect",)
            for name in spec.tools:
                tool = by_name.get(name)
                if tool is None:
                    known = ", ".join(by_name) or "none"
                    report(
                        case,
                        (*base, "call" if base == ("expect",) else "tool"),
                        f"unknown tool '{name}' (known: {known})",
                    )
                    continue
                if offered is not None and name not in offered:
                    report(case, (*base, "tool"), f"tool '{name}' is not offered in this case")
                facts = args.get(id(tool))
                if facts is None:
                    facts = args[id(tool)] = _ToolArgs(tool, schema_values)
                if spec.args:
                    _check_args(facts, spec.args, base, case, report)


class _ToolArgs:
    """One tool's parameters, read once for checking the expected values of every case."""

    def __init__(self, tool: SuiteTool, schema_values: bool = True) -> None:
        self.tool = tool
        self.schema_values = schema_values
        schema = tool.parameters
        props = schema.get("properties", {})
        self.props: dict[str, Any] = props if isinstance(props, dict) else {}
        self.closed = schema.get("additionalProperties") is False
        self.defs = {k: schema[k] for k in ("$defs", "definitions") if k in schema}
        self.checkers: dict[str, Any] = {}
        self.known: dict[Any, list[tuple[Path_, str]]] = {}
        """Problems of an expected value, by (parameter, value): cases repeat values."""

    def checker(self, key: str) -> Any:
        """The check of a value against parameter ``key``'s schema (with the $defs)."""
        check = self.checkers.get(key)
        if check is None:
            prop = self.props[key]
            sub = {**prop, **self.defs} if isinstance(prop, dict) else prop
            check = self.checkers[key] = value_checker(sub)
        return check


def _check_args(
    facts: _ToolArgs, args: dict[str, Any], base: Path_, case: Case, report: Any
) -> None:
    known = facts.known
    for key, spec in args.items():
        held = spec if type(spec) is str else value_key(spec)
        problems = known.get(entry := (key, held))
        if problems is None:
            problems = _arg_problems(facts, key, spec)
            if held is not None:
                known[entry] = problems
        if problems:
            for sub, message in problems:
                report(case, (*base, "args", key, *sub), message)


def _arg_problems(facts: _ToolArgs, key: str, spec: Any) -> list[tuple[Path_, str]]:
    """What is wrong with one expected value of a tool's parameter: (path inside it, message)."""
    tool, props = facts.tool, facts.props
    if key not in props:
        if facts.closed:
            known = ", ".join(props) or "none"
            return [((), f"'{key}' is not a parameter of {tool.name} (parameters: {known})")]
        return []
    if not facts.schema_values:
        return []
    try:
        literals = literal_options(spec)
    except SpecError:
        return []  # reported when the case is compiled
    if not literals:
        return []
    check = facts.checker(key)
    problems: list[tuple[Path_, str]] = []
    for inner, value in literals:
        error = check(value)
        if error is not None:
            what = "expected value" if not inner else "option"
            problems.append(
                (inner, f"{what} {value!r} violates the schema of {tool.name}.{key}: {error}")
            )
    return problems
