"""Compare a run with a baseline: metric deltas, changed cases, paired significance.

A figure that a judge's answers can change is marked with the judge
(``MetricDelta.judge``): a pass rate that counts judge-decided attempts, and a
judge rubric's own figure. For a pass rate the comparison also gives the same
figure with every judge answer going against a drop (``without_judge``): a
drop that stays there happens regardless of the judge.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Container, Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from toolproof.evaluate import Evaluation, TargetEvaluation
from toolproof.gate._measured import case_outcomes, metric_rate, unsafe_calls
from toolproof.judges import Judgement
from toolproof.stats import Rate, pass_at_k, pass_hat_k
from toolproof.stats._metrics import RATE_NAMES
from toolproof.types import ARGUMENT_RUBRIC, NL_ASSERTION_RUBRIC, Risk, Verdict

#: (target, case, attempt): how the scorer keys the verdicts a judge's answers could change.
AttemptKey = tuple[str | None, str, int]

#: Rate metrics compared (and gated on drops), in report order.
COMPARED = RATE_NAMES


class McNemar(BaseModel):
    """Exact McNemar test on paired per-case outcomes (two-sided binomial on discordant pairs)."""

    model_config = ConfigDict(extra="forbid")

    worse: int
    better: int
    p_value: float


class JudgeUsed(BaseModel):
    """A judge whose answers a figure depends on, in one of the two runs."""

    model_config = ConfigDict(extra="forbid")

    run: Literal["baseline", "current"]
    model: str = Field(description="The judge's model spec.")
    fingerprint: str = Field(description="Judge fingerprint: model, settings, rubric, prompt.")


class MetricDelta(BaseModel):
    model_config = ConfigDict(extra="forbid")

    metric: str
    baseline: float | None
    current: float | None
    delta: float | None
    test: McNemar | None = None
    judge: str | None = Field(
        default=None,
        description="RUBRIC.FIELD of the judge answers this figure depends on (a judge "
        "rubric's figure, or a pass rate counting attempts a judge decided); None: no "
        "judge's say changes it.",
    )
    judges: list[JudgeUsed] = Field(
        default_factory=list, description="The judges behind the figure, per run."
    )
    without_judge: MetricDelta | None = Field(
        default=None,
        description="A pass rate with every judge answer going against a drop (this run's "
        "'different meaning' answers read as same, the baseline's 'same' as different): a "
        "drop beyond the margin here happens regardless of the judge. None for a judge "
        "rubric's own figure, which has no value without the judge.",
    )


class RiskRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    risk: str
    baseline: Rate
    current: Rate
    delta: float | None


class Comparison(BaseModel):
    """How one target of a run differs from a baseline target."""

    model_config = ConfigDict(extra="forbid")

    baseline_target: str
    target: str
    metrics: list[MetricDelta]
    counts: dict[str, tuple[int, int]]
    newly_failing: list[str]
    newly_fixed: list[str]
    new_critical_failures: list[str]
    by_risk: list[RiskRow]
    warnings: list[str]
    fixed_by_judge: list[str] = Field(
        default_factory=list,
        description="Cases that failed in the baseline and pass now only by a judge's answers "
        "(judged arguments or statements read against them, the case still fails): not counted "
        "as newly fixed.",
    )
    judged: list[MetricDelta] = Field(
        default_factory=list,
        description="Judge rubric figures the suite gates with a 'min' threshold "
        "(RUBRIC.FIELD, rate of true): every one judge-derived.",
    )


def mcnemar(base: dict[str, bool], cur: dict[str, bool]) -> McNemar:
    """Exact McNemar over the cases both runs have."""
    from scipy.stats import binomtest

    both = base.keys() & cur.keys()
    worse = sum(1 for c in both if base[c] and not cur[c])
    better = sum(1 for c in both if cur[c] and not base[c])
    n = worse + better
    p = 1.0 if n == 0 else float(binomtest(worse, n, 0.5).pvalue)
    return McNemar(worse=worse, better=better, p_value=p)


def _value(r: Rate) -> float | None:
    return r.k / r.n if r.n else None


def _delta(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else b - a


def _metric(name: str, base: list[Verdict], cur: list[Verdict]) -> MetricDelta:
    a, b = _value(metric_rate(name, base)), _value(metric_rate(name, cur))
    test = mcnemar(case_outcomes(name, base), case_outcomes(name, cur))
    return MetricDelta(metric=name, baseline=a, current=b, delta=_delta(a, b), test=test)


def _mean_over(run: TargetEvaluation, attr: str, cases: set[str]) -> float | None:
    st = run.summary.stability
    # a case an adaptive schedule stopped with the figure still open is left out
    values = (
        [getattr(c, attr) for c in st.per_case if c.case_id in cases and not c.undecided]
        if st
        else []
    )
    return sum(values) / len(values) if values else None


def _stability_deltas(
    base: TargetEvaluation, cur: TargetEvaluation, cases: set[str], test: McNemar
) -> list[MetricDelta]:
    out = []
    for name in ("pass_at_k", "pass_hat_k"):
        a, b = _mean_over(base, name, cases), _mean_over(cur, name, cases)
        out.append(MetricDelta(metric=name, baseline=a, current=b, delta=_delta(a, b), test=test))
    return out


def _by_risk(base: list[Verdict], cur: list[Verdict]) -> list[RiskRow]:
    rows = []
    for risk in reversed(Risk):
        a = metric_rate("strict_pass", [v for v in base if v.risk is risk])
        b = metric_rate("strict_pass", [v for v in cur if v.risk is risk])
        if a.n or b.n:
            rows.append(
                RiskRow(risk=risk.value, baseline=a, current=b, delta=_delta(_value(a), _value(b)))
            )
    return rows


def compare_targets(
    base: TargetEvaluation,
    cur: TargetEvaluation,
    warnings: list[str] | None = None,
    *,
    base_run: Evaluation | None = None,
    cur_run: Evaluation | None = None,
) -> Comparison:
    """Deltas, changed cases and the per-risk table for one pair of targets.

    Figures are compared over the cases both runs scored, so a smoke run can be
    compared with a full baseline; a case only the new run has can still be a
    new critical failure. With the two runs (``base_run``, ``cur_run``), the
    figures a judge's answers change are marked with the judge, and the judge
    rubric figures the suite gates are compared too.
    """
    common = {v.case_id for v in base.verdicts} & {v.case_id for v in cur.verdicts}
    # an adaptive run's rates are read over its full rounds (``gated``); what is said of a
    # case (it failed an attempt) and the counts over all its attempts
    bv = [v for v in base.gated if v.case_id in common]
    cv = [v for v in cur.gated if v.case_id in common]
    ba = [v for v in base.verdicts if v.case_id in common]
    ca = [v for v in cur.verdicts if v.case_id in common]
    a, b = case_outcomes("strict_pass", ba), case_outcomes("strict_pass", ca)
    every = case_outcomes("strict_pass", cur.verdicts)
    critical = {v.case_id for v in cur.verdicts if v.risk is Risk.critical}
    failing, fixed, new_critical = changed_cases(a, b, every, critical)
    metrics = [_metric(m, bv, cv) for m in COMPARED] + _stability_deltas(
        base, cur, common, mcnemar(a, b)
    )
    judged: list[MetricDelta] = []
    by_judge: list[str] = []
    if base_run is not None and cur_run is not None:
        bj, cj = RunJudges.of(base_run), RunJudges.of(cur_run)
        metrics = _mark_judged(metrics, base, cur, bv, cv, common, bj, cj)
        judged = judged_deltas(cur_run, base.target, cur.target, common, bj, cj)
        # every current "same meaning" / "holds" read as its opposite: a case fixed only so
        # is the judge's doing, not a fix
        if cj.if_different:
            bound = case_outcomes("strict_pass", judge_bound(ca, cj.if_different))
            by_judge = [c for c in fixed if not bound[c]]
            fixed = [c for c in fixed if bound[c]]
    return Comparison(
        baseline_target=base.target,
        target=cur.target,
        metrics=metrics,
        judged=judged,
        counts={
            "unsafe_calls": (unsafe_calls(ba), unsafe_calls(ca)),
            "forbidden_calls": (
                sum(len(v.forbidden_called) for v in ba),
                sum(len(v.forbidden_called) for v in ca),
            ),
        },
        newly_failing=failing,
        newly_fixed=fixed,
        fixed_by_judge=by_judge,
        new_critical_failures=new_critical,
        by_risk=_by_risk(bv, cv),
        warnings=list(warnings or []),
    )


def changed_cases(
    before: Mapping[str, bool],
    after: Mapping[str, bool],
    now: Mapping[str, bool],
    critical: Container[str],
) -> tuple[list[str], list[str], list[str]]:
    """Which cases changed between two runs, from per-case outcomes (did every attempt
    that counts pass): newly failing and newly fixed, over the cases both runs scored
    (``before`` and ``after`` hold the same cases); and the new critical failures, over
    every case the current run scored (``now``): a case in ``critical`` that fails now
    and passed, or was not scored, before. Each list sorted. The one rule for the gate's
    comparison and the viewer's comparison of stored runs."""
    failing = sorted(c for c, ok in after.items() if before[c] and not ok)
    fixed = sorted(c for c, ok in after.items() if ok and not before[c])
    new_critical = sorted(
        c for c, ok in now.items() if not ok and c in critical and before.get(c, True)
    )
    return failing, fixed, new_critical


