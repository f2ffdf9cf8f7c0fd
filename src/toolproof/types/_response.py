from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from toolproof.types._message import ToolCall


class Usage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input_tokens: int | None = None
    output_tokens: int | None = None


class Response(BaseModel):
    """A model's answer to one request, normalised, with the raw payload kept."""

    model_config = ConfigDict(extra="forbid")

    text: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    refusal: str | None = None
    stop_reason: str | None = None
    usage: Usage | None = None
    latency_ms: float | None = None
    model: str | None = Field(
        default=None, description="Model ID or snapshot the provider reported."
    )
    raw: Any = Field(default=None, description="The provider's response payload, unmodified.")
