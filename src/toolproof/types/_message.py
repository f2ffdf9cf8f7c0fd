from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["system", "user", "assistant", "tool"]


class ToolCall(BaseModel):
    """One call the model proposed.

    ``raw_arguments`` is the argument text exactly as the model produced it.
    ``arguments`` is its parsed value (any JSON value, not only an object), or
    ``None`` with ``parse_error`` set when the text is not JSON. A malformed
    call is kept as data; it is never raised.
    """

    model_config = ConfigDict(extra="forbid")

    id: str | None = None
    name: str
    raw_arguments: str | None = None
    arguments: Any = None
    parse_error: str | None = None
    extracted_from_text: bool = Field(
        default=False,
        description="The call was printed in the text and recovered by the adapter.",
    )


class Message(BaseModel):
    """One turn of a conversation."""

    model_config = ConfigDict(extra="forbid")

    role: Role
    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = Field(
        default=None, description="For role 'tool': the call answered."
    )
    name: str | None = Field(default=None, description="For role 'tool': the tool that answered.")
    is_error: bool = Field(default=False, description="For role 'tool': the tool failed.")


Conversation = list[Message]
