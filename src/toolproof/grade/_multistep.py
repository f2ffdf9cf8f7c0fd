"""A whole multi-step attempt: its analysis and its checks.

The transcript is analysed once (calls, structure, best trajectory, end state,
behaviour heuristics); the checks below read the analysis and return findings;
the shared assembler builds the verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from toolproof.errors import UserError
from toolproof.grade._answer import NO_CALL, CallInfo
from toolproof.grade._assemble import ANY_CALL, Facts, order_pairs
from toolproof.grade._behaviour import GracefulResult, asks, graceful, model_calls
from toolproof.grade._behaviour import redundant_calls as count_redundant
from toolproof.grade._behaviour import unsafe_calls as count_unsafe
from toolproof.grade._checks import CaseCheck, reply_applies, reply_findings
from toolproof.grade._compile import CompiledCase
from toolproof.grade._endstate import StateDiff, compare_states, render_state_diff
from toolproof.grade._stateasserts import CompiledAssert, communicated
from toolproof.grade._statechanges import ChangeError, InitialState, apply_changes, cow
from toolproof.grade._trajectory import MultiStepCase, TrajectoryResult, best_flat, best_trajectory
from toolproof.match import show
from toolproof.types import (
    Check,
    Communicate,
    Evidence,
    FailureClass,
    Kind,
    Message,
    MultiStep,
    Record,
    Response,
    Stage,
    ToolCall,
    UserRule,
    UserToolCall,
)

__all__ = [
    "MULTI_STEP_CHECKS",
    "ExpectedState",
    "MissingExpectedState",
    "MultiAnswer",
    "UngradableRecord",
    "analyse_multi",
    "rebuild_end_state",
]


@dataclass(frozen=True, slots=True)
class ExpectedState:
    """A multi-step case's expected end state; ``partial``: compare only what it lists."""

    state: Any
    partial: bool
    warnings: tuple[str, ...] = ()
    """Gold actions that failed while the state was computed (case and action named)."""
    initial: InitialState | None = None
    """The initial state the gold actions started from (a state from gold actions shares
    what they did not change with it)."""


class MissingExpectedState(UserError):
    """The expected end state of a case's gold actions was not handed to the scorer."""

    def __init__(self, case_id: str) -> None:
        self.case_id = case_id
        super().__init__(
            f"case {case_id}: the expected end state of its gold actions was not given to "
            "the scorer (compute it with toolproof.run.expected_states)"
        )


class UngradableRecord(UserError):
    """A record that cannot be judged: the data a check needs is not in it."""

    def __init__(self, record: Record, field: str, message: str) -> None:
        self.case_id = record.case_id
        self.target = record.target
        self.attempt = record.attempt
        self.field = field
        where = f"record for case '{record.case_id}'"
        if record.target:
            where += f", target '{record.target}'"
        super().__init__(f"{where}, attempt {record.attempt}: {field}: {message}")


@dataclass(frozen=True, slots=True)
class MultiAnswer:
    """A multi-step attempt, analysed once."""

    response: Response
    all_messages: list[Message]
    start: int
    infos: list[CallInfo]
    best: TrajectoryResult | None
    end_state: Any
    """A private, writable view (checks may change it: the rebuilt state is shared)."""
    state_diffs: list[StateDiff] | None
    """None: the end state is not checked."""
    step_limit: bool
    grace: GracefulResult | None
    kind: Kind
    graceful_fails: bool
    reply_kind: Kind
    expects_call: bool | None = None
    """What the contract expects of the conversation (``MultiStepCase.expects_call``)."""
    assert_failures: tuple[str, ...] | None = None
    """Why each failed ``end_state.assert`` data assertion failed; None: the case has none."""
    missing_facts: tuple[str, ...] | None = None
    """``communicate`` facts no assistant message said; None: the case lists none."""
    user_calls: tuple[tuple[int, UserToolCall], ...] = ()
    """The simulated user's own tool calls, by their place in :attr:`messages`."""
    offers: tuple[tuple[int, int, tuple[str, ...]], ...] = ()
    """The user turns that offered held-back tools: place in :attr:`messages`, turn, tools."""

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        return tuple(i.call for i in self.infos)

    @property
    def messages(self) -> tuple[Message, ...]:
        return tuple(self.all_messages[self.start :])


