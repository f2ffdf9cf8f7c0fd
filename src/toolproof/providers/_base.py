"""The one small async interface every provider implements.

A provider turns a canonical :class:`ProviderRequest` into its own wire
format, sends it, and turns the answer back into a canonical
:class:`~toolproof.types.Response`, keeping the exact payloads it sent and
received. Transport problems are raised as :class:`TransportError`, already
classified into an infrastructure :class:`~toolproof.types.Outcome`; the
runner owns retries, so adapters never retry on their own.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from toolproof.errors import ProviderError
from toolproof.trust import pacing_problem
from toolproof.types import Message, Outcome, Record, Response, Tool


class ToolChoice(BaseModel):
    """auto, required, none, or one named tool. Written in YAML as a bare word or {tool: NAME}."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Literal["auto", "required", "none", "tool"] = "auto"
    tool: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_short_form(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"mode": value}
        if isinstance(value, dict) and set(value) == {"tool"}:
            return {"mode": "tool", "tool": value["tool"]}
        return value

    @model_validator(mode="after")
    def _tool_given(self) -> ToolChoice:
        if (self.mode == "tool") != (self.tool is not None):
            raise ValueError("a named tool choice needs 'tool', and only it")
        return self


#: Settings that change the answer; the rest (rates, retries, timeouts) do not.
GENERATION_FIELDS = frozenset(
    {
        "temperature",
        "seed",
        "max_tokens",
        "reasoning_effort",
        "tool_choice",
        "parallel_tool_calls",
        "base_url",
        "provider",
        "require_parameters",
        "extra_body",
    }
)


class ModelSettings(BaseModel):
    """Generation and transport settings for one model. Unknown keys are refused, and so
    is a number that is not finite (an endless timeout, a NaN temperature)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    temperature: float | None = Field(default=None, ge=0, le=2)
    seed: int | None = Field(
        default=None, description="Sampling seed, for providers that accept one."
    )
    max_tokens: int | None = Field(default=None, ge=1)
    reasoning_effort: Literal["none", "minimal", "low", "medium", "high"] | None = None
    tool_choice: ToolChoice = Field(default_factory=ToolChoice)
    parallel_tool_calls: bool | None = None
    base_url: str | None = Field(
        default=None, description="Endpoint of an OpenAI-compatible server."
    )
    api_key_env: str | None = Field(
        default=None, description="Name of the environment variable that holds the key."
    )
    provider: dict[str, Any] | None = Field(
        default=None, description="OpenRouter provider routing, sent as written."
    )
    require_parameters: bool | None = Field(
        default=None, description="OpenRouter: only route to providers that honour every parameter."
    )
    concurrency: int = Field(default=1, ge=1, le=1024)
    rpm: float | None = Field(
        default=None, description="Requests per minute, client side (at least 0.1)."
    )
    tpm: float | None = Field(
        default=None, description="Tokens per minute, client side (at least 1,000)."
    )
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(
        default=6, description="Retries of a failed request (at most 12: about 7 minutes)."
    )

    @field_validator("rpm", "tpm", "max_retries")
    @classmethod
    def _paced(cls, value: Any, info: ValidationInfo) -> Any:
        """Rates and retries within :data:`toolproof.trust.PACING_BOUNDS`: no endless wait."""
        problem = pacing_problem(str(info.field_name), value)
        if problem is not None:
            raise ValueError(problem)
        return value

    attempt_tokens: int | None = Field(
        default=None,
        ge=1,
        description="Budget of one multi-step attempt: tokens (input and output) of all its "
        "model calls. The attempt stops after the step that reaches it.",
    )
    attempt_seconds: float | None = Field(
        default=None,
        gt=0,
        description="Budget of one multi-step attempt: wall time. No new step starts after it.",
    )
    extra_body: dict[str, Any] | None = Field(
        default=None, description="Extra request fields, merged into the payload as written."
    )


def with_defaults(settings: ModelSettings, defaults: Mapping[str, Any]) -> ModelSettings:
    """``settings`` with ``defaults`` filled in where no layer set a value."""
    missing = {k: v for k, v in defaults.items() if k not in settings.model_fields_set}
    if not missing:
        return settings
    given = settings.model_dump(include=settings.model_fields_set)
    return ModelSettings.model_validate({**missing, **given})


class ProviderRequest(BaseModel):
    """What the runner asks a provider for: one turn of one case."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    messages: list[Message]
    tools: list[Tool]
    settings: ModelSettings = Field(default_factory=ModelSettings)
    #: The attempt this request belongs to. Never sent to a model and not part of the
    #: cache key; fake providers (scripted, replay) answer by it.
    case_id: str | None = None
    attempt: int = Field(default=0, ge=0)
    #: The agent loop's step within the attempt (model calls before this one), or a
    #: simulated user's turn; None: not in a loop (then read from the messages).
    step: int | None = None


