"""The release gate: thresholds, hard rules and the baseline comparison, as one decision."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from dataclasses import field as _field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from toolproof.evaluate import Evaluation, TargetEvaluation
from toolproof.gate._compare import (
    Comparison,
    MetricDelta,
    RunJudges,
    compare_targets,
    fingerprint_warnings,
    pair_targets,
    suite_changed_warning,
)
from toolproof.gate._complete import Coverage, check_coverage
from toolproof.gate._findings import Finding
from toolproof.gate._infra import InfraAllowance, check_infra, unscored
from toolproof.gate._judged import deciding_calibrated, deciding_fingerprints, judged_findings
from toolproof.gate._measured import LABELS
from toolproof.gate._schedule import ScheduleReport, compiled_cases, target_schedule
from toolproof.gate._thresholds import ThresholdCheck, check_thresholds, critical_violations
from toolproof.judges import Calibration, calibration_status
from toolproof.stats import Summary
from toolproof.types import ARGUMENT_RUBRIC, CalibrationPolicy, Risk, Thresholds

EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_INFRA = 3
EXIT_INCOMPLETE = 4


@dataclass
class GateOptions:
    """How strict the gate is."""

    margin: float = 0.02
    """Largest allowed drop of a rate against the baseline (0.02 = 2 points)."""
    require_significance: bool = False
    """Fail on a drop beyond the margin only when McNemar's test finds it significant."""
    alpha: float = 0.05
    max_infra: InfraAllowance = _field(default_factory=InfraAllowance)
    """The share of each target's attempts allowed to end without a model answer (rate
    limit, outage...) before the gate gives up (exit 3). Harness errors are never allowed."""
    allow_partial: bool = False
    """Gate a run that is not complete (interrupted, killed, missing attempts, no manifest)."""
    allow_cached: bool = True
    """False: fail a target any of whose answers came from the response cache."""
    repaired: bool = False
    """Gate on the repaired figures (calls recovered from text count as calls); by
    default the raw ones (a call printed as text is a missed call)."""
    calibrations: Sequence[Calibration] | None = None
    """Judge calibration records: a drop a judge decided blocks only under a judge
    calibrated for the fields it used (see ``toolproof.judges.calibration_status``).
    None: the records the suite names, as ``load_run`` read them
    (``Evaluation.calibrations``); when none were read either, every judge counts as
    uncalibrated and says so."""
    calibration_policy: CalibrationPolicy | None = None
    """When a judge counts as calibrated (default: the suite's ``judge.require``)."""
    thresholds: Mapping[str, Thresholds] | None = None
    """The thresholds to hold the run to, in place of the suite's ``thresholds:`` (a gate
    policy read from its own file: ``toolproof gate --policy``). None: the suite's."""


class JudgeStatus(BaseModel):
    """A judge behind some of a target's figures, and whether it may block a release."""

    model_config = ConfigDict(extra="forbid")

    field: str = Field(description="RUBRIC.FIELD whose answers the figures use.")
    model: str = Field(description="The judge's model spec.")
    fingerprint: str
    calibrated: bool
    why: str = Field(description="The calibration status in words (why it is advisory).")


class TargetGate(BaseModel):
    """The gate's decision for one target."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    target: str
    passed: bool
    summary: Summary
    thresholds: list[ThresholdCheck]
    findings: list[Finding]
    comparison: Comparison | None = None
    infra_errors: int = Field(
        default=0,
        description="Attempts without a model answer: infrastructure outcomes and harness errors.",
    )
    harness_errors: int = Field(
        default=0, description="Of those, harness errors: never allowed (exit 3)."
    )
    infra_failed: bool = Field(
        default=False,
        description="Over the infrastructure allowance, a harness error, or nothing scored: "
        "the gate cannot judge this target (exit 3).",
    )
    judges: list[JudgeStatus] = Field(
        default_factory=list,
        description="The judges behind this target's figures (judge-decided arguments, "
        "judge rubrics), each with its calibration status.",
    )
    judge_decided_failures: list[str] = Field(
        default_factory=list,
        description="Cases with a failed attempt whose outcome a judge decided (a "
        "judge-decided argument the judge found different), sorted.",
    )
    schedule: ScheduleReport | None = Field(
        default=None,
        description="--repeats auto: attempts made against the fixed plan, attempts saved, "
        "cases stopped early and the confidence of each threshold decision.",
    )


class GateResult(BaseModel):
    """The gate's whole decision: made once by ``run_gate``, never changed after."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    suite: str
    passed: bool
    exit_code: int
    targets: list[TargetGate]
    warnings: list[str]
    options: dict[str, float | bool | int]
    coverage: Coverage | None = Field(
        default=None, description="The run's manifest status and the attempts it lacks."
    )
    figures: Literal["raw", "repaired"] = Field(
        default="raw",
        description="The figures gated on: raw (a call printed as text is a missed call) "
        "or repaired (calls recovered from text count as calls).",
    )
    figures_note: str = Field(
        default="", description="Which figures were gated on, when it makes a difference."
    )


