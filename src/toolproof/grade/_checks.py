"""The check interface, and the built-in check of a one-turn answer (its six stages).

A check is a small object with a ``name`` and ``evaluate(case, answer)``
returning its findings (``Check``: stage, failure class, reason). An empty
result means the check passed. The answer is analysed once (``_answer``) and
every check reads the same analysis; the assembler (``_assemble``) turns the
findings into a verdict. A suite's own Python checks (``_custom``) and, later,
model judges implement the same interface.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from toolproof.grade._answer import CallInfo, SingleAnswer
from toolproof.grade._behaviour import asks
from toolproof.grade._compile import CompiledCase
from toolproof.types import Check, FailureClass, Kind, Message, Response, Stage, ToolCall

__all__ = [
    "SINGLE_STEP_CHECKS",
    "AnswerView",
    "CaseCheck",
    "OneTurn",
    "one_turn",
    "reply_findings",
    "run_checks",
    "those_that_apply",
]

_REFUSAL = re.compile(
    r"\b(?:can(?:no|['’])t|cannot|won['’]t|will not|unable|not able|not allowed|not permitted|"
    r"sorry|afraid|decline|refuse|kann nicht|darf nicht|ne peux pas|désolé|no puedo|lo siento|"
    r"nemohu|nemůžu|nesmím|bohužel)\b|不能|无法|抱歉|죄송|할 수 없|не могу|не можу|извините",
    re.IGNORECASE,
)


class AnswerView(Protocol):
    """What every analysed answer offers a check (one-turn and multi-step alike)."""

    @property
    def response(self) -> Response:
        """The final response."""

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        """Every tool call the model made, in order (across all steps)."""

    @property
    def messages(self) -> tuple[Message, ...]:
        """The model's part of a multi-step conversation (empty for one turn)."""

    @property
    def end_state(self) -> Any:
        """The environment's end state of a multi-step attempt, or None."""


class CaseCheck(Protocol):
    """A check: the case and the analysed answer in, findings with reasons out."""

    @property
    def name(self) -> str: ...

    def evaluate(self, case: CompiledCase, answer: Any) -> Sequence[Check]: ...


def those_that_apply(checks: Sequence[CaseCheck], case: CompiledCase) -> tuple[CaseCheck, ...]:
    """The checks that can find something in some answer to ``case``: a check with an
    ``applies(case)`` method that says no finds nothing in any answer to it, so it is not
    run (a suite's own checks, which have no such method, are always run)."""
    return tuple(
        check
        for check in checks
        if (applies := getattr(check, "applies", None)) is None or applies(case)
    )


def run_checks(checks: Sequence[CaseCheck], case: CompiledCase, answer: Any) -> list[Check]:
    out: list[Check] = []
    for check in checks:  # (a loop: most checks find nothing, and make no list to join)
        found = check.evaluate(case, answer)
        if found:
            out.extend(found)
    return out


# (an enum member read from its class costs about a call in Python 3.11: EnumType has a
# __getattr__; the checks read these for every failing answer)
_CALL = Kind.call
_SELECTION, _STRUCTURE, _VALUES = Stage.selection, Stage.structure, Stage.values
_WRONG_TOOL, _UNKNOWN_TOOL = FailureClass.wrong_tool, FailureClass.unknown_tool
_WRONG_ARGUMENTS = FailureClass.wrong_arguments

#: Findings whose words never change, made once (a Check is immutable).
_MISSED = Check(Stage.decision, FailureClass.missed_call, "expected a tool call, got none")
_WRONG_ORDER = Check(
    Stage.contract, FailureClass.wrong_order, "the right calls, in the wrong order (order: strict)"
)


def _unwanted(case: CompiledCase, calls: list[CallInfo]) -> Check:
    """The decision stage's finding of calls made where none was asked for."""
    got = ", ".join([i.name for i in calls])
    what = "no tool call" if case.kind is Kind.none else f"{case.kind.value} with no tool call"
    return Check(Stage.decision, FailureClass.unwanted_call, f"expected {what}, got {got}")


def _selection(case: CompiledCase, answer: SingleAnswer, out: list[Check]) -> None:
    """The selection stage's finding, added to ``out``; asked where the best call set's
    tools are wrong or no call set is judged (then only unknown tools are a finding)."""
    unknown = []
    for i in answer.infos:  # (a loop: a comprehension is a call of its own)
        if not i.known:
            unknown.append(i.name)
    best = answer.best
    if best is not None:
        failure = _UNKNOWN_TOOL if unknown else _WRONG_TOOL
        why = f"called unknown tool {', '.join(unknown)}" if unknown else "wrong tools"
        reason = f"{why}: expected {case.describe_set(best.index)}"
        out.append(Check(_SELECTION, failure, reason))
    elif unknown:
        reason = f"called unknown tool {', '.join(unknown)}"
        out.append(Check(Stage.selection, FailureClass.unknown_tool, reason))