@dataclass(frozen=True, slots=True)
class Allowance:
    """What a server said of one of its limits: ``limit`` in all, ``remaining`` now,
    and ``reset_s``, the seconds until it is fully replenished."""

    limit: float
    remaining: float
    reset_s: float

    @property
    def rate(self) -> float | None:
        """The refill rate this implies, per second, when the server has used some of it.

        For a token bucket this is its refill rate; for a rolling window it is at
        most the window's rate (the window is full again once its newest entry leaves).
        """
        used = self.limit - self.remaining
        if used <= 0 or self.reset_s <= 0:
            return None
        return used / self.reset_s


@dataclass(frozen=True, slots=True)
class RateLimits:
    """The rate-limit headers of one answer (``x-ratelimit-*``, ``anthropic-ratelimit-*``)."""

    requests: Allowance | None = None
    tokens: Allowance | None = None


@dataclass(slots=True)
class Exchange:
    """One round trip: the payload sent (never with credentials) and the normalised answer."""

    request: Any
    response: Response
    #: The server's rate-limit headers for this answer, when it sent any (not recorded).
    limits: RateLimits | None = None


class TransportError(ProviderError):
    """The request did not produce a model answer: classified, and maybe retryable."""

    def __init__(
        self,
        outcome: Outcome,
        message: str,
        *,
        status: int | None = None,
        body: str | None = None,
        headers: dict[str, str] | None = None,
        retry_after: float | None = None,
        request: Any = None,
    ) -> None:
        super().__init__(message, status=status, body=body, headers=headers)
        self.outcome = outcome
        self.retry_after = retry_after
        self.request = request

    @property
    def retryable(self) -> bool:
        return self.outcome in (
            Outcome.rate_limited,
            Outcome.server_error,
            Outcome.timeout,
            Outcome.network,
        )


class Provider(ABC):
    """A model behind one async method."""

    #: Registry name, e.g. ``openai`` in ``openai:gpt-4.1-mini``.
    name: str = ""
    #: Whether the runner may keep this provider's answers in the response cache.
    #: Providers that answer from files or user code (scripted, replay, agents) say no.
    cacheable: bool = True
    #: Settings this provider uses when no layer (suite, config, flags) sets them,
    #: e.g. a fixed seed for a local model. The runner applies them before the run
    #: starts, so the manifest and the report show what was used.
    default_settings: ClassVar[Mapping[str, Any]] = {}

    @abstractmethod
    async def generate(self, request: ProviderRequest) -> Exchange:
        """Send one request. Raise TransportError for infrastructure failures."""

    async def prepare(self, note: Callable[[str], None]) -> None:  # noqa: B027 - optional hook
        """Get ready before the first request (start a server, load a model).

        ``note`` shows a short status line to the person watching the run.
        """

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""

    def model_version(self) -> str | None:
        """A version or snapshot the provider reported, when known."""
        return None

    def recording(self, case_id: str, attempt: int) -> Record | None:
        """The earlier record this provider replays for an attempt, if it replays one.

        The runner answers a multi-step attempt's tool calls from the recorded
        transcript (and takes the recorded end state) when this is not ``None``.
        """
        return None
