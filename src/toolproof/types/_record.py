from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from toolproof.types._message import Message
from toolproof.types._response import Response, Usage

RECORD_FORMAT = "toolproof.record/3"
#: Every records format this toolproof reads. ``/1`` stores a multi-step attempt's whole
#: end state (``end_state``); ``/2`` stores its changes (``state_changes``), and may store
#: each step's request after the first as a delta (``request_delta``); ``/3`` also stores
#: each simulated-user request after a conversation's first as a delta.
RECORD_FORMATS = ("toolproof.record/1", "toolproof.record/2", RECORD_FORMAT)

StatePath = list[StrictStr | StrictInt]
#: One change of the environment's state: ``["set", path, value]`` or ``["remove", path]``;
#: a path lists mapping keys (text) and list indices (numbers) from the state's top.
StateChange = Annotated[
    tuple[Literal["set"], StatePath, Any] | tuple[Literal["remove"], StatePath],
    Field(union_mode="left_to_right"),
]


class Outcome(StrEnum):
    """How an attempt ended. Only ``ok`` is scored as model behaviour."""

    ok = "ok"
    rate_limited = "rate_limited"
    server_error = "server_error"
    timeout = "timeout"
    network = "network"
    rejected = "rejected"
    harness_error = "harness_error"
    #: A conversation whose simulated user erred (said what it must not know, invented a
    #: value, broke the one-message rule, stopped before the agent acted, or answered
    #: nothing): counted apart like an infrastructure failure, never scored.
    user_error = "user_error"

    @property
    def is_infrastructure(self) -> bool:
        return self not in (Outcome.ok, Outcome.harness_error)


#: Why a multi-step attempt or conversation ended, when not by the agent answering in
#: text: a budget (``steps``, ``tokens``, ``seconds``), or, in a conversation, the
#: simulated user (its stop tokens ``###STOP###`` → ``user_stop``, ``###TRANSFER###`` →
#: ``transfer``, ``###OUT-OF-SCOPE###`` → ``out_of_scope``), the ``max_turns`` limit, a
#: script with nothing left to say (``script_end``), or a simulator that failed
#: (``user_error``: an empty or endless reply).
StopReason = Literal[
    "steps",
    "tokens",
    "seconds",
    "user_stop",
    "transfer",
    "out_of_scope",
    "max_turns",
    "script_end",
    "user_error",
]


class UserToolCall(BaseModel):
    """A call the simulated user made to one of its own tools, on the attempt's state."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    args: Any = None
    result: str = Field(description="What the tool answered (the text the user read).")
    is_error: bool = False


class UserTurn(BaseModel):
    """One message of a conversation's simulated user, apart from the agent's steps."""

    model_config = ConfigDict(extra="forbid")

    text: str | None = Field(
        default=None, description="What the user said (the stop token taken out); None: nothing."
    )
    stop: StopReason | None = Field(
        default=None, description="The turn ended the conversation, and why."
    )
    source: Literal["script", "model", "replay"] = "model"
    at: int | None = Field(
        default=None,
        description="How many messages of the transcript came before this turn (where it "
        "goes in the conversation).",
    )
    request: Any = Field(
        default=None, description="An LLM user: the exact payload sent to the user model."
    )
    request_delta: Any = Field(
        default=None,
        description="Records format /3: the request stored as what it adds to the user "
        "model's request before it (append, set, keys); a reader rebuilds ``request``.",
    )
    response: Any = Field(
        default=None, description="An LLM user: its normalised response, raw payload kept."
    )
    cached: bool = False
    calls: list[UserToolCall] | None = Field(
        default=None,
        description="The user's own tool calls in this turn, in order, before its message.",
    )
    offered: list[str] | None = Field(
        default=None,
        description="Tools held back from the agent that this turn offered it (a scripted "
        "user's 'offer'): every agent request from this turn on offers them.",
    )
    exchanges: list[Any] | None = Field(
        default=None,
        description="An LLM user that called tools: each earlier exchange of this turn "
        "({request, response}) that asked for a call, or that was asked again "
        "(``nudged``); request/response are the last.",
    )
    nudged: str | None = Field(
        default=None,
        description="An LLM user asked once more in this turn, and why: its first reply "
        "broke the one-message rule (it repeated the agent, or wrote a label line). That "
        "reply is kept in exchanges; the simulator checks read the kept text.",
    )


class AttemptError(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: str
    message: str
    status: int | None = None
    body: str | None = None


class McpToolRun(BaseModel):
    """One tool call that really ran on a multi-step attempt's MCP server."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    arguments: Any = None
    purpose: Literal["call", "state"] = Field(
        default="call",
        description="'call': the model's call; 'state': the end-state call made after the attempt.",
    )
    result: dict[str, Any] | None = Field(
        default=None, description="The server's CallToolResult, as it sent it."
    )
    is_error: bool = Field(default=False, description="The server said the tool failed.")
    error: str | None = Field(
        default=None, description="No result: a protocol error or the timeout."
    )
    timed_out: bool = False
    duration_ms: float = 0.0