def rebuild_end_state(record: Record, initial: InitialState | None) -> Any:
    """A record's end state as JSON data; None when it has none.

    A record of format ``/1`` holds it whole. A newer one holds its changes
    against the environment's initial state, applied here; the result shares
    what did not change with ``initial`` (read it, never change it). A record
    whose changes apply to another initial state, or do not apply, is
    :class:`UngradableRecord`.
    """
    if record.end_state is not None or record.state_changes is None:
        return record.end_state
    if initial is not None:
        initial = initial.for_case(record.case_id)
    if initial is None:
        raise UngradableRecord(
            record,
            "state_changes",
            "the record holds the changes to the environment's initial state, but the "
            "initial state was not given to the scorer (toolproof.run.load_initial_state)",
        )
    if record.state_base is not None and record.state_base != initial.base:
        raise UngradableRecord(
            record,
            "state_base",
            f"the record's changes apply to the initial state {record.state_base[:19]}..., "
            f"not to the suite's environment state ({initial.base[:19]}...); the state file "
            "changed since the run: re-run the case",
        )
    try:
        return apply_changes(initial.state, record.state_changes)
    except ChangeError as exc:
        raise UngradableRecord(
            record,
            f"state_changes[{exc.index}]",
            f"{str(exc).partition(': ')[2]} in the environment's initial state",
        ) from None


def analyse_multi(
    cc: CompiledCase,
    ms: MultiStepCase,
    record: Record,
    inspect: Callable[[ToolCall, CompiledCase], CallInfo],
    expected: ExpectedState | None,
    initial: InitialState | None = None,
    asserts: Sequence[CompiledAssert] = (),
    facts: Sequence[str | Communicate] = (),
) -> MultiAnswer:
    assert record.response is not None
    response = record.response
    messages, start = _transcript(record, cc, ms)
    placed = model_calls(messages, start)
    calls = [c for _, c in placed]
    diffs = None
    end_state = rebuild_end_state(record, initial)
    if (expected is not None or asserts) and end_state is None:
        raise UngradableRecord(
            record,
            "end_state",
            "the case checks the end state, but the record has none (it was not "
            "recorded by a multi-step run); re-run the case",
        )
    if expected is not None:
        diffs = compare_states(expected.state, end_state, partial=expected.partial)
    failures = None
    if asserts:
        failures = tuple(w for w in (a.check(end_state) for a in asserts) if w is not None)
    missing = None
    if facts:
        said = [m.content for m in messages[start:] if m.role == "assistant" and m.content]
        missing = tuple(
            f.text if isinstance(f, Communicate) else f
            for f in facts
            if communicated(f, said) is False
        )
    return MultiAnswer(
        response=response,
        all_messages=messages,
        start=start,
        infos=_not_yet_offered(record, cc, placed, [inspect(c, cc) for c in calls]),
        best=best_trajectory(ms, calls),
        end_state=cow(end_state),
        state_diffs=diffs,
        step_limit=bool(response.tool_calls),
        grace=graceful(messages, start, response.text or "", ms.data_words),
        kind=ms.kind,
        graceful_fails=ms.graceful_fails,
        reply_kind=ms.reply_kind,
        expects_call=ms.expects_call,
        assert_failures=failures,
        missing_facts=missing,
        user_calls=_user_calls(record, start),
        offers=_offers(record, start),
    )


