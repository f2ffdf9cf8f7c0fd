"""Compile a suite's cases once, so that grading builds nothing per case."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from toolproof.match import Context, Matcher, SpecError, compile_value, context, show
from toolproof.match._matchers import ObjectMatcher, apply_default
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
) -> ObjectMatcher:
    fields: dict[str, Matcher] = {}
    for key, spec in args.items():
        # a judge that decides this argument is told which tool and parameter it is
        at = replace(ctx, argument=(tool, key)) if ctx.decisions is not None else ctx
        try:
            fields[key] = compile_value(apply_default(spec, tool_defaults.get(key)), at)
        except SpecError as exc:
            raise SpecError(str(exc), ("args", key, *exc.path)) from None
    return ObjectMatcher(fields, extra)


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


def compile_case(
    case: Case, suite: Suite, by_name: dict[str, SuiteTool], ctx: Context
) -> CompiledCase:
    """Compile one case. Raises SpecError with a path relative to the case.

    ``by_name`` is the suite's tools by name; a case's own tool definitions
    take the place of the suite's tools of the same name.
    """
    expect = case.expect
    by_name = suite.tool_index(case, by_name)
    default_extra = suite.defaults.extra_args
    call_sets: list[list[CompiledCall]] = []
    for s, specs in enumerate(expect.call_sets()):
        compiled = []
        for c, spec in enumerate(specs):
            extra = default_extra if spec.extra_args is None else spec.extra_args
            try:
                args = _compile_args(
                    spec.args, _defaults_for(spec.tools, by_name), extra, ctx, spec.tools[0]
                )
            except SpecError as exc:
                where: tuple[str | int, ...]
                if expect.alternatives is not None:
                    where = ("expect", "alternatives", s, c)
                elif expect.calls is not None:
                    where = ("expect", "calls", c)
                else:
                    where = ("expect",)
                raise SpecError(str(exc), (*where, *exc.path)) from None
            compiled.append(CompiledCall(spec.tools, args))
        call_sets.append(compiled)
    count: tuple[int | None, int | None] | None = None
    if isinstance(expect.count, int):
        count = (expect.count, expect.count)
    elif expect.count is not None:
        count = (expect.count.min, expect.count.max)
    text = None
    if expect.text is not None:
        try:
            text = compile_value(expect.text, ctx)
        except SpecError as exc:
            raise SpecError(str(exc), ("expect", "text", *exc.path)) from None
    named = {t for cs in call_sets for c in cs for t in c.tools} | set(expect.forbidden)
    offered, guarded = _tool_sets(case, suite, by_name)
    expected_tools = tuple(dict.fromkeys(c.tools[0] for c in call_sets[0])) if call_sets else ()
    single = None
    plain = count is None and text is None and expect.resolved_kind is Kind.call
    one = plain and len(call_sets) == 1 and len(call_sets[0]) == 1
    if one and not set(call_sets[0][0].tools) & set(expect.forbidden):
        single = call_sets[0][0]
    return CompiledCase(
        case=case,
        kind=expect.resolved_kind,
        call_sets=call_sets,
        forbidden=frozenset(expect.forbidden),
        count=count,
        order=expect.order or suite.defaults.order,
        text=text,
        risk=_risk(case, named, by_name),
        tags=tuple(case.tags),
        offered=offered,
        expected_tools=expected_tools,
        guarded=guarded,
        single=single,
        reply_judged=text is not None or expect.resolved_kind not in (Kind.call, Kind.none),
    )


def describe_calls(calls: list[CompiledCall]) -> str:
    return "; ".join(c.describe() for c in calls) if calls else "(no call)"


__all__ = [
    "CompiledCall",
    "CompiledCase",
    "ToolIndex",
    "compile_case",
    "context",
    "describe_calls",
    "show",
]
