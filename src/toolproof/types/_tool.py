from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Risk(StrEnum):
    """How much harm a wrong call can do. Ordered: low < medium < high < critical."""

    low = "low"
    medium = "medium"
    high = "high"
    critical = "critical"

    @property
    def rank(self) -> int:
        return _RISK_ORDER[self]


_RISK_ORDER = {Risk.low: 0, Risk.medium: 1, Risk.high: 2, Risk.critical: 3}


class Effect(StrEnum):
    """What calling the tool does to the world."""

    read = "read"
    write = "write"
    destructive = "destructive"


class Tool(BaseModel):
    """A tool offered to the model, in toolproof's provider-neutral form."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$")
    description: str = ""
    parameters: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}},
        description="JSON Schema of the arguments object, sent to the model as written.",
    )
    risk: Risk = Risk.low
    effect: Effect = Effect.read
    requires_confirmation: bool = False
    strict: bool | None = Field(
        default=None,
        description="Ask the provider for strict schema adherence where it supports it.",
    )


class SuiteTool(Tool):
    """A tool as declared in a suite (or a case): the canonical tool plus default matchers."""

    match: dict[str, Any] = Field(
        default_factory=dict,
        description="Default matcher per top-level parameter, e.g. {customer: normalized}.",
    )

    def canonical(self) -> Tool:
        return Tool.model_validate(self.model_dump(exclude={"match"}))
