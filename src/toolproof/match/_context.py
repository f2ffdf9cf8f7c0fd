"""The expression context: what resolving an expectation needs from its suite."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, tzinfo

from toolproof.match._dates import zone
from toolproof.types import Suite

__all__ = ["Context", "context"]


@dataclass(frozen=True)
class Context:
    """The suite's fixed 'now' and time zone, against which relative dates resolve."""

    now: datetime | None
    tz: tzinfo


def context(suite: Suite) -> Context:
    """The context of a suite. Raises ValueError for an unknown time zone."""
    return Context(now=suite.now, tz=zone(suite.timezone))
