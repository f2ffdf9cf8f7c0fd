"""The expression context: what resolving an expectation needs from its suite."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, tzinfo

from toolproof.match._dates import zone
from toolproof.match._semantic import Embeddings
from toolproof.types import Suite

__all__ = ["Context", "context"]


@dataclass(frozen=True)
class Context:
    """The suite's fixed 'now' and time zone, against which relative dates resolve.

    ``embeddings`` is the table the ``semantic`` matcher reads its vectors from;
    None where text is never compared by meaning (mock rules, answered during a run).
    """

    now: datetime | None
    tz: tzinfo
    embeddings: Embeddings | None = None


def context(suite: Suite) -> Context:
    """The context of a suite. Raises ValueError for an unknown time zone."""
    return Context(now=suite.now, tz=zone(suite.timezone))
