"""What a stub server answers: canned replies and injected faults, in script order."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Call", "Delay", "RateLimit", "RawReply", "Reply", "ServerError", "Step", "Truncated"]


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call in a canned reply.

    ``arguments`` given as a string is sent as the argument text itself, even
    when it is not JSON (the OpenAI formats carry text). Anything else is a
    JSON value. Anthropic and Gemini carry arguments as objects, so there a
    string that parses is sent parsed, and one that does not is sent as a
    bare string, which the real APIs never do.
    """

    name: str
    arguments: Any = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    """A model answer, rendered in the wire format of the endpoint that was called."""

    text: str | None = None
    calls: tuple[Call, ...] = ()
    refusal: str | None = None
    stop_reason: str | None = None
    input_tokens: int = 12
    output_tokens: int = 7

    @classmethod
    def say(cls, text: str) -> Reply:
        return cls(text=text)

    @classmethod
    def call(cls, name: str, arguments: Any = None, *, id: str | None = None) -> Reply:
        return cls(calls=(Call(name, {} if arguments is None else arguments, id),))

    @classmethod
    def refuse(cls, text: str = "I can't help with that.") -> Reply:
        return cls(refusal=text)


@dataclass(frozen=True, slots=True)
class RawReply:
    """An exact body (a JSON value, or bytes sent as they are) with a status and headers."""

    body: Any
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RateLimit:
    """HTTP 429 with ``Retry-After`` (and ``retry-after-ms`` when given)."""

    retry_after: str | None = "2"
    retry_after_ms: str | None = None


@dataclass(frozen=True, slots=True)
class ServerError:
    """An HTTP error status (500 by default; 529 is Anthropic's "overloaded")."""

    status: int = 500
    body: str = '{"error": {"message": "stub server error", "type": "server_error"}}'


@dataclass(frozen=True, slots=True)
class Delay:
    """Wait, then answer with ``then``: long enough, and the client times out."""

    seconds: float
    then: Reply | RawReply = field(default_factory=lambda: Reply(text="late"))


@dataclass(frozen=True, slots=True)
class Truncated:
    """Promise the whole body in ``Content-Length``, send part of it, and drop the connection."""

    reply: Reply = field(default_factory=lambda: Reply(text="this body is cut short"))
    keep: float = 0.5


Step = Reply | RawReply | RateLimit | ServerError | Delay | Truncated