class SetupCall(BaseModel):
    """A tool call run on the state before the conversation: a case's ``setup`` or ``history``."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field(description="Where it came from: 'setup[I]' or 'history[I]'.")
    tool: str
    args: Any = None
    result: str = Field(description="What the environment returned.")
    is_error: bool = False
    recorded: str | None = Field(
        default=None,
        description="history: the result the history gives, when it differs from the "
        "environment's (the model reads the history's; the state is the environment's).",
    )


class Setup(BaseModel):
    """How a case's starting state was prepared before the agent's first turn."""

    model_config = ConfigDict(extra="forbid")

    calls: list[SetupCall] = Field(default_factory=list)
    changes: list[StateChange] = Field(
        default_factory=list,
        description="What the calls changed in the case's starting state: applied to it, "
        "they give the state the agent began from.",
    )


class Record(BaseModel):
    """One attempt at one case: a line of a records file.

    ``response`` is the model's final answer. For multi-step cases,
    ``transcript`` holds every turn that led to it. ``request`` is the exact
    payload sent to the provider (never with credentials).
    """

    model_config = ConfigDict(extra="forbid")

    format: Literal["toolproof.record/1", "toolproof.record/2", "toolproof.record/3"] = (
        "toolproof.record/3"
    )
    case_id: str
    target: str | None = None
    attempt: int = Field(default=0, ge=0)
    run_id: str | None = None
    outcome: Outcome = Outcome.ok
    response: Response | None = None
    transcript: list[Message] | None = None
    request: Any = None
    error: AttemptError | None = None
    started_at: datetime | None = None
    latency_ms: float | None = None
    cost_usd: float | None = None
    cached: bool = Field(
        default=False,
        description="The answer (every step of it, for multi-step) came from the response cache.",
    )
    key: str | None = Field(default=None, description="Fingerprint of request, model and settings.")
    steps: list[Any] | None = Field(
        default=None,
        description="Multi-step: the raw request and normalised response of every model call.",
    )
    end_state: Any = Field(
        default=None,
        description="Multi-step, records format /1 (read, no longer written): the "
        "environment's whole state when the attempt ended.",
    )
    state_changes: list[StateChange] | None = Field(
        default=None,
        description="Multi-step: what the attempt changed in the environment's initial state, "
        "in order; the initial state and these give the end state (toolproof.grade.apply_changes).",
    )
    state_base: str | None = Field(
        default=None,
        description="Multi-step: the initial state the changes apply to (sha256: and the hash "
        "of the state file).",
    )
    setup: Setup | None = Field(
        default=None,
        description="Multi-step: the case's setup and history calls run on the state before "
        "the first turn (the state changes include theirs).",
    )
    stopped_by: StopReason | None = Field(
        default=None,
        description="Multi-step: the per-attempt budget that ended the attempt before the "
        "model stopped calling tools (max_steps, attempt_tokens, attempt_seconds); in a "
        "conversation, what ended it (a budget, checked before each agent step and each "
        "user turn, the user's tokens counted; the user's stop token, max_turns, the "
        "script's end, a failed simulator).",
    )
    user_turns: list[UserTurn] | None = Field(
        default=None,
        description="A conversation: every message of the simulated user, in order, with "
        "the simulator's raw request and response (an LLM user), apart from the agent's steps.",
    )
    user_model: str | None = Field(
        default=None, description="A conversation with an LLM user: the user model's spec."
    )
    user_usage: Usage | None = Field(
        default=None, description="The simulated user's tokens, apart from the agent's."
    )
    user_cost_usd: float | None = Field(
        default=None, description="The simulated user's cost, apart from the agent's."
    )
    user_problems: list[str] | None = Field(
        default=None,
        description="What the simulator checks found wrong with the simulated user "
        "(the outcome is then user_error).",
    )
    mcp_calls: list[McpToolRun] | None = Field(
        default=None,
        description="Multi-step on an MCP environment: every call that ran on the server, "
        "with its raw result and duration (calls a mock answered are not here).",
    )
    mcp_log: str | None = Field(
        default=None, description="Multi-step on an MCP environment: the server's stderr (tail)."
    )
    retries: list[str] | None = Field(
        default=None,
        description="Why each retry of this attempt's requests was made, in order "
        "(e.g. 'timeout: no answer within 300 s').",
    )
