"""What a suite's cases exercise, per tool: ``toolproof coverage SUITE``.

Per tool (the suite's tools and the tools cases define themselves, by name):

- **positive**: cases that expect a call to it;
- **no-call**: cases that expect no call (kind none, text or refuse) and name it,
  in ``forbidden`` or, when nothing is forbidden, as one of the case's own
  tools; a case that names no tool counts under "(no tool named)";
- **clarify** and **confirm**: cases of those kinds, attributed the same way;
- **edge**: cases of any kind, attributed the same way or by the call they
  expect, whose tags mark an edge (``edge``, ``edge:*`` or one of
  :data:`EDGE_TAGS`);
- **required never pinned**: required parameters no positive case gives an
  expected value for (an ``ignore`` matcher pins nothing);
- **enum values never used**: values of a top-level ``enum`` that no expected
  value (a literal, an option of ``one_of``, an ``optional`` value) uses.

Pure: it reads a loaded suite, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from toolproof.match import literal_options
from toolproof.match._matchers import matcher_name
from toolproof.types import Case, Kind, Suite, SuiteTool

__all__ = ["EDGE_TAGS", "NO_TOOL", "SuiteCoverage", "ToolCoverage", "suite_coverage"]

#: Tags that mark a case as an edge case (beside ``edge`` and ``edge:*``).
EDGE_TAGS = frozenset(
    {"dates", "units", "enum", "enums", "multilingual", "long", "adversarial", "unicode"}
)
#: The row of cases that name no tool.
NO_TOOL = "(no tool named)"


@dataclass
class ToolCoverage:
    tool: str
    positive: int = 0
    no_call: int = 0
    clarify: int = 0
    confirm: int = 0
    edge: int = 0
    required_unpinned: list[str] = field(default_factory=list)
    enum_unused: dict[str, list[Any]] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return self.positive + self.no_call + self.clarify + self.confirm


@dataclass
class SuiteCoverage:
    suite: str
    cases: int
    tools: list[ToolCoverage]


def is_edge(case: Case) -> bool:
    return any(t == "edge" or t.startswith("edge:") or t in EDGE_TAGS for t in case.tags)


def _named(case: Case) -> list[str]:
    """The tools a case that expects no call is about."""
    if case.expect.forbidden:
        return list(dict.fromkeys(case.expect.forbidden))
    if case.tools is not None and case.tool_names:
        return list(dict.fromkeys(case.tool_names))
    return [NO_TOOL]


def _expected_calls(case: Case) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for calls in case.expect.call_sets():
        for call in calls:
            out.extend((tool, call.args) for tool in call.tools)
    if case.trajectory is not None:
        for group in case.trajectory.groups():
            for call in group:
                out.extend((tool, call.args) for tool in call.tools)
    return out


def _pins(spec: Any) -> bool:
    """An expected value pins something (``ignore`` and ``absent`` do not)."""
    try:
        name = matcher_name(spec)
    except ValueError:
        return True
    return name not in ("ignore", "absent")


def _used_values(spec: Any) -> Iterable[Any]:
    try:
        return [value for _, value in literal_options(spec)]
    except ValueError:
        return []


def _hashable(value: Any) -> Any:
    return repr(value) if isinstance(value, list | dict) else (type(value).__name__, value)


def suite_coverage(suite: Suite) -> SuiteCoverage:
    """Per tool, what the suite's cases exercise (see the module)."""
    tools: dict[str, SuiteTool] = {t.name: t for t in suite.tools}
    for case in suite.cases:
        for t in case.definitions:
            tools.setdefault(t.name, t)
    rows: dict[str, ToolCoverage] = {name: ToolCoverage(name) for name in tools}
    pinned: dict[str, set[str]] = {name: set() for name in tools}
    used: dict[str, dict[str, set[Any]]] = {name: {} for name in tools}

    def row(name: str) -> ToolCoverage:
        return rows.setdefault(name, ToolCoverage(name))

    for case in suite.cases:
        kind = case.expect.resolved_kind
        calls = _expected_calls(case)
        if kind is Kind.call or calls:
            about = list(dict.fromkeys(tool for tool, _ in calls)) or [NO_TOOL]
            for tool in about:
                row(tool).positive += 1
            for tool, args in calls:
                for param, spec in args.items():
                    if _pins(spec):
                        pinned.setdefault(tool, set()).add(param)
                    seen = used.setdefault(tool, {}).setdefault(param, set())
                    seen.update(_hashable(v) for v in _used_values(spec))
        else:
            about = _named(case)
            for tool in about:
                r = row(tool)
                if kind is Kind.clarify:
                    r.clarify += 1
                elif kind is Kind.confirm:
                    r.confirm += 1
                else:
                    r.no_call += 1
        if is_edge(case):
            for tool in about:
                row(tool).edge += 1
    for name, defined in tools.items():
        params = defined.parameters if isinstance(defined.parameters, dict) else {}
        required = params.get("required")
        props = params.get("properties")
        props = props if isinstance(props, dict) else {}
        if isinstance(required, list):
            rows[name].required_unpinned = [
                str(p) for p in required if p not in pinned.get(name, set())
            ]
        for param, prop in props.items():
            enum = prop.get("enum") if isinstance(prop, dict) else None
            if not isinstance(enum, list):
                continue
            seen = used.get(name, {}).get(param, set())
            unused = [v for v in enum if _hashable(v) not in seen]
            if unused:
                rows[name].enum_unused[str(param)] = unused
    ordered = sorted(rows.values(), key=lambda r: (r.tool == NO_TOOL, r.tool))
    return SuiteCoverage(suite.name, len(suite.cases), ordered)