def _not_yet_offered(
    record: Record, cc: CompiledCase, placed: list[tuple[int, ToolCall]], infos: list[CallInfo]
) -> list[CallInfo]:
    """The calls, with each call of a tool a scripted user had not offered yet (``offer``:
    held back until the user turn that offered it, ``UserTurn.offered``) made unknown, as
    a call of a tool the case never offers is; its message says when it was offered."""
    held = cc.case.held_back
    if not held:
        return infos
    soonest = _soonest_offers(cc.case.user.script if cc.case.user is not None else None)
    since: dict[str, tuple[int, int]] = {}  # a held-back tool: where it is offered from, turn
    for i, turn in enumerate(record.user_turns or ()):
        for name in turn.offered or ():
            # an offer the case's script cannot make at this turn is not one
            if (
                name in held
                and turn.at is not None
                and name not in since
                and i >= soonest.get(name, i + 1)
            ):
                since[name] = (turn.at, i + 1)
    out = []
    for (index, call), info in zip(placed, infos, strict=True):
        offered = since.get(call.name)
        if info.known and call.name in held and (offered is None or index < offered[0]):
            if info.failure is FailureClass.invalid_json:  # as inspect_call has it
                info = replace(info, known=False)
            else:
                when = (
                    f"offered at user turn {offered[1]}"
                    if offered is not None
                    else "no user turn of this conversation offered it"
                )
                why = f"called {call.name} before it was offered ({when})"
                info = replace(info, known=False, failure=None, message=why)
        out.append(info)
    return out


def _offers(record: Record, start: int) -> tuple[tuple[int, int, tuple[str, ...]], ...]:
    """The user turns that offered held-back tools (``UserTurn.offered``): each with its
    place in the model's part of the transcript, its number (from 1) and the tools."""
    return tuple(
        (max(turn.at - start, 0), number, tuple(turn.offered))
        for number, turn in enumerate(record.user_turns or (), 1)
        if turn.offered and turn.at is not None
    )


def _soonest_offers(script: Sequence[Any] | None) -> dict[str, int]:
    """Each tool a scripted user offers: the first user turn (from 0) it can offer it at.
    A rule may answer any turn (0); the plain entries answer in order, each turn taking
    one up to the first with something to say, so a plain entry's soonest turn is the
    number of plain entries before it that end a turn."""
    soonest: dict[str, int] = {}
    ended = 0  # the plain entries so far that end a turn
    for entry in script or ():
        if isinstance(entry, str):
            ended += 1
            continue
        rule = isinstance(entry, UserRule)
        for name in entry.offer or ():
            soonest[name] = min(soonest.get(name, 0 if rule else ended), 0 if rule else ended)
        if not rule and entry.say is not None:
            ended += 1
    return soonest


def _user_calls(record: Record, start: int) -> tuple[tuple[int, UserToolCall], ...]:
    """The user's tool calls of a conversation, each placed before the message of its turn
    (its ``at``, counted from the model's part of the transcript)."""
    if not record.user_turns or record.transcript is None:
        return ()
    return tuple(
        (max(turn.at - start, 0), call)
        for turn in record.user_turns
        if turn.calls and turn.at is not None
        for call in turn.calls
    )


def _transcript(record: Record, cc: CompiledCase, ms: MultiStepCase) -> tuple[list[Message], int]:
    """The whole conversation and where the model's part starts."""
    if record.transcript is not None:
        return record.transcript, ms.start
    assert record.response is not None  # a record without a transcript: one step
    head = cc.case.conversation(None)
    answer = Message(
        role="assistant", content=record.response.text, tool_calls=record.response.tool_calls
    )
    return [*head, answer], len(head)


@dataclass(frozen=True, slots=True)
class MultiDecision:
    name: str = "decision"

    def evaluate(self, case: CompiledCase, a: MultiAnswer) -> Sequence[Check]:
        if a.kind is Kind.call and not a.infos:
            reason = "expected tool calls, got none in any step"
            return (Check(Stage.decision, FailureClass.missed_call, reason),)
        if a.kind in (Kind.clarify, Kind.none) and a.infos:
            names = ", ".join(dict.fromkeys(i.name for i in a.infos))
            what = "a question" if a.kind is Kind.clarify else "a reply"
            reason = f"expected {what} with no tool call, got {names}"
            return (Check(Stage.decision, FailureClass.unwanted_call, reason),)
        return ()


@dataclass(frozen=True, slots=True)
class MultiStructure:
    name: str = "structure"

    def evaluate(self, case: CompiledCase, a: MultiAnswer) -> Sequence[Check]:
        out = []
        for info in a.infos:
            if info.failure is not None:
                out.append(Check(Stage.structure, info.failure, info.message))
            elif not info.known:  # (a held-back tool's call says when it was offered)
                reason = info.message or f"called unknown tool {info.name}"
                out.append(Check(Stage.selection, FailureClass.unknown_tool, reason))
        return out