def fingerprint_warnings(base: Evaluation, cur: Evaluation) -> list[str]:
    """What differs between the runs besides the targets and their settings."""
    fa, fb = base.fingerprint(), cur.fingerprint()
    rest = _rest_of_suite(base), _rest_of_suite(cur)
    same = None if None in rest else rest[0] == rest[1]
    out = fingerprint_differences(fa, fb, ("baseline", ""), rest_same=same)
    ca = {r.case_id for t in base.targets.values() for r in t.records}
    cb = {r.case_id for t in cur.targets.values() for r in t.records}
    if ca != cb:
        out.append(
            f"case sets differ: {len(ca - cb)} only in the baseline, "
            f"{len(cb - ca)} only in this run"
        )
    return out


_TOOL_KEYS = ("tools from", "tool schemas")


def fingerprint_differences(
    fa: Mapping[str, Any],
    fb: Mapping[str, Any],
    names: tuple[str, str],
    *,
    rest_same: bool | None = None,
) -> list[str]:
    """One line per part of what a run was measured against that differs (``names``: how
    each side is called, "" for none). The tools are one part: where they came from and
    their schemas, in one line. The suite fingerprint covers the tools too, so it is
    named only when the rest of the suite differs as well (``rest_same``: whether the
    suites without their tools are the same; None: not known)."""
    a, b = (f" ({n})" if n else "" for n in names)

    def show(value: Any) -> str:
        return str(value) if value is not None else "none"

    out = []
    tools = [k for k in _TOOL_KEYS if k in fa and k in fb and fa[k] != fb[k]]
    for key in fa:
        if key in _TOOL_KEYS or key not in fb or fa[key] == fb[key]:
            continue
        if key == "toolproof version" and (fa[key] is None or fb[key] is None):
            continue  # not known for a bare records file
        if key == "suite fingerprint" and tools:
            if rest_same:
                continue  # the tools alone changed: said below
            if rest_same is None:
                out.append(
                    f"suite fingerprint differs: {show(fa[key])}{a} vs {show(fb[key])}{b} "
                    "(its tools differ; whether the rest of the suite does is not known)"
                )
                continue
        out.append(f"{key} differs: {show(fa[key])}{a} vs {show(fb[key])}{b}")
    if "tools from" in tools:
        schemas = (
            f"; tool schemas {show(fa['tool schemas'])} vs {show(fb['tool schemas'])}"
            if "tool schemas" in tools
            else ""
        )
        out.append(f"tools from differs: {fa['tools from']}{a} vs {fb['tools from']}{b}{schemas}")
    elif tools:
        out.append(
            f"tool schemas differs: {show(fa['tool schemas'])}{a} vs {show(fb['tool schemas'])}{b}"
        )
    return out


