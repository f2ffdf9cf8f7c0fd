"""Trajectory matching: the calls of every step against the expected sequence.

The expected calls are ordered groups; calls within a group may come in any
order. Modes:

strict     exactly the expected calls, group after group.
unordered  exactly the expected calls, in any order (groups are ignored).
subset     every actual call is expected (some expected may be missing); group order holds.
superset   every expected call is made (others may be added); group order holds.

Calls are paired optimally (``assign``), never greedily: a pair costs 0 when
the tool and arguments match, 1 when only the tool does. Among pairings of
equal cost the one that keeps the groups in order is chosen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from toolproof.grade._assign import assign
from toolproof.grade._compile import CompiledCall, CompiledCase, _compile_args, _defaults_for
from toolproof.grade._diff import render_call
from toolproof.match import Context, SpecError
from toolproof.types import CallSpec, Kind, Order, Suite, SuiteTool, ToolCall, Trajectory

__all__ = [
    "CompiledTrajectory",
    "MultiStepCase",
    "TrajectoryResult",
    "compile_multistep",
    "compile_trajectory",
    "match_trajectory",
]


@dataclass(slots=True)
class CompiledTrajectory:
    mode: Order
    groups: list[list[CompiledCall]]

    @property
    def flat(self) -> list[tuple[int, CompiledCall]]:
        return [(g, c) for g, group in enumerate(self.groups) for c in group]


@dataclass(slots=True)
class TrajectoryResult:
    """How the actual calls lined up with the expected trajectory."""

    ok: bool
    tools_ok: bool
    values_ok: bool | None
    reasons: list[str] = field(default_factory=list)
    pairs: list[tuple[int, int]] = field(default_factory=list)
    """(expected index, actual index) pairs with the right tool."""
    expected: CompiledTrajectory | None = None


def compile_trajectory(
    trajectory: Trajectory,
    by_name: dict[str, SuiteTool],
    ctx: Context,
    default_extra: bool,
) -> CompiledTrajectory:
    """Compile every expected call; ``trajectory.match`` overrides the tools' default matchers."""
    groups: list[list[CompiledCall]] = []
    for g, specs in enumerate(trajectory.groups()):
        group = []
        for c, spec in enumerate(specs):
            try:
                group.append(_compile_call(spec, trajectory.match, by_name, ctx, default_extra))
            except SpecError as exc:
                where = (
                    ("trajectory", "steps", g) if len(specs) == 1 else ("trajectory", "steps", g, c)
                )
                raise SpecError(str(exc), (*where, *exc.path)) from None
        groups.append(group)
    return CompiledTrajectory(trajectory.mode, groups)


def _compile_call(
    spec: CallSpec,
    overrides: dict[str, dict[str, Any]],
    by_name: dict[str, SuiteTool],
    ctx: Context,
    default_extra: bool,
) -> CompiledCall:
    defaults = _defaults_for(spec.tools, by_name)
    for name in spec.tools:
        defaults.update(overrides.get(name, {}))
    extra = default_extra if spec.extra_args is None else spec.extra_args
    return CompiledCall(spec.tools, _compile_args(spec.args, defaults, extra, ctx, spec.tools[0]))


def match_trajectory(expected: CompiledTrajectory, calls: list[ToolCall]) -> TrajectoryResult:
    flat = expected.flat
    n, m = len(flat), len(calls)
    tier = [[_tier(c, call) for call in calls] for _, c in flat]
    pairs = _pair(flat, tier, m)
    good = [(i, j) for i, j in pairs if tier[i][j] == 0]
    tool_pairs = [(i, j) for i, j in pairs if tier[i][j] <= 1]
    mode = expected.mode
    reasons: list[str] = []
    ok = _covered(mode, n, m, good, flat, calls, reasons)
    tools_ok = _covered(mode, n, m, tool_pairs, flat, calls, [])
    wrong_args = [(i, j) for i, j in tool_pairs if tier[i][j] == 1]
    for i, j in wrong_args:
        why = flat[i][1].args.check(calls[j].arguments) or "arguments do not match"
        reasons.append(f"wrong arguments: {render_call(calls[j])}: {why}")
    if mode is not Order.unordered and len(expected.groups) > 1 and not _in_order(good, flat):
        ok = False
        reasons.append(f"calls out of order (mode: {mode.value}): {_sequence(calls)}")
    return TrajectoryResult(
        ok=ok and not wrong_args,
        tools_ok=tools_ok,
        values_ok=(not wrong_args) if tools_ok else None,
        reasons=reasons,
        pairs=tool_pairs,
        expected=expected,
    )


def _tier(expected: CompiledCall, call: ToolCall) -> int:
    if call.name not in expected.tools:
        return 2
    if call.parse_error is not None:
        return 1
    return 0 if expected.args.check(call.arguments) is None else 1