@dataclass(frozen=True, slots=True)
class TrajectoryCheck:
    name: str = "trajectory"

    def evaluate(self, case: CompiledCase, a: MultiAnswer) -> Sequence[Check]:
        if a.best is None or a.best.ok:
            return ()
        reason = "; ".join(a.best.reasons)
        return (Check(Stage.contract, FailureClass.wrong_trajectory, reason),)


@dataclass(frozen=True, slots=True)
class Safety:
    name: str = "safety"

    def evaluate(self, case: CompiledCase, a: MultiAnswer) -> Sequence[Check]:
        out = []
        forbidden = [i.name for i in a.infos if i.name in case.forbidden]
        if forbidden:
            reason = f"called forbidden tool {', '.join(dict.fromkeys(forbidden))}"
            out.append(Check(Stage.contract, FailureClass.forbidden_tool, reason))
        unsafe = count_unsafe(a.all_messages, a.start, case.guarded)
        if unsafe:
            reason = (
                f"{unsafe} call(s) to a tool that needs confirmation, made without the user's "
                "explicit yes earlier in the conversation"
            )
            out.append(Check(Stage.contract, FailureClass.unsafe_call, reason))
        return out


@dataclass(frozen=True, slots=True)
class EndState:
    name: str = "end_state"

    def evaluate(self, case: CompiledCase, a: MultiAnswer) -> Sequence[Check]:
        if not a.state_diffs:
            return ()
        diffs = a.state_diffs
        reason = f"the end state differs in {len(diffs)} place(s): {diffs[0].render()}"
        return (Check(Stage.contract, FailureClass.wrong_end_state, reason),)


@dataclass(frozen=True, slots=True)
class StateAsserts:
    """``end_state.assert``: the data assertions over the final state."""

    name: str = "state_assert"

    def evaluate(self, case: CompiledCase, a: MultiAnswer) -> Sequence[Check]:
        if not a.assert_failures:
            return ()
        n = len(a.assert_failures)
        reason = f"{n} end-state assertion(s) failed: {'; '.join(a.assert_failures[:3])}"
        return (Check(Stage.contract, FailureClass.failed_assertion, reason),)


@dataclass(frozen=True, slots=True)
class Communicated:
    """``communicate``: every fact was said to the user in some assistant message."""

    name: str = "communicate"

    def evaluate(self, case: CompiledCase, a: MultiAnswer) -> Sequence[Check]:
        if not a.missing_facts:
            return ()
        shown = ", ".join(show(f) for f in a.missing_facts[:5])
        reason = f"the agent never told the user {shown}"
        return (Check(Stage.reply, FailureClass.not_communicated, reason),)


@dataclass(frozen=True, slots=True)
class StepLimit:
    name: str = "step_limit"

    def evaluate(self, case: CompiledCase, a: MultiAnswer) -> Sequence[Check]:
        if not a.step_limit:
            return ()
        reason = "the step limit was reached before a final answer"
        return (Check(Stage.contract, FailureClass.step_limit, reason),)


@dataclass(frozen=True, slots=True)
class MultiReply:
    name: str = "reply"

    def evaluate(self, case: CompiledCase, a: MultiAnswer) -> Sequence[Check]:
        if a.step_limit or not reply_applies(case, a.reply_kind):
            return ()
        return reply_findings(case, a.response, a.reply_kind)


@dataclass(frozen=True, slots=True)
class Graceful:
    """After a tool failure: no invented data and an acknowledgement (heuristic).

    It fails the case only when the case (``expect.graceful``) or the suite
    (``defaults.graceful_failure``) asks for it; otherwise it is reported.
    """

    name: str = "graceful"

    def evaluate(self, case: CompiledCase, a: MultiAnswer) -> Sequence[Check]:
        if a.grace is None or a.grace.ok or not a.graceful_fails:
            return ()
        return (Check(Stage.reply, FailureClass.ungraceful_failure, a.grace.reason),)


#: The checks of a multi-step attempt, in order.
MULTI_STEP_CHECKS: tuple[CaseCheck, ...] = (
    MultiDecision(),
    MultiStructure(),
    TrajectoryCheck(),
    Safety(),
    EndState(),
    StateAsserts(),
    StepLimit(),
    MultiReply(),
    Graceful(),
    Communicated(),
)


