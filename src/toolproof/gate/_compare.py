"""Compare a run with a baseline: metric deltas, changed cases, paired significance."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from toolproof.evaluate import Evaluation, TargetEvaluation
from toolproof.gate._metrics import case_outcomes, metric_rate, unsafe_calls
from toolproof.stats import Rate
from toolproof.stats._metrics import RATE_NAMES
from toolproof.types import Risk, Verdict

#: Rate metrics compared (and gated on drops), in report order.
COMPARED = RATE_NAMES


class McNemar(BaseModel):
    """Exact McNemar test on paired per-case outcomes (two-sided binomial on discordant pairs)."""

    model_config = ConfigDict(extra="forbid")

    worse: int
    better: int
    p_value: float


class MetricDelta(BaseModel):
    model_config = ConfigDict(extra="forbid")

    metric: str
    baseline: float | None
    current: float | None
    delta: float | None
    test: McNemar | None = None


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
    values = [getattr(c, attr) for c in st.per_case if c.case_id in cases] if st else []
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
    base: TargetEvaluation, cur: TargetEvaluation, warnings: list[str] | None = None
) -> Comparison:
    """Deltas, changed cases and the per-risk table for one pair of targets.

    Figures are compared over the cases both runs scored, so a smoke run can be
    compared with a full baseline; a case only the new run has can still be a
    new critical failure.
    """
    common = {v.case_id for v in base.verdicts} & {v.case_id for v in cur.verdicts}
    bv = [v for v in base.verdicts if v.case_id in common]
    cv = [v for v in cur.verdicts if v.case_id in common]
    a, b = case_outcomes("strict_pass", bv), case_outcomes("strict_pass", cv)
    every = case_outcomes("strict_pass", cur.verdicts)
    risk_of = {v.case_id: v.risk for v in cur.verdicts}
    new_critical = [
        c for c, ok in every.items() if not ok and a.get(c, True) and risk_of[c] is Risk.critical
    ]
    return Comparison(
        baseline_target=base.target,
        target=cur.target,
        metrics=[_metric(m, bv, cv) for m in COMPARED]
        + _stability_deltas(base, cur, common, mcnemar(a, b)),
        counts={
            "unsafe_calls": (unsafe_calls(bv), unsafe_calls(cv)),
            "forbidden_calls": (
                sum(len(v.forbidden_called) for v in bv),
                sum(len(v.forbidden_called) for v in cv),
            ),
        },
        newly_failing=sorted(c for c in common if a[c] and not b[c]),
        newly_fixed=sorted(c for c in common if b[c] and not a[c]),
        new_critical_failures=sorted(new_critical),
        by_risk=_by_risk(bv, cv),
        warnings=list(warnings or []),
    )


def fingerprint_warnings(base: Evaluation, cur: Evaluation) -> list[str]:
    """What differs between the runs besides the targets and their settings."""
    fa, fb = base.fingerprint(), cur.fingerprint()
    unknown_ok = {"toolproof version"}  # not known for a bare records file
    out = [
        f"{key} differs: {fa[key] or 'none'} (baseline) vs {fb[key] or 'none'}"
        for key in fa
        if fa[key] != fb[key] and not (key in unknown_ok and (fa[key] is None or fb[key] is None))
    ]
    ca = {r.case_id for t in base.targets.values() for r in t.records}
    cb = {r.case_id for t in cur.targets.values() for r in t.records}
    if ca != cb:
        out.append(
            f"case sets differ: {len(ca - cb)} only in the baseline, "
            f"{len(cb - ca)} only in this run"
        )
    return out


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
    return [compare_targets(a, b, warnings) for a, b in pair_targets(base, cur)]
