from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from toolproof.types._case import Kind
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
}

STAGE_ORDER = tuple(Stage)


@dataclass(slots=True)
class Check:
    """One finding of the scorer: which stage, whether it failed, and why."""

    stage: Stage
    failure: FailureClass | None
    detail: str | Callable[[], str]

    @property
    def message(self) -> str:
        """Why the check failed, in words (rendered on first use)."""
        if not isinstance(self.detail, str):
            self.detail = self.detail()
        return self.detail

    @property
    def passed(self) -> bool:
        return self.failure is None


@dataclass(slots=True)
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


@dataclass(slots=True)
class Verdict:
    """The scorer's judgement of one attempt.

    Stage flags are ``None`` where the stage does not apply: values are not
    judged when the tool was wrong, so argument accuracy is measured only
    where selection passed.
    """

    case_id: str
    kind: Kind
    risk: Risk
    tags: tuple[str, ...]
    passed: bool
    failure: FailureClass | None
    checks: list[Check]
    decision_ok: bool
    selection_ok: bool | None
    structure_ok: bool | None
    values_ok: bool | None
    contract_ok: bool
    reply_ok: bool | None
    expected_tools: tuple[str, ...]
    actual_tools: tuple[str, ...]
    pairs: list[tuple[str, str]] = field(default_factory=list)
    calls_checked: int = 0
    calls_schema_valid: int = 0
    forbidden_called: tuple[str, ...] = ()
    unsafe_calls: int = 0
    """Calls to a confirmation-guarded or destructive tool that the contract did not ask for."""
    target: str | None = None
    attempt: int = 0
    multistep: MultiStep | None = None
    """Trajectory, end state and behaviour figures of a multi-step case (None for one turn)."""
    render_diff: Callable[[], str] | None = field(default=None, repr=False, compare=False)

    @property
    def diff(self) -> str:
        """Expected against actual, for a failed case; rendered only when asked for."""
        return self.render_diff() if self.render_diff is not None else ""

    @property
    def failures(self) -> list[FailureClass]:
        return [c.failure for c in self.checks if c.failure is not None]
