"""Compile a suite's cases once, so that grading builds nothing per case."""

from __future__ import annotations

import sys
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from toolproof.match import Context, Matcher, SpecError, compile_value, context, profile_spec, show
from toolproof.match._matchers import Exact, ObjectMatcher, apply_default
from toolproof.types import Case, Kind, Order, Risk, Suite, SuiteTool


@dataclass(slots=True)
class CompiledCall:
    tools: tuple[str, ...]
    args: ObjectMatcher
    described: str | None = field(default=None, compare=False, repr=False)
    """``describe()``, once it has been asked for (matchers do not change once compiled)."""

    def describe(self) -> str:
        if self.described is None:
            name = self.tools[0] if len(self.tools) == 1 else "{" + "|".join(self.tools) + "}"
            parts = [f"{k}={m.describe()}" for k, m in self.args.fields.items()]
            if self.args.extra:
                parts.append("...")
            self.described = f"{name}({', '.join(parts)})"
        return self.described


@dataclass(slots=True)
class CompiledCase:
    case: Case
    case_id: str
    kind: Kind
    call_sets: list[list[CompiledCall]]
    forbidden: frozenset[str]
    count: tuple[int | None, int | None] | None
    order: Order
    text: Matcher | None
    risk: Risk
    tags: tuple[str, ...]
    offered: frozenset[str]
    expected_tools: tuple[str, ...]
    guarded: frozenset[str] = frozenset()
    """Tools that need the user's confirmation: requires_confirmation, or destructive."""
    single: CompiledCall | None = None
    """The one expected call, when nothing else constrains the case (fast path)."""
    reply_judged: bool = False
    """The final reply is judged: a reply matcher is given, or the kind asks for a reply."""
    tool_at: tuple[dict[str, int] | None, ...] = ()
    """Per call set, each expected call's position by its tool, when every expected call
    names one tool and no two the same one (see :func:`tool_positions`); else None."""
    described: dict[int, str] = field(default_factory=dict, compare=False, repr=False)
    """``describe_calls`` of each call set, by index, once it has been asked for."""

    def describe_set(self, index: int) -> str:
        """``describe_calls(self.call_sets[index])``, worked out once."""
        found = self.described.get(index)
        if found is None:
            found = self.described[index] = describe_calls(self.call_sets[index])
        return found


class ToolIndex(dict[str, SuiteTool]):
    """A suite's tools by name, with what every case of the suite asks of them.

    ``compile_case`` takes any mapping of tools by name; given this one, it
    does not go through all the tools again for each case.
    """

    def __init__(self, tools: list[SuiteTool]) -> None:
        super().__init__((t.name, t) for t in tools)
        self.names = frozenset(self)
        self.guarded = frozenset(
            t.name for t in tools if t.requires_confirmation or t.effect == "destructive"
        )


class ArgMemo:
    """Compiled expected arguments, shared by the cases of one suite.

    Cases repeat expected values (the same mode, filter or ``ignore`` for the
    same tool), so each distinct (tools, parameter, value) is compiled once:
    the matcher, or the SpecError it raises, is kept and handed to every case
    that asks again. Matchers hold no per-case state, so sharing them is safe.
    It applies to the tool index and context it was made for, to cases
    without their own tool definitions (they change the tools' defaults), and
    to values read from suite files (see :func:`value_key`).
    """

    __slots__ = ("by_name", "ctx", "defaults", "entries")

    def __init__(self, by_name: ToolIndex, ctx: Context) -> None:
        self.by_name = by_name
        self.ctx = ctx
        self.entries: dict[Hashable, Matcher | SpecError] = {}
        self.defaults: dict[tuple[str, ...], dict[str, Any]] = {}
        """The tools' default matchers, merged, by the tools a call names."""


#: Tuples of names (tools, tags) that compiled cases hold, one object for equal tuples of
#: interned strings (see :func:`shared_names`); started afresh past a bound, for long-lived
#: processes.
_NAMES: dict[tuple[str, ...], tuple[str, ...]] = {}
_NAMES_SIZE = 4096


def shared_names(values: Iterable[str]) -> tuple[str, ...]:
    """``values`` as a tuple of interned strings, the one object of the compiled cases that
    hold equal ones: the few names a suite's cases repeat stay few objects, which grading
    finds at hand, not one copy per case."""
    found = tuple([sys.intern(v) for v in values])
    if len(_NAMES) >= _NAMES_SIZE:
        _NAMES.clear()
    return _NAMES.setdefault(found, found)


#: Plain values that compile to Exact as they are (as in compile_value; float is not: NaN).
_PLAIN = frozenset({str, int, bool, type(None)})
#: The same in a profile that reads strings and numbers its own way (``bfcl``).
_PLAIN_IN_PROFILE = frozenset({bool, type(None)})


