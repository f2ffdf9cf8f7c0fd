"""Expected against actual, rendered from a verdict and its compiled case (pure)."""

from __future__ import annotations

from toolproof.grade._compile import CompiledCase, describe_calls
from toolproof.match import show
from toolproof.types import Kind, Message, ToolCall, UserToolCall, Verdict

__all__ = ["render_call", "render_diff", "render_user_call"]


def render_call(call: ToolCall) -> str:
    if call.parse_error is not None or not isinstance(call.arguments, dict):
        return f"{call.name}({show(call.raw_arguments, 80)})"
    inner = ", ".join([f"{k}={show(v, 40)}" for k, v in call.arguments.items()])
    return f"{call.name}({inner})"


def render_diff(
    verdict: Verdict, cc: CompiledCase, expected: dict[tuple[str, int], str] | None = None
) -> str:
    """The diff of a failed verdict ("" for a pass). Model output is shown with ``show``.

    ``expected`` keeps the expected side of each case (and closest alternative)
    once rendered, for a caller that renders many diffs of the same cases.
    """
    if verdict.passed:
        return ""
    if verdict.multistep is not None:
        evidence = verdict.evidence
        return _transcript_diff(
            evidence.transcript, evidence.end_state_diff, evidence.user_calls, evidence.offers
        )
    response = verdict.evidence.answer
    key = (cc.case.id, verdict.evidence.closest)
    exp = expected.get(key) if expected is not None else None
    if exp is None:
        exp = _expected(cc, verdict.evidence.closest)
        if expected is not None:
            expected[key] = exp
    calls = response.tool_calls if response is not None else []
    act = "; ".join([render_call(c) for c in calls]) if calls else "(no call)"
    text = (response.refusal or response.text) if response is not None else None
    if text:
        act += f"; reply: {show(' '.join(text.split()), 100)}"
    printed = verdict.evidence.recovered
    if printed:  # a raw verdict: say what the model printed instead of calling
        shown = "; ".join(render_call(c) for c in printed)
        act += f"\n          printed as text, not called (counts only when repaired): {shown}"
    return f"expected: {exp}\nactual:   {act}"


def _expected(cc: CompiledCase, closest: int) -> str:
    if cc.kind is Kind.call:
        sets = cc.call_sets
        exp = describe_calls(sets[closest] if sets else [])
        if len(sets) > 1:
            exp += f"   (closest of {len(sets)} alternatives)"
        return exp
    if cc.kind is Kind.none:
        return "no call"
    return f"no call; reply: {cc.kind.value}"


def render_user_call(call: UserToolCall) -> str:
    """A simulated user's tool call and what it answered, on one line."""
    if isinstance(call.args, dict):
        inner = ", ".join([f"{k}={show(v, 40)}" for k, v in call.args.items()])
    else:
        inner = "" if call.args is None else show(call.args, 80)
    mark = "error" if call.is_error else "result"
    return f"{call.tool}({inner}) {mark}: {' '.join(call.result.split())[:100]}"


def _offer_line(number: int, names: tuple[str, ...]) -> str:
    """A user turn's offer of tools held back until it (``UserTurn.offered``)."""
    shown = ", ".join(names)
    if len(shown) > 200:  # (a records file may name anything, and many)
        shown = shown[:199] + "…"
    return f"  offer  {shown} (user turn {number})"


def _transcript_diff(
    messages: tuple[Message, ...],
    end_diff: str,
    user_calls: tuple[tuple[int, UserToolCall], ...] = (),
    offers: tuple[tuple[int, int, tuple[str, ...]], ...] = (),
) -> str:
    lines = ["trajectory:"]
    pending = list(user_calls)
    offered: dict[int, list[str]] = {}
    for at, number, names in offers:
        offered.setdefault(at, []).append(_offer_line(number, names))
    for index, m in enumerate(messages):
        while pending and pending[0][0] <= index:  # the user's own calls, before its message
            lines.append(f"  user→  {render_user_call(pending.pop(0)[1])}")
        if m.role == "assistant":
            for c in m.tool_calls:
                lines.append(f"  call   {render_call(c)}")
            if m.content:
                lines.append(f"  reply  {' '.join(m.content.split())[:120]}")
        elif m.role == "tool":
            mark = "error " if m.is_error else "result"
            lines.append(f"  {mark} {' '.join((m.content or '').split())[:100]}")
        elif m.role == "user" and m.content:  # a conversation's simulated user
            lines.append(f"  user   {' '.join(m.content.split())[:120]}")
            lines.extend(offered.pop(index, ()))  # the tools this turn offered, held back
    lines.extend(f"  user→  {render_user_call(call)}" for _, call in pending)
    for rest in offered.values():  # a turn with no message to the agent (a stop)
        lines.extend(rest)
    if end_diff:
        lines += [
            "end state (expected against actual):",
            *("  " + x for x in end_diff.splitlines()),
        ]
    return "\n".join(lines)