def _drop(m: MetricDelta, opts: GateOptions) -> Finding | None:
    """The finding of one figure against the baseline: None when it did not drop."""
    if m.delta is None or m.delta >= -opts.margin - 1e-12:
        return None
    label = LABELS.get(m.metric, m.metric)
    text = f"{label} dropped {100 * -m.delta:.1f} points ({_pct(m.baseline)} → {_pct(m.current)})"
    if m.test is None:
        return Finding(rule="drop", message=text, blocking=True)
    text += f"; McNemar p={m.test.p_value:.3g} (cases worse {m.test.worse}, better {m.test.better})"
    if m.test.p_value < opts.alpha:
        return Finding(rule="drop", message=text + ", significant", blocking=True)
    blocking = not opts.require_significance
    return Finding(
        rule="drop" if blocking else "noise",
        message=text + ", not significant: may be noise",
        blocking=blocking,
    )


def _drops(comp: Comparison, opts: GateOptions, policy: CalibrationPolicy) -> list[Finding]:
    out = []
    for m in [*comp.metrics, *comp.judged]:
        f = _drop(m, opts)
        if f is None:
            continue
        if f.blocking and m.judge is not None:
            # a pass rate's drop is the judge's when it is gone with every answer against it
            alone = m.without_judge is None or not _blocks(_drop(m.without_judge, opts))
            if alone:
                f = _judge_drop(f, m, opts, policy)
        out.append(f)
    return out


def _policy(run: Evaluation, opts: GateOptions) -> CalibrationPolicy:
    if opts.calibration_policy is not None:
        return opts.calibration_policy
    return run.suite.judge.require if run.suite.judge is not None else CalibrationPolicy()


def _blocks(f: Finding | None) -> bool:
    return f is not None and f.blocking


def _judge_drop(
    f: Finding, m: MetricDelta, opts: GateOptions, policy: CalibrationPolicy
) -> Finding:
    """A drop a judge decided: blocking only under a judge calibrated for the field used
    (by every judge behind the figure, in either run), as for a judge threshold."""
    assert m.judge is not None
    rubric, _, field = m.judge.partition(".")
    # one judge (fingerprint) is asked once; this run's judge is named as such
    judges = {j.fingerprint: j for j in sorted(m.judges, key=lambda j: j.run == "current")}
    statuses = [
        (j, *_calibration(rubric, field, j.fingerprint, opts.calibrations, policy))
        for j in judges.values()
    ]
    calibrated = bool(statuses) and all(ok for _, ok, _ in statuses)
    reasons = [
        (why if j.run == "current" else f"baseline judge {why}")
        for j, ok, why in sorted(statuses, key=lambda s: s[0].run != "current")
        if ok is calibrated
    ]
    why = "; ".join(reasons) or "advisory: no judgements"
    models = ", ".join(sorted({j.model for j in m.judges})) or "unknown"
    message = f"⚖ judge-derived ({m.judge}, judge {models}): {f.message}"
    if m.without_judge is not None and m.without_judge.delta is not None:
        message += (
            f"; with every judge answer against the drop: {100 * m.without_judge.delta:+.1f} points"
        )
    return Finding(
        rule="judge" if calibrated else "advisory",
        message=f"{message}; {why}",
        blocking=calibrated,
        judge=m.judge,
        calibration=why,
    )


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _fixed_by_judge(
    run: Evaluation, cur: TargetEvaluation, comparison: Comparison, opts: GateOptions
) -> tuple[Comparison, list[Finding]]:
    """Cases that failed in the baseline and pass now only by a judge's answers. Under a
    judge calibrated for every field that decided them they are newly fixed; otherwise the
    gate refuses: an advisory answer cannot turn a failure into a fix."""
    ids = comparison.fixed_by_judge
    if not ids:
        return comparison, []
    deciding = deciding_fingerprints(run.judgements, cur.target)
    calibrated, why = deciding_calibrated(deciding, opts.calibrations or [], _policy(run, opts))
    if calibrated:
        fixed = sorted([*comparison.newly_fixed, *ids])
        return comparison.model_copy(update={"newly_fixed": fixed, "fixed_by_judge": []}), []
    names = ", ".join(ids)
    finding = Finding(
        rule="judged_fix",
        message=f"⚖ {len(ids)} case(s) failed in the baseline and pass now only by a judge's "
        f"answers: {names}; {why}",
        blocking=True,
    )
    return comparison, [finding]


