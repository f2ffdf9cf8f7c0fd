"""The judge mark: which figures a judge decided, and the legend that says in words what ⚖ means.

Every report marks a judge-derived figure with ⚖ and prints a legend line
naming the judge (its model and the field it answers) and whether it is
calibrated, so the mark is never the only carrier of the meaning (screen
readers, ASCII logs). The legend is plain text: each format escapes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from toolproof.gate import JudgeStatus, MetricDelta
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


def status_text(j: JudgeStatus) -> str:
    state = "calibrated" if j.calibrated else "uncalibrated"
    return f"{j.field}: model {j.model}, {state} ({j.why})"


def legend(judges: Sequence[JudgeStatus]) -> list[str]:
    """One line per judge field: '⚖ = decided by a judge (FIELD: model M, calibrated|…)'."""
    return [f"{JUDGE_MARK} = {JUDGE_WORDS} ({status_text(j)})" for j in judges]


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
