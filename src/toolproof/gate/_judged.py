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
from toolproof.types import ARGUMENT_RUBRIC, NL_ASSERTION_RUBRIC, CalibrationPolicy


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
    deciding = deciding_fingerprints(run.judgements, cur.target)
    calibrated, why = deciding_calibrated(deciding, calibrations, policy)
    fields = sorted({f"{r}.{f}" for r, f, _ in deciding}) or [f"{ARGUMENT_RUBRIC}.same_meaning"]
    names = ", ".join(sorted({r for r, _, _ in deciding})) or ARGUMENT_RUBRIC
    return [
        f.model_copy(
            update={
                "message": f"⚖ judge-derived ({names}): {f.message}; {why}",
                "judge": ", ".join(fields),
                "calibration": why,
                "rule": f.rule if calibrated else "advisory",
                "blocking": calibrated,
            }
        )
        if f.blocking and f.rule in ("threshold", "critical") and f.message in derived
        else f
        for f in out
    ]


def deciding_fingerprints(
    judgements: Sequence[Judgement], target: str
) -> list[tuple[str, str, str]]:
    """(rubric, field, fingerprint) of the judges whose answers decide the target's attempts:
    judge-decided arguments (``argument_meaning.same_meaning``, of each question's parsed
    answers the last written) and judged statements (``nl_assertion.holds``, of each
    attempt's), as the scorer reads them."""
    latest: dict[tuple[str, str | int, int], tuple[str, str, str]] = {}
    for j in judgements:
        if j.target != target or j.repeat != 0 or j.status != "ok":
            continue
        if j.rubric == ARGUMENT_RUBRIC and j.subject is not None:
            latest[(j.rubric, j.subject, 0)] = (j.rubric, "same_meaning", j.fingerprint)
        elif j.rubric == NL_ASSERTION_RUBRIC:
            latest[(j.rubric, j.case_id, j.attempt)] = (j.rubric, "holds", j.fingerprint)
    return sorted(set(latest.values()))


def deciding_calibrated(
    deciding: Sequence[tuple[str, str, str]],
    calibrations: Sequence[Calibration],
    policy: CalibrationPolicy,
) -> tuple[bool, str]:
    """Whether every deciding judge (``deciding_fingerprints``) is calibrated for the field
    it decided, and why not (the first reason that fails, else the last one read); with no
    deciding judge, not calibrated: ``advisory: no judgements``."""
    calibrated, why = True, ""
    for rubric, field, fp in deciding:
        ok, reason = calibration_status(rubric, field, fp, calibrations, policy)
        if not why or (calibrated and not ok):
            why = reason
        calibrated = calibrated and ok
    if not why:
        return False, "advisory: no judgements"
    return calibrated, why


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