def gate_target(
    run: Evaluation,
    cur: TargetEvaluation,
    base: TargetEvaluation | None,
    opts: GateOptions,
    warnings: list[str] | None = None,
    baseline: Evaluation | None = None,
) -> TargetGate:
    """Thresholds, hard rules and (with a baseline) drops and new critical failures.

    With the baseline run (``baseline``), a drop a judge decided is advisory
    unless the judge is calibrated (``opts.calibrations``).
    """
    # an adaptive run: rates over its full rounds, counts over every attempt
    suite = run.suite
    if opts.thresholds is not None:  # a policy given apart from the suite: its thresholds only
        suite = suite.model_copy(update={"thresholds": dict(opts.thresholds)})
    checks = check_thresholds(suite, cur.gated, cur.verdicts)
    findings = [
        Finding(rule="threshold", message=f"{c.scope}: {c.label} {c.detail}", blocking=True)
        for c in checks
        if not c.passed
    ]
    findings += [
        Finding(rule="critical", message=m, blocking=True)
        for m in critical_violations(cur.verdicts)
    ]
    comparison = None
    if base is not None:
        comparison = compare_targets(
            base, cur, warnings, base_run=baseline, cur_run=run if baseline is not None else None
        )
        findings += _drops(comparison, opts, _policy(run, opts))
        findings += [
            Finding(rule="new_critical", message=f"new critical failure: {c}", blocking=True)
            for c in comparison.new_critical_failures
        ]
        comparison, fixed = _fixed_by_judge(run, cur, comparison, opts)
        findings += fixed
    if not opts.allow_cached and cur.summary.cached:
        findings.append(
            Finding(
                rule="cached",
                message=f"{cur.summary.cached} of {cur.summary.attempts} answers came from the "
                "response cache, and the gate was told not to accept cached answers",
                blocking=True,
            )
        )
    infra = check_infra(cur.target, cur.records, opts.max_infra)
    if infra.unanswered or infra.harness_errors:  # named, allowed or not
        findings.append(
            Finding(rule="infrastructure", message=infra.message(), blocking=infra.failed)
        )
    missing = unscored(cur.records, cur.verdicts, case_risks(run, cur))
    if cur.verdicts and not cur.gated:  # scored, but nothing the rates read
        missing.append(
            "no attempt of the schedule's full rounds was scored, so no rate can be checked"
        )
    findings += [Finding(rule="unscored", message=m, blocking=True) for m in missing]
    policy = _policy(run, opts)
    findings = judged_findings(run, cur, findings, opts.calibrations or [], policy)
    return TargetGate(
        target=cur.target,
        passed=not any(f.blocking for f in findings),
        summary=cur.summary,
        thresholds=checks,
        findings=findings,
        comparison=comparison,
        infra_errors=infra.unanswered + infra.harness_errors,
        harness_errors=infra.harness_errors,
        infra_failed=infra.failed or bool(missing),
        judges=judge_statuses(run, cur, opts.calibrations, policy),
        judge_decided_failures=sorted(
            {v.case_id for v in cur.verdicts if v.judge_decided and not v.passed}
        )
        if cur.summary.judge_decided
        else [],
        schedule=target_schedule(run, cur, checks),
    )


def _calibration(
    rubric: str,
    field: str,
    fingerprint: str,
    calibrations: Sequence[Calibration] | None,
    policy: CalibrationPolicy,
) -> tuple[bool, str]:
    """``calibration_status``, the one decision for judge thresholds and judge drops alike."""
    if calibrations is None:
        return False, "advisory: calibration not checked (no calibration records given)"
    return calibration_status(rubric, field, fingerprint, calibrations, policy)


def judge_statuses(
    run: Evaluation,
    cur: TargetEvaluation,
    calibrations: Sequence[Calibration] | None,
    policy: CalibrationPolicy,
) -> list[JudgeStatus]:
    """Every judge behind a target's figures: the judge of its judge-decided arguments (when
    one decided an attempt) and of each rubric that judged it, per field, with the
    calibration status that decides whether the figure may block (``calibration_status``)."""
    from toolproof.judges import suite_rubrics

    judges = RunJudges.of(run)
    mine = [j for j in run.judgements if j.target == cur.target and j.repeat == 0]
    rubrics = suite_rubrics(run.suite)
    names = sorted({j.rubric for j in mine if j.rubric != ARGUMENT_RUBRIC and j.rubric in rubrics})
    argued = cur.summary.judge_decided and any(j.rubric == ARGUMENT_RUBRIC for j in mine)
    wanted = [(ARGUMENT_RUBRIC, "same_meaning")] if argued else []
    wanted += [(name, f) for name in names for f in rubrics[name].fields]
    out = []
    for rubric, field in wanted:
        used = judges.used("current", cur.target, rubric)
        ok, why = _calibration(rubric, field, used.fingerprint, calibrations, policy)
        out.append(
            JudgeStatus(
                field=f"{rubric}.{field}",
                model=used.model,
                fingerprint=used.fingerprint,
                calibrated=ok,
                why=why,
            )
        )
    return out


