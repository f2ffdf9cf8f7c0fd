from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from toolproof.types._message import Message
from toolproof.types._response import Response

RECORD_FORMAT = "toolproof.record/1"


class Outcome(StrEnum):
    """How an attempt ended. Only ``ok`` is scored as model behaviour."""

    ok = "ok"
    rate_limited = "rate_limited"
    server_error = "server_error"
    timeout = "timeout"
    network = "network"
    rejected = "rejected"
    harness_error = "harness_error"

    @property
    def is_infrastructure(self) -> bool:
        return self not in (Outcome.ok, Outcome.harness_error)


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


class Record(BaseModel):
    """One attempt at one case: a line of a records file.

    ``response`` is the model's final answer. For multi-step cases,
    ``transcript`` holds every turn that led to it. ``request`` is the exact
    payload sent to the provider (never with credentials).
    """

    model_config = ConfigDict(extra="forbid")

    format: Literal["toolproof.record/1"] = "toolproof.record/1"
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
        default=None, description="Multi-step: the environment's state when the attempt ended."
    )
    stopped_by: Literal["steps", "tokens", "seconds"] | None = Field(
        default=None,
        description="Multi-step: the per-attempt budget that ended the attempt before the "
        "model stopped calling tools (max_steps, attempt_tokens, attempt_seconds).",
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
