"""Which attempt is being run: visible to providers that answer per case.

The runner sets :data:`ATTEMPT` around every call to ``Provider.generate``.
Fake providers (scripted, replay) and user agents read it with
:func:`current_attempt` to know the case id and attempt number, which the
canonical request deliberately does not carry.
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