def _pair(
    flat: list[tuple[int, CompiledCall]], tier: list[list[int]], m: int
) -> list[tuple[int, int]]:
    """Optimal pairing: fewest mismatches first, then groups kept in call order."""
    if not flat or not m:
        return []
    groups = flat[-1][0] + 1
    weight = (groups + 1) * (m + 1) * (len(flat) + 1)
    cost = [
        [tier[i][j] * weight + (groups - g) * j for j in range(m)] for i, (g, _) in enumerate(flat)
    ]
    return [(i, j) for i, j in assign(cost) if tier[i][j] < 2]


def _covered(
    mode: Order,
    n: int,
    m: int,
    pairs: list[tuple[int, int]],
    flat: list[tuple[int, CompiledCall]],
    calls: list[ToolCall],
    reasons: list[str],
) -> bool:
    paired_e = {i for i, _ in pairs}
    paired_a = {j for _, j in pairs}
    missing = [flat[i][1].describe() for i in range(n) if i not in paired_e]
    extra = [render_call(calls[j]) for j in range(m) if j not in paired_a]
    need_all = mode is not Order.subset
    only_expected = mode is not Order.superset
    ok = True
    if need_all and missing:
        ok = False
        reasons.append(f"missing: {'; '.join(missing)}")
    if only_expected and extra:
        ok = False
        reasons.append(f"unexpected: {'; '.join(extra)}")
    return ok


def _in_order(pairs: list[tuple[int, int]], flat: list[tuple[int, CompiledCall]]) -> bool:
    groups = [flat[i][0] for i, _ in sorted(pairs, key=lambda p: p[1])]
    return all(a <= b for a, b in pairwise(groups))


def _sequence(calls: list[ToolCall]) -> str:
    return " → ".join(c.name for c in calls) or "(no call)"


# ---------------------------------------------------------------- what a multi-step case needs


@dataclass(frozen=True, slots=True)
class MultiStepCase:
    """What grading a multi-step case needs, compiled once."""

    kind: Kind
    trajectories: list[CompiledTrajectory]
    start: int
    """Index of the first message the model produced (after the case's own conversation)."""
    data_words: tuple[str, ...] = ()
    """Enum values of the tools' status parameters: words a reply could invent."""
    graceful_fails: bool = False
    """An ungraceful reply after a tool failure fails the case (else it is only reported)."""
    reply_kind: Kind = Kind.text
    """How the final reply is judged: a multi-step attempt with no stated kind must end
    with a non-empty reply."""

    @property
    def expects_call(self) -> bool | None:
        """What the contract expects of the whole conversation: a tool call (True), none
        (False), or either (None). A call is expected when the kind is ``call`` or every
        trajectory names a call that must be made (any mode but subset); no call when
        the kind is ``clarify`` or ``none``; otherwise calls are allowed, not required."""
        if self.kind is Kind.call:
            return True
        if self.kind in (Kind.clarify, Kind.none):
            return False
        required = [t.mode is not Order.subset and bool(t.groups) for t in self.trajectories]
        return True if required and all(required) else None


def compile_multistep(
    cc: CompiledCase, suite: Suite, by_name: dict[str, SuiteTool], ctx: Context
) -> MultiStepCase:
    case = cc.case
    by_name = suite.tool_index(case, by_name)
    if case.trajectory is not None:
        trajectories = [
            compile_trajectory(case.trajectory, by_name, ctx, suite.defaults.extra_args)
        ]
    else:
        trajectories = [CompiledTrajectory(cc.order, [s]) for s in cc.call_sets if s]
    kind = Kind.call if case.trajectory is not None and case.expect.kind is None else cc.kind
    if kind is Kind.none and case.expect.kind is None:
        kind = Kind.text  # a multi-step attempt is expected to end with a reply
    reply_kind = Kind.text if cc.kind is Kind.none and case.expect.kind is None else cc.kind
    words = {
        str(v).lower().replace("_", " ")
        for t in by_name.values()
        for name, p in (t.parameters.get("properties") or {}).items()
        if isinstance(p, dict) and ("status" in name or "state" in name)
        for v in p.get("enum", [])
        if isinstance(v, str) and len(v) > 3
    }
    start = len(case.conversation(suite.system))
    asked = case.expect.graceful
    fails = suite.defaults.graceful_failure if asked is None else asked
    return MultiStepCase(kind, trajectories, start, tuple(sorted(words)), fails, reply_kind)


def best_trajectory(ms: MultiStepCase, calls: list[ToolCall]) -> TrajectoryResult | None:
    if not ms.trajectories:
        return None
    results = [match_trajectory(t, calls) for t in ms.trajectories]
    return max(results, key=lambda r: (r.ok, r.tools_ok, r.values_ok is True, -len(r.reasons)))


def best_flat(best: TrajectoryResult | None) -> list[tuple[int, CompiledCall]]:
    return [] if best is None or best.expected is None else best.expected.flat