def value_key(value: Any) -> Hashable:
    """A key equal only for values written alike, for values read from JSON or YAML.

    For such values (strings, numbers, booleans, null, lists and mappings)
    ``repr`` is one-to-one: it tells ``1`` from ``1.0``, ``True`` and ``"1"``,
    ``0.0`` from ``-0.0``, and keeps key order. A string is its own key (no
    other value's key is a bare string). None for a value nested too deeply
    to write out (it is not memoised).
    """
    if type(value) is str:
        return value
    try:
        return (repr(value),)
    except RecursionError:
        return None


def _tool_sets(
    case: Case, suite: Suite, by_name: dict[str, SuiteTool]
) -> tuple[frozenset[str], frozenset[str]]:
    """The names offered in the case, and the names that need confirmation."""
    if isinstance(by_name, ToolIndex) and not case.definitions:  # case.tools: names only
        names, guarded = by_name.names, by_name.guarded
        offered = names if case.tools is None else names.intersection(case.tools)
        return offered, guarded
    offered = frozenset(t.name for t in suite.case_tools(case))
    guarded = frozenset(
        t.name for t in by_name.values() if t.requires_confirmation or t.effect == "destructive"
    )
    return offered, guarded


def _compile_args(
    args: dict[str, Any],
    tool_defaults: dict[str, Any],
    extra: bool,
    ctx: Context,
    tool: str = "",
    memo: ArgMemo | None = None,
    tools: tuple[str, ...] = (),
) -> ObjectMatcher:
    """``memo``: compiled values of the cases compiled before (``tools``: the call's tools)."""
    fields: dict[str, Matcher] = {}
    plain = _PLAIN if ctx.profile == "strict" else _PLAIN_IN_PROFILE
    for key, spec in args.items():
        if type(spec) in plain and key not in tool_defaults:
            fields[key] = Exact(spec)  # what compile_value makes of it, without the lookups
            continue
        found = _memo_arg(spec, key, tool_defaults, ctx, tool, memo, tools)
        if isinstance(found, SpecError):
            raise SpecError(str(found), ("args", key, *found.path))
        fields[key] = found
    return ObjectMatcher(fields, extra)


def _args_error(
    args: dict[str, Any],
    tool_defaults: dict[str, Any],
    ctx: Context,
    tool: str,
    memo: ArgMemo | None,
    tools: tuple[str, ...],
) -> SpecError | None:
    """The SpecError :func:`_compile_args` would raise, found without building the matchers."""
    plain = _PLAIN if ctx.profile == "strict" else _PLAIN_IN_PROFILE
    for key, spec in args.items():
        if type(spec) in plain and key not in tool_defaults:
            continue  # compiles to Exact: it cannot fail
        found = _memo_arg(spec, key, tool_defaults, ctx, tool, memo, tools)
        if isinstance(found, SpecError):
            return SpecError(str(found), ("args", key, *found.path))
    return None


def _memo_arg(
    spec: Any,
    key: str,
    tool_defaults: dict[str, Any],
    ctx: Context,
    tool: str,
    memo: ArgMemo | None,
    tools: tuple[str, ...],
) -> Matcher | SpecError:
    """One argument compiled, or taken from ``memo`` when compiled before."""
    if memo is not None:
        held = value_key(spec)
        if held is not None:
            found = memo.entries.get(entry := (tools, key, held))
            if found is None:
                found = memo.entries[entry] = _compile_arg(spec, key, tool_defaults, ctx, tool)
            return found
    return _compile_arg(spec, key, tool_defaults, ctx, tool)


def _compile_arg(
    spec: Any, key: str, tool_defaults: dict[str, Any], ctx: Context, tool: str
) -> Matcher | SpecError:
    """One expected argument's matcher, or the SpecError (path inside the value) it raises."""
    # a judge that decides this argument is told which tool and parameter it is
    at = replace(ctx, argument=(tool, key)) if ctx.decisions is not None else ctx
    try:
        # a tool's default matcher first; the suite's profile reads what is left plain
        return compile_value(
            profile_spec(apply_default(spec, tool_defaults.get(key)), ctx.profile), at
        )
    except SpecError as exc:
        return exc


