"""The judge mark: which figures a judge decided, and the legend that says in words what ⚖ means.

Every report marks a judge-derived figure with ⚖ and prints a legend line
naming the judge (its model and the field it answers) and whether it is
calibrated, so the mark is never the only carrier of the meaning (screen
readers, ASCII logs). The legend is plain text: each format escapes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from toolproof.gate import Comparison, JudgeStatus, MetricDelta
from toolproof.stats import Summary

JUDGE_MARK = "⚖"
#: What the mark means, for a screen reader or an HTML title.
JUDGE_WORDS = "decided by a judge"
#: The headline figures that count attempts a judge decided (judge-decided arguments).
JUDGED_RATES = ("strict_pass", "arguments", "pass_at_k", "pass_hat_k")


def judged_rates(s: Summary) -> frozenset[str]:
    """The rate metrics of a summary that a judge's answers decided some attempts of."""
    return frozenset(JUDGED_RATES) if s.judge_decided else frozenset()


def marked(label: str, judged: bool) -> str:
    return f"{JUDGE_MARK} {label}" if judged else label


def state_text(j: JudgeStatus) -> str:
    """'calibrated: …' or 'uncalibrated: …' with the reason (missing calibration, κ too low,
    fingerprint changed)."""
    state = "calibrated" if j.calibrated else "uncalibrated"
    reason = j.why.split(": ", 1)[1] if ": " in j.why else j.why
    return f"{state}: {reason}"


def status_text(j: JudgeStatus) -> str:
    """'FIELD: model M, calibrated: …' or 'FIELD: model M, uncalibrated: …'."""
    return f"{j.field}: model {j.model}, {state_text(j)}"


def legend(judges: Sequence[JudgeStatus]) -> list[str]:
    """One line per judge field: '⚖ = decided by a judge (FIELD: model M, calibrated|…)'."""
    return [f"{JUDGE_MARK} = {JUDGE_WORDS} ({status_text(j)})" for j in judges]


def summary_legend() -> str:
    """The legend where only the figures are known, not the judge (a summary)."""
    return (
        f"{JUDGE_MARK} = {JUDGE_WORDS}: the figure counts attempts whose outcome a judge "
        "decided (judge-decided arguments or judged statements); toolproof gate names the judge "
        "and checks its calibration"
    )


def delta_legend(deltas: Iterable[MetricDelta]) -> list[str]:
    """The legend of a comparison's marked rows (compare checks no calibration)."""
    seen: dict[tuple[str, str, str], None] = {}
    for m in deltas:
        for j in m.judges:
            if m.judge is not None:
                seen[(m.judge, j.run, j.model)] = None
    return [
        f"{JUDGE_MARK} = {JUDGE_WORDS} ({field}: {'this run' if run == 'current' else run} "
        f"judged by model {model}; toolproof gate checks its calibration)"
        for field, run, model in seen
    ]


def comparison_legend(c: Comparison, judges: Sequence[JudgeStatus] = ()) -> list[str]:
    """What ⚖ means on a comparison's rows: ``judges`` (the gate's, with their calibration),
    then the judges of any marked row they do not cover."""
    lines = legend(judges)
    known = {j.field for j in judges}
    rest = [m for m in [*c.metrics, *c.judged] if m.judge is not None and m.judge not in known]
    return lines + delta_legend(rest)