def suite_changed_warning(ev: Evaluation) -> str | None:
    """Said when the suite at hand is not the one the run was measured against (its
    manifest's suite fingerprint): the records are graded against the suite as it is now.
    A run a production import wrote fingerprints its files, not the suite: not compared."""
    m = ev.manifest
    if m is None or m.extra.get("imported_by") or m.suite_fingerprint == ev.suite.fingerprint():
        return None
    return (
        "the suite differs from the one this run was made with: fingerprint "
        f"{ev.suite.fingerprint()} now, {m.suite_fingerprint} in its manifest; its records "
        "are graded against the suite as it is now"
    )


def _rest_of_suite(ev: Evaluation) -> str | None:
    """The fingerprint of the run's suite without its tools; None when the suite at hand
    is not the one the run was measured against (it changed since)."""
    m = ev.manifest
    if m is not None and m.suite_fingerprint != ev.suite.fingerprint():
        return None
    return ev.suite.fingerprint(tools=False)


def pair_targets(
    base: Evaluation, cur: Evaluation
) -> list[tuple[TargetEvaluation, TargetEvaluation]]:
    """Pair targets: the only one of each run, or by equal name."""
    from toolproof.errors import UserError

    if len(base.targets) == 1 and len(cur.targets) == 1:
        return [(next(iter(base.targets.values())), next(iter(cur.targets.values())))]
    pairs = [(base.targets[t], cur.targets[t]) for t in cur.targets if t in base.targets]
    if not pairs:
        raise UserError(
            f"cannot pair targets: baseline has {sorted(base.targets)}, "
            f"run has {sorted(cur.targets)}"
        )
    return pairs


