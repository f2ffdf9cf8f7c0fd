"""Adaptive repeats, gate side: what the schedule needs of the gate, and what the gate says of it.

:func:`schedule_inputs` gives the runner (``--repeats auto``) a way to see each
attempt as it finishes (graded as the evaluation will grade it) and the gate's
thresholds, so that the runner only asks ``toolproof.adaptive`` what to run
next. :func:`schedule_report` gives, per target, the attempts made against
the fixed plan, those saved, the cases stopped early, and how sure each of
the gate's threshold decisions is (the anytime-valid p-value of the mixture
SPRT, see ``toolproof.adaptive._sequential``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from toolproof.adaptive import Bound, Seen, anytime_p_value
from toolproof.gate._measured import LABELS
from toolproof.gate._thresholds import ThresholdCheck, effective_thresholds
from toolproof.stats._metrics import RATE_METRICS, RATE_NAMES, metric_rate
from toolproof.trust import DEFAULT_TRUST, Trust
from toolproof.types import Outcome, Record, Suite, Verdict

if TYPE_CHECKING:
    from toolproof.evaluate import Evaluation, TargetEvaluation
    from toolproof.grade import CompiledCase, Scorer
    from toolproof.run import Manifest

__all__ = ["DecisionConfidence", "ScheduleReport", "schedule_inputs", "schedule_report"]

#: Rates over attempts (schema adherence counts calls: it is read over the full rounds,
#: not tested by the sequential test).
_ATTEMPT_RATES = tuple(n for n in RATE_NAMES if n != "schema_adherence")


def compiled_cases(suite: Suite, scorer: Scorer | None = None) -> Mapping[str, CompiledCase]:
    """The suite's cases as grading compiled them: the scorer's (which holds them
    already), or compiled here when there is none."""
    if scorer is None:
        from toolproof.grade import Scorer

        scorer = Scorer(suite, checks=())
    return scorer.cases


def threshold_bounds(suite: Suite, scorer: Scorer | None = None) -> list[Bound]:
    """The gate's rate thresholds as the schedule checks them, one per scope and metric
    (``scorer``: the one grading the attempts, whose compiled cases give their risks)."""
    risk = {case_id: c.risk.value for case_id, c in compiled_cases(suite, scorer).items()}
    out = []
    for scope, th in effective_thresholds(suite).items():
        cases = None
        if scope != "all":
            cases = frozenset(case_id for case_id, r in risk.items() if r == scope)
        for name in _ATTEMPT_RATES:
            required = getattr(th, name)
            if required is not None:
                key = f"{scope}: {name}"
                out.append(Bound(key=key, metric=name, required=required, cases=cases))
    return out


def seen_of(record: Record, verdict: Verdict | None) -> Seen:
    """An attempt as the schedule sees it: passed (None: no model answer), its answer's
    fingerprint, and the rate metrics it counts in."""
    if record.outcome is not Outcome.ok or verdict is None:
        return Seen(passed=None)
    response = record.response
    answer = None
    if response is not None:
        calls = [(c.name, c.raw_arguments) for c in response.tool_calls]
        blob = json.dumps([calls, response.text], ensure_ascii=False, default=str)
        answer = hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        if record.transcript is not None:  # a multi-step case: the whole conversation
            whole = json.dumps(record.transcript, ensure_ascii=False, default=str, sort_keys=True)
            answer += hashlib.sha256(whole.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    figures = {}
    for name in _ATTEMPT_RATES:
        applies, ok = RATE_METRICS[name]
        if applies(verdict):
            figures[name] = bool(ok(verdict))
    return Seen(passed=bool(verdict.passed), answer=answer, figures=figures)


def schedule_inputs(
    suite: Suite, trust: Trust = DEFAULT_TRUST
) -> tuple[Callable[[Record], Seen], Sequence[Bound]]:
    """What ``RunOptions.scheduler`` returns: how to see an attempt, and the thresholds."""
    from toolproof.evaluate import attempt_grader

    grade = attempt_grader(suite, trust)

    def observe(record: Record) -> Seen:
        verdict = grade(record) if record.outcome is Outcome.ok else None
        return seen_of(record, verdict)

    return observe, threshold_bounds(suite, grade.scorer)


class DecisionConfidence(BaseModel):
    """How sure one threshold decision of the gate is."""

    model_config = ConfigDict(extra="forbid")

    scope: str
    metric: str
    decision: Literal["pass", "fail"]
    confidence: float = Field(
        description="1 - the anytime-valid p-value of the mixture SPRT (toolproof.adaptive): "
        "valid however many rounds the schedule looked at."
    )

    @property
    def label(self) -> str:
        return LABELS.get(self.metric, self.metric)


class ScheduleReport(BaseModel):
    """One target's adaptive schedule, for the gate and the reports."""

    model_config = ConfigDict(extra="forbid")

    planned: int = Field(description="Attempts of the fixed plan: cases × max repeats.")
    attempts: int = Field(description="Attempts made.")
    saved: int
    stopped_early: int
    stopped: dict[str, int]
    full_rounds: int
    until_decided: bool
    ended: str | None
    decisions: list[DecisionConfidence]
    open_cases: int = Field(
        default=0,
        description="Cases stopped with pass^k or pass@k still open (by --until-decided): "
        "left out of those means.",
    )

    def line(self) -> str:
        """``34 of 100 attempts (66 saved, 66%); 12 cases stopped early (…)``."""
        share = f"{100 * self.saved / self.planned:.0f}%" if self.planned else "–"
        why = ", ".join(f"{k} {v}" for k, v in self.stopped.items())
        return (
            f"{self.attempts} of {self.planned} planned attempts ({self.saved} saved, {share}); "
            f"{self.stopped_early} cases stopped early"
            + (f" ({why})" if why else "")
            + f"; rates read over the {self.full_rounds} full rounds, counts and pass^k "
            "over every attempt"
            + (
                f"; {self.open_cases} cases stopped with pass^k or pass@k open, left out of "
                "those means"
                if self.open_cases
                else ""
            )
        )


