"""One target's adaptive schedule, round by round.

Round ``r`` is attempt number ``r`` of the cases that run it. Rounds below
``min_repeats`` run every case. After that:

* while a threshold of the gate is undecided (:func:`decide_bounds` over the
  full rounds, at the plan's confidence), every case runs every round, so that
  the rates the gate reads stay over full rounds; unless every case repeats
  itself (further rounds would be copies), which ends the target;
* once every threshold is decided, with ``until_decided`` the target stops;
  without it, a case runs the next round while it is
  :attr:`~toolproof.adaptive.CaseState.open` (:func:`case_state`): pass^k,
  pass@k and its class still depend on it.

The gate reads its rates over the *full rounds*: the attempt numbers every
case ran (at least ``min_repeats``). Counting the later attempts in a rate
would weight the cases that kept running (those that never failed, or never
passed) more than the fixed plan does. What is said of a case (pass^k, pass@k,
flaky or steady, failed cases) and the counts (unsafe calls, critical
findings) read every attempt.

:func:`next_round` reads only the attempts of the rounds before the one it
plans, so replaying it over a run's records (a resume, a cached re-run, a
shard) gives the rounds an unbroken run would have had.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from toolproof.adaptive._cases import CaseState, Seen, case_state
from toolproof.adaptive._sequential import Bound, BoundDecision, all_decided, decide_bounds


@dataclass(frozen=True, slots=True)
class Plan:
    """How an adaptive schedule runs (``--repeats auto``)."""

    max_repeats: int = 5
    min_repeats: int = 2
    until_decided: bool = False
    confidence: float = 0.95

    def __post_init__(self) -> None:
        if not 1 <= self.min_repeats <= self.max_repeats:
            raise ValueError(
                f"need 1 <= min repeats <= max repeats, got {self.min_repeats} and "
                f"{self.max_repeats}"
            )
        if not 0.5 <= self.confidence < 1:
            raise ValueError(f"confidence must be in [0.5, 1), got {self.confidence}")


@dataclass(frozen=True, slots=True)
class RoundPlan:
    """What to run in round ``round`` (attempt number), or why the target is done."""

    round: int
    cases: tuple[str, ...]
    full_rounds: int
    """The rounds every case ran so far: what the gate reads."""
    stopped: Mapping[str, CaseState] = field(default_factory=dict)
    """Cases that stopped before this round, with why."""
    decisions: tuple[BoundDecision, ...] = ()
    """With ``until_decided``: the thresholds at this look."""
    ended: str | None = None
    """When ``cases`` is empty: planned (every round ran), decided (every threshold
    decided), settled (no case open)."""


def next_round(
    history: Mapping[str, Sequence[Seen]],
    done: int,
    plan: Plan,
    *,
    bounds: Sequence[Bound] = (),
    repeatable: bool = False,
) -> RoundPlan:
    """The plan for round ``done`` (rounds ``0 .. done-1`` ran), from their attempts alone.

    ``history``: every case of the target (in run order) with its attempts in
    attempt order; attempts of round ``done`` or later are ignored.
    ``repeatable``: the target samples at temperature 0 with a fixed seed.
    """
    seen = {case: list(attempts[:done]) for case, attempts in history.items()}
    cases = tuple(seen)
    full = min((len(a) for a in seen.values()), default=0)
    states = {
        case: case_state(a, plan.max_repeats, plan.min_repeats, repeatable)
        for case, a in seen.items()
    }
    stopped = {case: s for case, s in states.items() if len(seen[case]) < done}
    if done < plan.min_repeats:
        return RoundPlan(done, cases, full, stopped)
    decisions = tuple(decide_bounds(bounds, seen, full, confidence=plan.confidence))
    if done >= plan.max_repeats:
        return RoundPlan(done, (), full, _finished(states), decisions, ended="planned")
    decided = all_decided(decisions)
    if decided and plan.until_decided:
        return RoundPlan(done, (), full, _finished(states), decisions, ended="decided")
    if not decided and full == done:
        if all(s is CaseState.repeats for s in states.values()):
            # every case repeats itself: further rounds would be copies of these
            return RoundPlan(done, (), full, _finished(states), decisions, ended="settled")
        # a threshold is undecided: every case runs on, so the rates stay over full rounds
        return RoundPlan(done, cases, full, stopped, decisions)
    running = tuple(c for c in cases if len(seen[c]) == done and states[c] is CaseState.open)
    if not running:
        return RoundPlan(done, (), full, _finished(states), decisions, ended="settled")
    return RoundPlan(done, running, full, stopped, decisions)


def _finished(states: Mapping[str, CaseState]) -> dict[str, CaseState]:
    return dict(states)


def replay(
    history: Mapping[str, Sequence[Seen]],
    plan: Plan,
    *,
    bounds: Sequence[Bound] = (),
    repeatable: bool = False,
) -> list[RoundPlan]:
    """Every round's plan over finished attempts, up to the one that ends the target
    (or the first round whose attempts ``history`` lacks)."""
    out = []
    done = 0
    while True:
        step = next_round(history, done, plan, bounds=bounds, repeatable=repeatable)
        out.append(step)
        if not step.cases or any(len(history[c]) <= done for c in step.cases):
            return out
        done += 1
