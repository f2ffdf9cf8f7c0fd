"""Statistics: aggregation by slice, rates with intervals, stability over repeats."""

from toolproof.stats._conversation import ConversationStats, agent_questions
from toolproof.stats._metrics import METRICS, RATE_METRICS, RATE_NAMES, Metric, metric_rate
from toolproof.stats._rates import Rate, rate
from toolproof.stats._repair import Repaired, repaired_figures
from toolproof.stats._repeats import (
    CaseStability,
    Costs,
    Estimate,
    Stability,
    mean_estimate,
    pass_at_k,
    pass_hat_k,
    stability,
)
from toolproof.stats._summary import (
    Confusion,
    Decision,
    FailureItem,
    FailureSink,
    MultiStepSlice,
    MultiStepStats,
    SliceStats,
    Summary,
    SummaryBuilder,
    summarize,
)

__all__ = [
    "METRICS",
    "RATE_METRICS",
    "RATE_NAMES",
    "CaseStability",
    "Confusion",
    "ConversationStats",
    "Costs",
    "Decision",
    "Estimate",
    "FailureItem",
    "FailureSink",
    "Metric",
    "MultiStepSlice",
    "MultiStepStats",
    "Rate",
    "Repaired",
    "SliceStats",
    "Stability",
    "Summary",
    "SummaryBuilder",
    "agent_questions",
    "mean_estimate",
    "metric_rate",
    "pass_at_k",
    "pass_hat_k",
    "rate",
    "repaired_figures",
    "stability",
    "summarize",
]