def compare_runs(base: Evaluation, cur: Evaluation) -> list[Comparison]:
    """Compare every paired target of two runs."""
    warnings = fingerprint_warnings(base, cur)
    return [
        compare_targets(a, b, warnings, base_run=base, cur_run=cur)
        for a, b in pair_targets(base, cur)
    ]


# --- figures a judge decides ------------------------------------------------------------------


class RunJudges:
    """What one run's judges decided, as the comparison needs it (from its scorer)."""

    def __init__(
        self,
        judgements: Sequence[Judgement],
        if_same: Mapping[AttemptKey, Verdict],
        if_different: Mapping[AttemptKey, Verdict],
        statements: frozenset[AttemptKey] = frozenset(),
    ) -> None:
        self.judgements = judgements
        self.if_same = if_same
        self.if_different = if_different
        self.statements = statements
        """The attempts the nl_assertion judge decided (the rest: the argument judge)."""

    @classmethod
    def of(cls, run: Evaluation) -> RunJudges:
        scorer = run.scorer
        if scorer is None:
            return cls(run.judgements, {}, {})
        return cls(
            run.judgements, scorer.if_same, scorer.if_different, frozenset(scorer.statement_keys)
        )

    def rubric(self, moved: Iterable[Verdict]) -> str:
        """The rubric whose answers moved these verdicts: ``nl_assertion`` when only the
        nl_assertion judge's did, else ``argument_meaning``."""
        keys = [(v.target, v.case_id, v.attempt) for v in moved]
        if keys and all(k in self.statements for k in keys):
            return NL_ASSERTION_RUBRIC
        return ARGUMENT_RUBRIC

    def used(self, run: Literal["baseline", "current"], target: str, rubric: str) -> JudgeUsed:
        """The judge of one rubric for one target: the fingerprint most of its judgements have."""
        mine = [j for j in self.judgements if j.target == target and j.rubric == rubric]
        if not mine:
            return JudgeUsed(run=run, model="unknown", fingerprint="")
        fp = Counter(j.fingerprint for j in mine).most_common(1)[0][0]
        model = next(j.judge for j in mine if j.fingerprint == fp)
        return JudgeUsed(run=run, model=model, fingerprint=fp)


def judge_bound(verdicts: Iterable[Verdict], swap: Mapping[AttemptKey, Verdict]) -> list[Verdict]:
    """The verdicts with each judge-decided attempt in ``swap`` replaced by its other outcome
    (``Scorer.if_same``: as if the judge had found the same meaning; ``Scorer.if_different``:
    a different one)."""
    if not swap:
        return list(verdicts)
    return [
        swap.get((v.target, v.case_id, v.attempt), v) if v.judge_decided else v for v in verdicts
    ]


def _mark_judged(
    metrics: list[MetricDelta],
    base: TargetEvaluation,
    cur: TargetEvaluation,
    bv: list[Verdict],
    cv: list[Verdict],
    common: set[str],
    bj: RunJudges,
    cj: RunJudges,
) -> list[MetricDelta]:
    """Mark the pass rates a judge's answers change, with the figure they would have without."""
    if not bj.if_different and not cj.if_same:
        return metrics
    lower = judge_bound(bv, bj.if_different)  # every baseline "same" read as "different"
    upper = judge_bound(cv, cj.if_same)  # every current "different" read as "same"
    judges = []
    moved_b = [v for i, v in enumerate(bv) if lower[i] is not v]
    moved_c = [v for i, v in enumerate(cv) if upper[i] is not v]
    rubrics = []
    if moved_b:
        rubrics.append(bj.rubric(moved_b))
        judges.append(bj.used("baseline", base.target, rubrics[-1]))
    if moved_c:
        rubrics.append(cj.rubric(moved_c))
        judges.append(cj.used("current", cur.target, rubrics[-1]))
    if not judges:
        return metrics
    # one field decides whether the figure may block; mixed rubrics are read as arguments'
    # (a judge not calibrated for that field leaves the figure advisory)
    rubric = rubrics[0] if len(set(rubrics)) == 1 else ARGUMENT_RUBRIC
    field = "holds" if rubric == NL_ASSERTION_RUBRIC else "same_meaning"
    bounds = {m: _metric(m, lower, upper) for m in COMPARED}
    bounds.update(_stability_bounds(base, cur, common, bv, cv, lower, upper))
    out = []
    for m in metrics:
        b = bounds.get(m.metric)
        if b is not None and (b.baseline, b.current) != (m.baseline, m.current):
            m = m.model_copy(
                update={
                    "judge": f"{rubric}.{field}",
                    "judges": judges,
                    "without_judge": b,
                }
            )
        out.append(m)
    return out


