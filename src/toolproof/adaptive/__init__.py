"""Adaptive repeats: when more attempts of a case, or of a whole target, can change nothing.

Pure functions, no I/O: the runner asks them which cases to run in the next
round, the evaluation asks them for the pass^k / pass@k of cases with
different numbers of attempts, the gate asks them how sure each decision is,
and ``bench/adaptive.py`` simulates suites through the very same functions.

* :func:`case_state` — the per-case rule of ``--repeats auto``;
* :func:`next_round` — the schedule of one target, round by round (replayable:
  the same outcomes give the same rounds, so a resumed run decides alike);
* :func:`decide_bounds` — ``--until-decided``: every gate threshold checked
  with an always-valid confidence sequence over the full rounds;
* :func:`anytime_p_value`, :func:`decide_bound` — the sequential test;
* :func:`pass_hat_k_adaptive`, :func:`pass_at_k_adaptive` — the estimators.

See docs/adaptive-repeats.md for the rules and the references.
"""

from toolproof.adaptive._cases import (
    CaseState,
    Seen,
    case_state,
    pass_at_k_adaptive,
    pass_hat_k_adaptive,
)
from toolproof.adaptive._schedule import Plan, RoundPlan, next_round, replay
from toolproof.adaptive._sequential import (
    Bound,
    BoundDecision,
    all_decided,
    anytime_p_value,
    decide_bound,
    decide_bounds,
    round_counts,
)

__all__ = [
    "Bound",
    "BoundDecision",
    "CaseState",
    "Plan",
    "RoundPlan",
    "Seen",
    "all_decided",
    "anytime_p_value",
    "case_state",
    "decide_bound",
    "decide_bounds",
    "next_round",
    "pass_at_k_adaptive",
    "pass_hat_k_adaptive",
    "replay",
    "round_counts",
]