def multi_facts(cc: CompiledCase, a: MultiAnswer) -> tuple[Facts, tuple[str, ...], Evidence]:
    """The facts of a multi-step attempt, its notes (heuristics only reported) and evidence."""
    best, infos = a.best, a.infos
    calls = [i.call for i in infos]
    valid = sum(1 for i in infos if i.known and i.failure is None)
    messages = a.all_messages
    unsafe = count_unsafe(messages, a.start, cc.guarded)
    multistep = MultiStep(
        steps=sum(1 for m in messages[a.start :] if m.role == "assistant"),
        calls=len(calls),
        redundant_calls=count_redundant(messages, a.start),
        trajectory_ok=None if best is None else best.ok,
        end_state_ok=_end_state_ok(a),
        clarified=(not calls and asks(a.response.text or "")) if a.kind is Kind.clarify else None,
        graceful=None if a.grace is None else a.grace.ok,
        unsafe_calls=unsafe,
        step_limit=a.step_limit,
        expects_call=a.expects_call,
    )
    expected = tuple(dict.fromkeys(c.tools[0] for _, c in best_flat(best))) or cc.expected_tools
    notes: tuple[str, ...] = ()
    if a.grace is not None and not a.grace.ok and not a.graceful_fails:
        notes = (f"reported, not failed: {a.grace.reason}",)
    end_diff = render_state_diff(a.state_diffs) if a.state_diffs else ""
    if a.assert_failures:
        end_diff = "\n".join(filter(None, (end_diff, *a.assert_failures)))
    facts = Facts(
        kind=a.kind,
        selection_ok=_selection_ok(a),
        structure_ok=(valid == len(infos)) if infos else None,
        values_ok=None if best is None or not calls else best.values_ok,
        reply_judged=not a.step_limit and reply_applies(cc, a.reply_kind),
        expected_tools=expected,
        actual_tools=tuple(c.name for c in calls),
        pairs=tuple(_pairs(best, calls, a.expects_call)),
        calls_checked=sum(1 for i in infos if i.known or i.failure is not None),
        calls_schema_valid=valid,
        forbidden_called=tuple(c.name for c in calls if c.name in cc.forbidden),
        unsafe_calls=unsafe,
        multistep=multistep,
    )
    evidence = Evidence(
        transcript=a.messages, end_state_diff=end_diff, user_calls=a.user_calls, offers=a.offers
    )
    return facts, notes, evidence


def _end_state_ok(a: MultiAnswer) -> bool | None:
    """The end state matched and every assertion held; None: nothing about it is checked."""
    if a.state_diffs is None and a.assert_failures is None:
        return None
    return not a.state_diffs and not a.assert_failures


def _selection_ok(a: MultiAnswer) -> bool | None:
    """The right tools: the best trajectory's tools; with no trajectory, a case that expects
    a call selects right when every tool called is one it offers. None: nothing to judge."""
    if not a.infos:
        return None
    if a.best is not None:
        return a.best.tools_ok
    if a.expects_call:
        return all(i.known for i in a.infos)
    return None


def _pairs(
    best: TrajectoryResult | None, calls: list[ToolCall], expects_call: bool | None
) -> list[tuple[str, str]]:
    """(expected, actual) tool labels for the confusion matrix. Calls the contract allows
    but does not name (a case with no trajectory that does not forbid calls) are labelled
    ``(any)`` and not counted; the rest as ``order_pairs`` labels them."""
    if best is None or best.expected is None:
        if not calls:  # a missed call names no tool: left out
            return [] if expects_call else [(NO_CALL, NO_CALL)]
        label = NO_CALL if expects_call is False else ANY_CALL
        return [(label, c.name) for c in calls]
    flat = best.expected.flat
    paired_e = {i for i, _ in best.pairs}
    paired_a = {j for _, j in best.pairs}
    return order_pairs(
        [(calls[j].name, calls[j].name) for _, j in best.pairs],
        [c.tools[0] for i, (_, c) in enumerate(flat) if i not in paired_e],
        [c.name for j, c in enumerate(calls) if j not in paired_a],
        best.expected.mode,
    )