def run_gate(
    run: Evaluation, baseline: Evaluation | None = None, opts: GateOptions | None = None
) -> GateResult:
    """Decide whether a run may ship.

    Exit code 0 pass, 1 gate failed, 3 infrastructure, 4 the run is not complete.
    """
    opts = opts or GateOptions()
    if opts.calibrations is None and run.calibrations is not None:
        opts = replace(opts, calibrations=run.calibrations)
    warnings = fingerprint_warnings(baseline, run) if baseline is not None else []
    changed = suite_changed_warning(run)
    if changed is not None:
        warnings.append(changed)
    if baseline is not None and baseline.manifest is not None:
        partial = run_coverage(baseline)  # compared over the cases it holds: say it
        if not partial.complete:
            warnings.append(f"the baseline is not complete: {partial.message()}")
    coverage = run_coverage(run)
    refused = not coverage.complete and not opts.allow_partial
    if coverage.shard is not None:
        warnings.append(
            f"this run is shard {coverage.shard} of the cases: gated on its own "
            f"{coverage.expected} attempts; merge the shards (toolproof merge) to gate the "
            "whole run"
        )
    if not coverage.complete and opts.allow_partial:
        warnings.append(f"gated although incomplete (allow partial): {coverage.message()}")
    pairs: list[tuple[TargetEvaluation, TargetEvaluation | None]]
    if baseline is not None:
        pairs = [(b, a) for a, b in pair_targets(baseline, run)]
    else:
        pairs = [(t, None) for t in run.targets.values()]
    if opts.repaired:
        pairs = [(_repaired(cur), _repaired(base) if base else None) for cur, base in pairs]
    targets = [gate_target(run, cur, base, opts, warnings, baseline) for cur, base in pairs]
    if refused:
        incomplete = Finding(rule="incomplete", message=coverage.message(), blocking=True)
        targets = [
            t.model_copy(update={"findings": [incomplete, *t.findings], "passed": False})
            for t in targets
        ]
    passed = all(t.passed for t in targets)
    if refused:
        code = EXIT_INCOMPLETE
    elif any(t.infra_failed for t in targets):
        code = EXIT_INFRA
    else:
        code = EXIT_OK if passed else EXIT_GATE_FAILED
    return GateResult(
        suite=run.suite.name,
        passed=passed,
        exit_code=code,
        targets=targets,
        warnings=warnings,
        options={
            "margin": opts.margin,
            "require_significance": opts.require_significance,
            "alpha": opts.alpha,
            "max_infra_share": opts.max_infra.share,
            "allow_partial": opts.allow_partial,
            "allow_cached": opts.allow_cached,
            "repaired": opts.repaired,
        },
        coverage=coverage,
        figures="repaired" if opts.repaired else "raw",
        figures_note=_figures_note(run, opts.repaired),
    )


def case_risks(run: Evaluation, cur: TargetEvaluation) -> dict[str, Risk]:
    """The risk class of each case the target attempted, as graded: from its verdicts,
    and for a case with none, from the case as the run's scorer compiled it."""
    risks: dict[str, Risk] = {}
    for v in cur.verdicts:
        risks.setdefault(v.case_id, v.risk)
    unscored_ids = {r.case_id for r in cur.records if r.case_id not in risks}
    if unscored_ids:  # no verdict to read it from: the case's risk as grading decides it
        compiled = compiled_cases(run.suite, run.scorer)
        for case_id in unscored_ids:
            if case_id in compiled:
                risks[case_id] = compiled[case_id].risk
    return risks


def _repaired(t: TargetEvaluation) -> TargetEvaluation:
    return t.repaired if t.repaired is not None else t


def _figures_note(run: Evaluation, repaired: bool) -> str:
    """Which figures the gate used, said whenever it matters."""
    figures = [t.summary.repaired for t in run.targets.values()]
    calls = sum(f.recovered_calls for f in figures if f is not None)
    if repaired:
        if not calls:
            return "gated on the repaired figures (--repaired); no call was recovered from text"
        return (
            f"gated on the repaired figures (--repaired): {calls} call(s) recovered from text "
            "count as calls"
        )
    if not calls:
        return ""
    return (
        f"gated on the raw figures: {calls} call(s) the model printed as text count as "
        "missed calls (gate --repaired counts them as calls)"
    )


def run_coverage(run: Evaluation) -> Coverage:
    """The coverage of an evaluated run: its manifest against the records of every target."""
    return check_coverage(run.manifest, run.suite, run.records)