def decision_confidences(
    suite: Suite, verdicts: Sequence[Verdict], checks: Sequence[ThresholdCheck]
) -> list[DecisionConfidence]:
    """The confidence of each rate threshold decision, over the verdicts the gate read."""
    out = []
    for c in checks:
        if c.metric not in _ATTEMPT_RATES:
            continue
        vs = verdicts if c.scope == "all" else [v for v in verdicts if v.risk.value == c.scope]
        r = metric_rate(c.metric, vs)
        p, _side = anytime_p_value(r.k, r.n, c.required)
        out.append(
            DecisionConfidence(
                scope=c.scope,
                metric=c.metric,
                decision="pass" if c.passed else "fail",
                confidence=1.0 - p,
            )
        )
    return out


def target_schedule(
    run: Evaluation, cur: TargetEvaluation, checks: Sequence[ThresholdCheck] | None = None
) -> ScheduleReport | None:
    """The schedule of one target of an adaptive run (None for fixed repeats), with how
    sure each threshold decision is; ``checks``: the threshold checks the gate made
    (default: the suite's thresholds, checked here)."""
    if checks is None:
        from toolproof.gate._thresholds import check_thresholds

        checks = check_thresholds(run.suite, cur.gated, cur.verdicts)
    st = cur.summary.stability
    open_cases = len(st.undecided) if st is not None else 0
    return schedule_report(run.manifest, cur.target, run.suite, cur.gated, checks, open_cases)


def schedule_report(
    manifest: Manifest | None,
    target: str,
    suite: Suite,
    verdicts: Sequence[Verdict],
    checks: Sequence[ThresholdCheck],
    open_cases: int = 0,
) -> ScheduleReport | None:
    """The schedule of an adaptive run's target; None for a fixed-repeats run.

    ``open_cases``: the cases its stability figures left out of pass^k or pass@k."""
    schedule = manifest.schedule if manifest is not None else None
    entry = schedule.target(target) if schedule is not None else None
    if schedule is None or entry is None:
        return None
    return ScheduleReport(
        planned=entry.planned,
        attempts=entry.attempts,
        saved=entry.saved,
        stopped_early=entry.stopped_early,
        stopped=entry.stopped,
        full_rounds=entry.full_rounds,
        until_decided=schedule.until_decided,
        ended=entry.ended,
        decisions=decision_confidences(suite, verdicts, checks),
        open_cases=open_cases,
    )
