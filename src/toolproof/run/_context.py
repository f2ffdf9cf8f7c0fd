"""Which attempt is being run: for a user's agent code that does not see the request.

The runner sets :data:`ATTEMPT` around every call to ``Provider.generate``. No
provider reads it: the attempt's identity (``case_id``, ``attempt``) travels in
the ``ProviderRequest``. It is public for the code of a user's agent (a
``--target`` callable) that runs deeper than the request reaches, such as its own
tool wrappers or logging, which ask :func:`current_attempt`.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class AttemptInfo:
    """The case and attempt a request belongs to."""

    case_id: str
    attempt: int = 0
    target: str | None = None


ATTEMPT: ContextVar[AttemptInfo | None] = ContextVar("toolproof_attempt", default=None)


def current_attempt() -> AttemptInfo | None:
    """The attempt being run, or ``None`` outside the runner."""
    return ATTEMPT.get()