def _contract(case: CompiledCase, answer: SingleAnswer, out: list[Check]) -> None:
    """The contract stage's findings (forbidden tools, call count, order), added to ``out``;
    asked where the case has a contract of its own or the best call set breaks one."""
    calls, best = answer.infos, answer.best
    if case.forbidden:
        bad = [i.name for i in calls if i.name in case.forbidden]
        if bad:
            reason = f"called forbidden tool {', '.join(dict.fromkeys(bad))}"
            out.append(Check(Stage.contract, FailureClass.forbidden_tool, reason))
    if case.count is None and best is not None and not best.count_ok:
        reason = (
            f"the right tools, called {len(calls)} times; expected {len(best.expected)} "
            f"calls: {case.describe_set(best.index)}"
        )
        out.append(Check(Stage.contract, FailureClass.wrong_count, reason))
    if case.count is not None:
        low, high = case.count
        n = len(calls)
        if (low is not None and n < low) or (high is not None and n > high):
            lo = "0" if low is None else str(low)
            want = lo if low == high else f"{lo}..{'∞' if high is None else high}"
            reason = f"expected {want} calls, got {n}"
            out.append(Check(Stage.contract, FailureClass.wrong_count, reason))
    if best is not None and not best.order_ok:
        out.append(_WRONG_ORDER)


def one_turn(case: CompiledCase, answer: SingleAnswer) -> list[Check]:
    """The findings of the six stages of a one-turn answer, in one pass, in stage order.

    1. decision   a call was made when one was required, and none otherwise;
    2. selection  the calls name the right tools (optimal pairing over the whole array);
    3. structure  raw arguments parse, and validate against the schema the model was given;
    4. values     argument by argument, only where the tool was right;
    5. contract   forbidden tools, call count and order;
    6. reply      for text answers: the reply asks, confirms or refuses as expected.

    A stage that needs more than a few lines has a function of its own, asked only when
    the analysis says the stage can find something (most stages find nothing in most
    answers, and then cost no call).
    """
    calls, best = answer.infos, answer.best
    out: list[Check] = []
    if bool(calls) != (case.kind is _CALL):  # decision
        out.append(_unwanted(case, calls) if calls else _MISSED)
    if (calls if best is None else best.selection_ok is False):  # selection
        _selection(case, answer, out)  # (with no call and no set judged, it finds nothing)
    for i in calls:  # structure
        if i.failure is not None:
            out.append(Check(_STRUCTURE, i.failure, i.message))
    if best is not None and best.values_ok is False and best.value_reasons:  # values
        reason = "; ".join(best.value_reasons)
        out.append(Check(_VALUES, _WRONG_ARGUMENTS, reason))
    if (  # contract
        case.forbidden
        or case.count is not None
        or (best is not None and not (best.count_ok and best.order_ok))
    ):
        _contract(case, answer, out)
    if case.reply_judged:  # reply
        out += reply_findings(case, answer.response)
    return out


@dataclass(frozen=True, slots=True)
class OneTurn:
    """The built-in check of a one-turn answer: its six stages (:func:`one_turn`)."""

    name: str = "one_turn"

    def evaluate(self, case: CompiledCase, answer: SingleAnswer) -> Sequence[Check]:
        return one_turn(case, answer)


def reply_applies(case: CompiledCase, kind: Kind | None = None) -> bool:
    """The reply is judged: a reply matcher is given, or the kind asks for a reply."""
    if kind is None:
        return case.reply_judged
    return case.text is not None or kind not in (Kind.call, Kind.none)


def reply_findings(case: CompiledCase, response: Response, kind: Kind | None = None) -> list[Check]:
    """What is wrong with the final reply, for a case whose reply is judged."""
    kind = kind or case.kind
    text = response.text or ""
    problems: list[str] = []
    if case.text is not None:
        reason = case.text.check(text)
        if reason is not None:
            problems.append(f"reply text: {reason}")
    if kind in (Kind.clarify, Kind.confirm) and case.text is None and not asks(text):
        what = "ask for the missing information" if kind is Kind.clarify else "ask for confirmation"
        problems.append(f"expected the reply to {what} (heuristic: no question or request found)")
    elif kind is Kind.refuse and case.text is None:
        if not (response.refusal or _REFUSAL.search(text)):
            problems.append("expected a refusal (heuristic: no refusal found)")
    elif kind is Kind.text and not text.strip() and not response.refusal:
        problems.append("expected a text answer, got an empty reply")
    return [Check(Stage.reply, FailureClass.wrong_reply, p) for p in problems]


#: The built-in checks of a one-turn answer: its six stages, in one pass. (The scorer's
#: general path calls :func:`one_turn` itself, and a suite's own checks after it.)
SINGLE_STEP_CHECKS: tuple[CaseCheck, ...] = (OneTurn(),)
