from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

from toolproof.types._case import Kind
from toolproof.types._message import Message, ToolCall
from toolproof.types._record import UserToolCall
from toolproof.types._response import Response
from toolproof.types._tool import Risk


class Stage(StrEnum):
    """The scoring stages, in the order they are checked."""

    decision = "decision"
    selection = "selection"
    structure = "structure"
    values = "values"
    contract = "contract"
    reply = "reply"


class FailureClass(StrEnum):
    """Why a case failed. Each belongs to one stage."""

    missed_call = "missed_call"
    unwanted_call = "unwanted_call"
    unknown_tool = "unknown_tool"
    wrong_tool = "wrong_tool"
    invalid_json = "invalid_json"
    schema_mismatch = "schema_mismatch"
    wrong_arguments = "wrong_arguments"
    forbidden_tool = "forbidden_tool"
    wrong_count = "wrong_count"
    wrong_order = "wrong_order"
    wrong_reply = "wrong_reply"
    wrong_trajectory = "wrong_trajectory"
    wrong_end_state = "wrong_end_state"
    unsafe_call = "unsafe_call"
    step_limit = "step_limit"
    ungraceful_failure = "ungraceful_failure"
    custom_check = "custom_check"
    failed_assertion = "failed_assertion"
    not_communicated = "not_communicated"

    @property
    def stage(self) -> Stage:
        return _STAGE_OF[self]


_STAGE_OF = {
    FailureClass.missed_call: Stage.decision,
    FailureClass.unwanted_call: Stage.decision,
    FailureClass.unknown_tool: Stage.selection,
    FailureClass.wrong_tool: Stage.selection,
    FailureClass.invalid_json: Stage.structure,
    FailureClass.schema_mismatch: Stage.structure,
    FailureClass.wrong_arguments: Stage.values,
    FailureClass.forbidden_tool: Stage.contract,
    FailureClass.wrong_count: Stage.contract,
    FailureClass.wrong_order: Stage.contract,
    FailureClass.wrong_reply: Stage.reply,
    FailureClass.wrong_trajectory: Stage.contract,
    FailureClass.wrong_end_state: Stage.contract,
    FailureClass.unsafe_call: Stage.contract,
    FailureClass.step_limit: Stage.contract,
    FailureClass.ungraceful_failure: Stage.reply,
    FailureClass.custom_check: Stage.contract,
    FailureClass.failed_assertion: Stage.contract,
    FailureClass.not_communicated: Stage.reply,
}

STAGE_ORDER = tuple(Stage)


class Check(NamedTuple):
    """One finding of the scorer: which stage, whether it failed, and why.

    ``source`` names the check that made the finding: a built-in stage, or a
    suite's own check (``checks.py:name``).
    """

    stage: Stage
    failure: FailureClass | None
    detail: str
    source: str = ""

    @property
    def message(self) -> str:
        """Why the check failed, in words."""
        return self.detail

    @property
    def passed(self) -> bool:
        return self.failure is None


@dataclass(frozen=True, slots=True)
class MultiStep:
    """What a multi-step attempt did, beyond the checks. ``None``: does not apply."""

    steps: int
    """Model calls made (turns of the agent loop)."""
    calls: int
    """Tool calls made across all steps."""
    redundant_calls: int = 0
    """Calls repeating an earlier call with the same tool and arguments."""
    trajectory_ok: bool | None = None
    end_state_ok: bool | None = None
    clarified: bool | None = None
    """A clarify case: no call, and the reply asks for the missing data."""
    graceful: bool | None = None
    """After a tool failure: no invented data and an acknowledgement (heuristic)."""
    unsafe_calls: int = 0
    """Guarded calls made with no explicit confirmation from the user earlier."""
    step_limit: bool = False
    """The loop stopped at max_steps with calls still unanswered by text."""
    expects_call: bool | None = None
    """What the case's contract expects of the whole conversation: at least one tool
    call (True), none (False), or either (None: calls are allowed but not required).
    The decision and selection metrics read it (docs/metrics-multistep.md)."""


class Evidence(NamedTuple):
    """What a failed answer did, kept by reference so that its diff can be rendered later.

    Nothing is copied: ``answer`` is the graded response, ``transcript`` the
    model's part of a multi-step conversation. A passing verdict keeps none.
    """

    answer: Response | None = None
    closest: int = 0
    """Index of the expected call set (alternative) closest to the answer."""
    transcript: tuple[Message, ...] = ()
    end_state_diff: str = ""
    recovered: tuple[ToolCall, ...] = ()
    """A raw verdict's calls the model printed as text: left out of it, shown beside it."""
    user_calls: tuple[tuple[int, UserToolCall], ...] = ()
    """A conversation's simulated-user tool calls, each with its place in ``transcript``
    (the index of the message it came before; ``len(transcript)``: after the last)."""
    offers: tuple[tuple[int, int, tuple[str, ...]], ...] = ()
    """A conversation's user turns that offered tools held back until then (``offer``):
    each turn's place in ``transcript`` (as in ``user_calls``), its number among the
    user's turns (from 1) and the tools it offered."""


NO_EVIDENCE = Evidence()


class Verdict(NamedTuple):
    """The scorer's judgement of one attempt. Immutable once built (a named tuple:
    as cheap to build as a plain object, and ``_replace`` gives a changed copy).

    Stage flags are ``None`` where the stage does not apply: values are not
    judged when the tool was wrong, so argument accuracy is measured only
    where selection passed. The expected-against-actual diff of a failed case
    is rendered from the verdict and its compiled case by ``grade.render_diff``.
    """

    case_id: str
    kind: Kind
    risk: Risk
    tags: tuple[str, ...]
    passed: bool
    failure: FailureClass | None
    checks: tuple[Check, ...]
    decision_ok: bool
    selection_ok: bool | None
    structure_ok: bool | None
    values_ok: bool | None
    contract_ok: bool
    reply_ok: bool | None
    expected_tools: tuple[str, ...]
    actual_tools: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...] = ()
    calls_checked: int = 0
    calls_schema_valid: int = 0
    forbidden_called: tuple[str, ...] = ()
    unsafe_calls: int = 0
    """Calls to a confirmation-guarded or destructive tool that the contract did not ask for."""
    target: str | None = None
    attempt: int = 0
    multistep: MultiStep | None = None
    """Trajectory, end state and behaviour figures of a multi-step case (None for one turn)."""
    notes: tuple[str, ...] = ()
    """Observations that do not fail the case (heuristics that are only reported)."""
    evidence: Evidence = NO_EVIDENCE
    judge_decided: bool = False
    """The outcome turned on arguments a judge decided (``semantic`` with ``judge: true``):
    its figures are judge-derived."""
    undecided: int = 0
    """Arguments left to a judge that has not answered: the attempt is neither passed nor
    failed by them, and is not counted as passing (``passed`` is False, ``failure`` None)."""
    undecided_statements: int = 0
    """Judged statements (``communicate`` facts with ``match: judged``, ``nl_assertions``) no
    ``nl_assertion`` judge has answered about, on an attempt that passed every deterministic
    check: the attempt is left undecided, as for judge-decided arguments."""

    @property
    def failures(self) -> list[FailureClass]:
        return [c.failure for c in self.checks if c.failure is not None]
