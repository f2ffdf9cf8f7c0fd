from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from toolproof.types._message import Message
from toolproof.types._tool import Risk


class Kind(StrEnum):
    """What the model is expected to do."""

    call = "call"
    text = "text"
    clarify = "clarify"
    confirm = "confirm"
    refuse = "refuse"


class Order(StrEnum):
    """How the actual calls must line up with the expected ones.

    strict     the same calls, in the same order.
    unordered  the same calls, in any order.
    subset     every actual call is expected; some expected calls may be missing.
    superset   every expected call is made; other calls may be added.
    """

    strict = "strict"
    unordered = "unordered"
    subset = "subset"
    superset = "superset"


class CallSpec(BaseModel):
    """One expected call: the tool (or a set of acceptable tools) and its arguments."""

    model_config = ConfigDict(extra="forbid")

    tool: str | list[str] = Field(description="Tool name, or a list of acceptable tool names.")
    args: dict[str, Any] = Field(
        default_factory=dict,
        description="Expected arguments. A plain value matches exactly (or by the tool's "
        "default matcher); a one-key mapping such as {normalized: Novák} picks a matcher.",
    )
    extra_args: bool | None = Field(
        default=None, description="Allow arguments not listed in args (default from the suite)."
    )

    @property
    def tools(self) -> tuple[str, ...]:
        return (self.tool,) if isinstance(self.tool, str) else tuple(self.tool)


class CountSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min: int | None = Field(default=None, ge=0)
    max: int | None = Field(default=None, ge=0)


class Expect(BaseModel):
    """The contract a case states."""

    model_config = ConfigDict(extra="forbid")

    kind: Kind | None = Field(
        default=None,
        description="call, text, clarify, confirm or refuse. Default: call when "
        "calls are given, text otherwise.",
    )
    call: str | list[str] | None = Field(default=None, description="Shorthand for one call.")
    args: dict[str, Any] | None = Field(
        default=None, description="Arguments of the shorthand call."
    )
    extra_args: bool | None = None
    calls: list[CallSpec] | None = None
    alternatives: list[list[CallSpec]] | None = Field(
        default=None, description="Several acceptable call sets; any one passing is enough."
    )
    forbidden: list[str] = Field(default_factory=list, description="Tools that must not be called.")
    count: int | CountSpec | None = Field(
        default=None, description="Exact number of calls, or {min, max}."
    )
    order: Order | None = None
    text: Any = Field(
        default=None,
        description="Optional matcher for the reply text, e.g. {contains: order number}.",
    )

    @model_validator(mode="after")
    def _one_way_of_saying_calls(self) -> Expect:
        ways = [self.call is not None, self.calls is not None, self.alternatives is not None]
        if sum(ways) > 1:
            raise ValueError("give only one of 'call', 'calls' and 'alternatives'")
        if self.args is not None and self.call is None:
            raise ValueError("'args' goes with 'call'; with 'calls', put args in each call")
        if self.extra_args is not None and self.call is None:
            raise ValueError("'extra_args' goes with 'call'; with 'calls', set it on each call")
        if self.kind not in (None, Kind.call) and any(ways):
            raise ValueError(f"kind '{self.kind}' expects no call, but calls are given")
        if self.kind is Kind.call and not any(ways) and self.count is None:
            raise ValueError("kind 'call' needs 'call', 'calls', 'alternatives' or 'count'")
        return self

    @property
    def resolved_kind(self) -> Kind:
        if self.kind is not None:
            return self.kind
        if self.call is not None or self.calls or self.alternatives:
            return Kind.call
        if isinstance(self.count, int) and self.count > 0:
            return Kind.call
        if isinstance(self.count, CountSpec) and (self.count.min or 0) > 0:
            return Kind.call
        return Kind.text

    def call_sets(self) -> list[list[CallSpec]]:
        """Every acceptable set of calls (one for a plain case)."""
        if self.alternatives is not None:
            return self.alternatives
        if self.calls is not None:
            return [self.calls]
        if self.call is not None:
            return [[CallSpec(tool=self.call, args=self.args or {}, extra_args=self.extra_args)]]
        return [[]]


class Case(BaseModel):
    """One test case: an input and the contract its answer must meet."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, pattern=r"^[^\s]+$")
    prompt: str | None = None
    messages: list[Message] | None = None
    system: str | None = Field(default=None, description="Overrides the suite's system prompt.")
    tools: list[str] | None = Field(
        default=None, description="Names of the tools offered in this case (default: all)."
    )
    expect: Expect
    reason: str | None = Field(default=None, description="Why this is the expected behaviour.")
    tags: list[str] = Field(default_factory=list)
    risk: Risk | None = Field(
        default=None, description="Default: the highest risk among the tools the case names."
    )
    max_steps: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _one_input(self) -> Case:
        if (self.prompt is None) == (self.messages is None):
            raise ValueError("give exactly one of 'prompt' and 'messages'")
        return self

    def conversation(self, system: str | None) -> list[Message]:
        """The messages sent to the model, with the system prompt first."""
        sys_text = self.system if self.system is not None else system
        if self.messages is not None:
            if not sys_text or any(m.role == "system" for m in self.messages):
                return list(self.messages)
            return [Message(role="system", content=sys_text), *self.messages]
        out: list[Message] = []
        if sys_text:
            out.append(Message(role="system", content=sys_text))
        out.append(Message(role="user", content=self.prompt))
        return out


TrajectoryMode = Literal["strict", "unordered", "subset", "superset"]
