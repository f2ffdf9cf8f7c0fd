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
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from toolproof.errors import ProviderError
from toolproof.types import Message, Outcome, Response, Tool


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
    """Generation and transport settings for one model. Unknown keys are refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float | None = Field(default=None, ge=0, le=2)
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
    rpm: float | None = Field(default=None, gt=0, description="Requests per minute, client side.")
    tpm: float | None = Field(default=None, gt=0, description="Tokens per minute, client side.")
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=6, ge=0, le=50)
    extra_body: dict[str, Any] | None = Field(
        default=None, description="Extra request fields, merged into the payload as written."
    )


class ProviderRequest(BaseModel):
    """What the runner asks a provider for: one turn of one case."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    messages: list[Message]
    tools: list[Tool]
    settings: ModelSettings = Field(default_factory=ModelSettings)


@dataclass(slots=True)
class Exchange:
    """One round trip: the payload sent (never with credentials) and the normalised answer."""

    request: Any
    response: Response


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

    @abstractmethod
    async def generate(self, request: ProviderRequest) -> Exchange:
        """Send one request. Raise TransportError for infrastructure failures."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""

    def model_version(self) -> str | None:
        """A version or snapshot the provider reported, when known."""
        return None