def _defaults_for(tools: tuple[str, ...], by_name: dict[str, SuiteTool]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for name in tools:
        tool = by_name.get(name)
        if tool is not None:
            for k, v in tool.match.items():
                merged.setdefault(k, v)
    return merged


def _risk(case: Case, names: set[str], by_name: dict[str, SuiteTool]) -> Risk:
    if case.risk is not None:
        return case.risk
    risks = [by_name[n].risk for n in names if n in by_name]
    return max(risks, key=lambda r: r.rank, default=Risk.low)


def compile_expectations(
    case: Case,
    suite: Suite,
    by_name: dict[str, SuiteTool],
    ctx: Context,
    memo: ArgMemo | None = None,
) -> None:
    """Raise the SpecError :func:`compile_case` would raise for ``case``, if any.

    The part of compiling that can fail, alone: ``validate`` checks that
    every case compiles without building what grading needs.
    """
    if memo is not None and (memo.by_name is not by_name or memo.ctx is not ctx):
        memo = None
    if case.tools and case.definitions:
        memo = None
        by_name = suite.tool_index(case, by_name)
    _compile_expect(case, suite, by_name, ctx, memo, build=False)


def _compile_expect(
    case: Case,
    suite: Suite,
    by_name: dict[str, SuiteTool],
    ctx: Context,
    memo: ArgMemo | None,
    build: bool = True,
) -> tuple[list[list[CompiledCall]], Matcher | None]:
    """The expected call sets and reply matcher; every SpecError compiling can raise.

    ``by_name``: the tools the case may name (its own definitions included).
    Not ``build``: only raise, and return no call sets.
    """
    expect = case.expect
    default_extra = suite.defaults.extra_args
    call_sets: list[list[CompiledCall]] = []
    for s, specs in enumerate(expect.call_sets()):
        compiled = []
        for c, spec in enumerate(specs):
            tools = spec.tools
            if memo is None:
                defaults = _defaults_for(tools, by_name)
            else:
                found = memo.defaults.get(tools)
                if found is None:
                    found = memo.defaults[tools] = _defaults_for(tools, by_name)
                defaults = found
            try:
                if not build:
                    error = _args_error(spec.args, defaults, ctx, tools[0], memo, tools)
                    if error is not None:
                        raise error
                    continue
                extra = default_extra if spec.extra_args is None else spec.extra_args
                args = _compile_args(spec.args, defaults, extra, ctx, tools[0], memo, tools)
            except SpecError as exc:
                where: tuple[str | int, ...]
                if expect.alternatives is not None:
                    where = ("expect", "alternatives", s, c)
                elif expect.calls is not None:
                    where = ("expect", "calls", c)
                else:
                    where = ("expect",)
                raise SpecError(str(exc), (*where, *exc.path)) from None
            compiled.append(CompiledCall(shared_names(tools), args))
        call_sets.append(compiled)
    text = None
    if expect.text is not None:
        try:
            text = compile_value(expect.text, ctx)
        except SpecError as exc:
            raise SpecError(str(exc), ("expect", "text", *exc.path)) from None
    return call_sets, text


def compile_case(
    case: Case,
    suite: Suite,
    by_name: dict[str, SuiteTool],
    ctx: Context,
    memo: ArgMemo | None = None,
) -> CompiledCase:
    """Compile one case. Raises SpecError with a path relative to the case.

    ``by_name`` is the suite's tools by name; a case's own tool definitions
    take the place of the suite's tools of the same name. ``memo``: values
    compiled for the suite's other cases, reused (see :class:`ArgMemo`); it is
    used only when made for this ``by_name`` and ``ctx``.
    """
    expect = case.expect
    if memo is not None and (memo.by_name is not by_name or memo.ctx is not ctx):
        memo = None
    if case.tools and case.definitions:
        memo = None  # the case's own tools change the defaults
        by_name = suite.tool_index(case, by_name)
    call_sets, text = _compile_expect(case, suite, by_name, ctx, memo)
    count: tuple[int | None, int | None] | None = None
    if isinstance(expect.count, int):
        count = (expect.count, expect.count)
    elif expect.count is not None:
        count = (expect.count.min, expect.count.max)
    named = {t for cs in call_sets for c in cs for t in c.tools} | set(expect.forbidden)
    offered, guarded = _tool_sets(case, suite, by_name)
    first = call_sets[0] if call_sets else []
    expected_tools = shared_names(dict.fromkeys(c.tools[0] for c in first))
    single = None
    plain = count is None and text is None and expect.resolved_kind is Kind.call
    one = plain and len(call_sets) == 1 and len(call_sets[0]) == 1
    if one and not set(call_sets[0][0].tools) & set(expect.forbidden):
        single = call_sets[0][0]
    return CompiledCase(
        case=case,
        case_id=case.id,
        kind=expect.resolved_kind,
        call_sets=call_sets,
        forbidden=frozenset(expect.forbidden),
        count=count,
        order=expect.order or suite.defaults.order,
        text=text,
        risk=_risk(case, named, by_name),
        tags=shared_names(case.tags),
        offered=offered,
        expected_tools=expected_tools,
        guarded=guarded,
        single=single,
        reply_judged=text is not None or expect.resolved_kind not in (Kind.call, Kind.none),
        tool_at=tuple(tool_positions(s) for s in call_sets),
    )


def tool_positions(calls: list[CompiledCall]) -> dict[str, int] | None:
    """Each expected call's position by its tool, when every call names one tool and no two
    the same one: then a call can pair only with the expected call of its tool, and the
    optimal pairing needs no search. None otherwise."""
    at = {c.tools[0]: i for i, c in enumerate(calls) if len(c.tools) == 1}
    return at if len(at) == len(calls) else None


def describe_calls(calls: list[CompiledCall]) -> str:
    return "; ".join(c.describe() for c in calls) if calls else "(no call)"


__all__ = [
    "ArgMemo",
    "CompiledCall",
    "CompiledCase",
    "ToolIndex",
    "compile_case",
    "compile_expectations",
    "context",
    "describe_calls",
    "show",
    "tool_positions",
]
