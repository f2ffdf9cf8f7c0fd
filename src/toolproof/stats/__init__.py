"""Statistics: aggregation by slice, rates with intervals."""

from toolproof.stats._rates import Rate, rate
from toolproof.stats._summary import (
    Confusion,
    Decision,
    FailureItem,
    SliceStats,
    Summary,
    summarize,
)

__all__ = [
    "Confusion",
    "Decision",
    "FailureItem",
    "Rate",
    "SliceStats",
    "Summary",
    "rate",
    "summarize",
]
