"""The judge's part of the gate decision: judge thresholds, judge-derived findings, and the
notes about judges, each blocking only under a calibrated judge.

Pure: a target's findings, the run's judgements and the calibration records in; the
target's findings as the gate keeps them out. ``run_gate`` applies it to every target, so
every caller (``toolproof gate``, ``report --html``, ``view``, the pytest plugin and the
API) gets the same decision.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolproof.evaluate import Evaluation, TargetEvaluation
from toolproof.gate._findings import Finding
from toolproof.gate._thresholds import judge_derived
from toolproof.judges import Calibration, Judgement, calibration_status, judge_gate
from toolproof.judges import self_preference as _self_preference
from toolproof.stats import Summary
from toolproof.types import ARGUMENT_RUBRIC, CalibrationPolicy


def judged_findings(
    run: Evaluation,
    cur: TargetEvaluation,
    findings: Sequence[Finding],
    calibrations: Sequence[Calibration],
    policy: CalibrationPolicy,
) -> list[Finding]:
    """A target's findings with the judge's rules applied.

    - an attempt left undecided by the argument judge is noted (not counted as passing);
    - a failing threshold or critical finding that only the argument judge's "different
      meaning" answers make fail is judge-derived: it blocks only under a judge calibrated
      for ``argument_meaning.same_meaning``;
    - the suite's judge thresholds are checked, blocking only under a calibrated judge,
      with a warning where a judge grades its own family.
    """
    out = _argument_findings(run, cur, findings, calibrations, policy)
    judge = run.suite.judge
    if judge is None or not judge.thresholds:
        return out
    checks = judge_gate([cur.target], judge.thresholds, run.judgements, calibrations, policy)
    for c in checks:
        if c.judge is None:
            text = f"⚖ {c.key}: {c.detail}; {c.why}"
        else:
            state = "passed" if c.passed else "failed"
            text = f"⚖ judged {c.key} ({c.judge}): {c.detail}; {state}; {c.why}"
        out.append(
            Finding(
                rule="judge" if c.calibrated else "advisory",
                message=text,
                blocking=c.blocking,
                judge=c.key,
                calibration=c.why,
            )
        )
    for j in sorted({c.judge for c in checks if c.judge}):
        warning = _self_preference(j, cur.target)
        if warning:
            out.append(Finding(rule="warning", message=warning, blocking=False))
    return out


def _argument_findings(
    run: Evaluation,
    cur: TargetEvaluation,
    findings: Sequence[Finding],
    calibrations: Sequence[Calibration],
    policy: CalibrationPolicy,
) -> list[Finding]:
    """Judge-decided arguments: the undecided note, and the threshold and critical findings
    the judge alone makes fail, made advisory unless the judge is calibrated."""
    out = list(findings)
    if cur.summary.undecided:
        out.append(
            Finding(
                rule="warning",
                message=f"⚖ {_left(cur.summary)} "
                f"undecided: {cur.summary.undecided} attempt(s) not counted as passing; "
                "judge them with: toolproof judge RUN --judge SPEC",
                blocking=False,
            )
        )
    if_same = run.scorer.if_same if run.scorer is not None else {}
    derived = judge_derived(run.suite, cur.verdicts, if_same)
    if not derived:
        return out
    calibrated, why = True, ""
    for fp in deciding_fingerprints(run.judgements, cur.target):
        ok, reason = calibration_status(ARGUMENT_RUBRIC, "same_meaning", fp, calibrations, policy)
        if not why or (calibrated and not ok):
            why = reason
        calibrated = calibrated and ok
    if not why:
        calibrated, why = False, "advisory: no judgements"
    return [
        f.model_copy(
            update={
                "message": f"⚖ judge-derived ({ARGUMENT_RUBRIC}): {f.message}; {why}",
                "judge": f"{ARGUMENT_RUBRIC}.same_meaning",
                "calibration": why,
                "rule": f.rule if calibrated else "advisory",
                "blocking": calibrated,
            }
        )
        if f.blocking and f.rule in ("threshold", "critical") and f.message in derived
        else f
        for f in out
    ]


def deciding_fingerprints(judgements: Sequence[Judgement], target: str) -> list[str]:
    """The judge fingerprints whose answers decide the target's judge-decided arguments:
    of each question's parsed answers, the last written (as the scorer reads them)."""
    latest: dict[str, str] = {}
    for j in judgements:
        if (
            j.rubric == ARGUMENT_RUBRIC
            and j.target == target
            and j.subject is not None
            and j.repeat == 0
            and j.status == "ok"
        ):
            latest[j.subject] = j.fingerprint
    return sorted(set(latest.values()))


def _left(s: Summary) -> str:
    """What a target left to a judge: judge-decided arguments, judged statements."""
    parts = []
    if s.undecided_arguments:
        parts.append(f"{s.undecided_arguments} judge-decided argument(s)")
    if s.undecided_statements:
        parts.append(
            f"{s.undecided_statements} judged statement(s) (communicate: judged, nl_assertions)"
        )
    return " and ".join(parts)