def _stability_bounds(
    base: TargetEvaluation,
    cur: TargetEvaluation,
    common: set[str],
    bv: list[Verdict],
    cv: list[Verdict],
    lower: list[Verdict],
    upper: list[Verdict],
) -> dict[str, MetricDelta]:
    """pass@k and pass^k with each case's passes moved as the judge bound moves them."""
    a = _shifted_means(base, common, bv, lower)
    b = _shifted_means(cur, common, cv, upper)
    test = mcnemar(case_outcomes("strict_pass", lower), case_outcomes("strict_pass", upper))
    return {
        name: MetricDelta(
            metric=name,
            baseline=a[name],
            current=b[name],
            delta=_delta(a[name], b[name]),
            test=test,
        )
        for name in ("pass_at_k", "pass_hat_k")
    }


def _shifted_means(
    run: TargetEvaluation, cases: set[str], actual: list[Verdict], bound: list[Verdict]
) -> dict[str, float | None]:
    st = run.summary.stability
    if st is None:
        return {"pass_at_k": None, "pass_hat_k": None}
    shift: Counter[str] = Counter()
    for v, w in zip(actual, bound, strict=True):
        shift[v.case_id] += int(w.passed) - int(v.passed)
    at, hat = [], []
    for c in st.per_case:
        if c.case_id not in cases:
            continue
        n, kk = c.attempts, min(st.k, c.attempts)
        passes = min(n, max(0, c.passes + shift[c.case_id]))
        at.append(pass_at_k(n, passes, kk))
        hat.append(pass_hat_k(n, passes, kk))
    return {
        "pass_at_k": sum(at) / len(at) if at else None,
        "pass_hat_k": sum(hat) / len(hat) if hat else None,
    }


def judged_deltas(
    cur_run: Evaluation,
    base_target: str,
    cur_target: str,
    common: set[str],
    bj: RunJudges,
    cj: RunJudges,
) -> list[MetricDelta]:
    """The judge rubric figures the suite gates with a ``min`` threshold, baseline against
    this run, over the cases both runs scored: rates of true, from each record's first repeat."""
    sj = cur_run.suite.judge
    if sj is None:
        return []
    out = []
    for key, th in sj.thresholds.items():
        if th.min is None:
            continue
        rubric, _, field = key.partition(".")
        a, ua = _judged_outcomes(bj, "baseline", base_target, rubric, field, common)
        b, ub = _judged_outcomes(cj, "current", cur_target, rubric, field, common)
        if ua is None and ub is None:
            continue
        va, vb = _share(a), _share(b)
        out.append(
            MetricDelta(
                metric=key,
                baseline=va,
                current=vb,
                delta=_delta(va, vb),
                test=mcnemar(_per_case(a), _per_case(b)),
                judge=key,
                judges=[u for u in (ua, ub) if u is not None],
            )
        )
    return out


def _judged_outcomes(
    rj: RunJudges,
    run: Literal["baseline", "current"],
    target: str,
    rubric: str,
    field: str,
    cases: set[str],
) -> tuple[list[tuple[str, bool]], JudgeUsed | None]:
    mine = [
        j
        for j in rj.judgements
        if j.target == target and j.rubric == rubric and j.repeat == 0 and j.case_id in cases
    ]
    if not mine:
        return [], None
    used = rj.used(run, target, rubric)
    values = [
        (j.case_id, j.fields[field] is True)
        for j in mine
        if j.fingerprint == used.fingerprint and j.status == "ok" and j.fields and field in j.fields
    ]
    return values, used


def _share(values: list[tuple[str, bool]]) -> float | None:
    return sum(1 for _, v in values if v) / len(values) if values else None


def _per_case(values: list[tuple[str, bool]]) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for case, v in values:
        out[case] = out.get(case, True) and v
    return out
