"""The expression context: what resolving an expectation needs from its suite."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, tzinfo

from toolproof.match._dates import zone
from toolproof.match._judged import Decisions
from toolproof.match._semantic import Embeddings
from toolproof.types import Suite

__all__ = ["Context", "context"]


@dataclass(frozen=True)
class Context:
    """The suite's fixed 'now' and time zone, against which relative dates resolve.

    ``embeddings`` is the table the ``semantic`` matcher reads its vectors from;
    None where text is never compared by meaning (mock rules, answered during a run).

    ``decisions`` is the table a judge-decided ``semantic`` matcher reads the
    judge's answers from, and ``argument`` the (tool, parameter) being compiled:
    both None where no judge can decide (a reply, a mock rule).
    """

    now: datetime | None
    tz: tzinfo
    embeddings: Embeddings | None = None
    decisions: Decisions | None = None
    argument: tuple[str, str] | None = None
    profile: str = "strict"
    """The matcher profile expected arguments are read in (``defaults.matching``)."""


def context(suite: Suite) -> Context:
    """The context of a suite. Raises ValueError for an unknown time zone."""
    return Context(now=suite.now, tz=zone(suite.timezone), profile=suite.defaults.matching)
