"""What the viewer's pages show, computed from opened runs. Pure: no HTTP here."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Generic, TypeVar

from toolproof.errors import UserError
from toolproof.gate import (
    Comparison,
    compare_runs,
    fingerprint_differences,
    fingerprint_warnings,
)
from toolproof.gate._compare import McNemar, MetricDelta, changed_cases, mcnemar
from toolproof.report import RunView
from toolproof.report._escape import visible
from toolproof.report._htmlview import LABELS, CaseEntry, RateView
from toolproof.report._judged import comparison_legend, marked
from toolproof.stats import RATE_NAMES, Summary
from toolproof.web._run_index import RunIndex
from toolproof.web._stored import StoredRun, metric_view

if TYPE_CHECKING:
    from toolproof.types import Suite

T = TypeVar("T")
FILTERS = ("failure", "tag", "risk", "target", "status")


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    page: int
    pages: int
    total: int
    size: int

    @property
    def first(self) -> int:
        return (self.page - 1) * self.size + 1 if self.total else 0

    @property
    def last(self) -> int:
        return min(self.page * self.size, self.total)


def paginate(items: Sequence[T], page: int, size: int) -> Page[T]:
    pages = max(1, -(-len(items) // size))
    page = min(max(1, page), pages)
    start = (page - 1) * size
    return Page(list(items[start : start + size]), page, pages, len(items), size)


def filter_entries(view: RunView, params: Mapping[str, str]) -> list[CaseEntry]:
    """The case list narrowed by failure class, tag, risk, target and outcome."""
    f, tag, risk = params.get("failure"), params.get("tag"), params.get("risk")
    target, status = params.get("target"), params.get("status")
    return [
        e
        for e in view.entries
        if (not f or f in e.failures)
        and (not tag or tag in e.tags)
        and (not risk or e.risk == risk)
        and (not target or e.target == target)
        and (not status or e.status == status)
    ]


# -- diff ---------------------------------------------------------------------


@dataclass(frozen=True)
class Side:
    status: str
    passes: int
    attempts: int
    failures: list[str]


@dataclass(frozen=True)
class DiffRow:
    case_id: str
    a: Side | None
    b: Side | None
    change: str
    """newly failing, newly fixed, flaky, only in A, only in B, same"""


@dataclass
class TargetDiff:
    comparison: Comparison
    flaky: list[str]
    rows: list[DiffRow]
    metrics: list[tuple[str, float | None, float | None, float | None, float | None]]
    """(label, A, B, delta, McNemar p)"""
    legend: list[str] = field(default_factory=list)
    """What ⚖ means on the rows a judge's answers decide."""


#: An opened run: graded from its folder, or read from the store.
Opened = RunIndex | StoredRun


@dataclass
class RunDiff:
    a: Opened
    b: Opened
    warnings: list[str]
    targets: list[TargetDiff] = field(default_factory=list)


_ORDER = {
    "newly failing": 0,
    "newly fixed": 1,
    "flaky": 2,
    "only in A": 3,
    "only in B": 4,
    "same": 5,
}


def _side(e: CaseEntry | None) -> Side | None:
    if e is None:
        return None
    return Side(e.status, e.passes, e.attempts - e.errors, e.failures)


def _change(case: str, a: Side | None, b: Side | None, c: Comparison, flaky: set[str]) -> str:
    if case in c.newly_failing:
        return "newly failing"
    if case in c.newly_fixed:
        return "newly fixed"
    if case in flaky:
        return "flaky"
    if b is None:
        return "only in A"
    if a is None:
        return "only in B"
    return "same"


#: One target pair of two runs compared: the comparison, and each run's summary of its target.
Compared = tuple[Comparison, Summary, Summary]


def run_diff(a: Opened, b: Opened, warnings: list[str], compared: list[Compared]) -> RunDiff:
    """Two runs compared target by target: rows from each run's case list, newly failing
    first, and the metric deltas of each pair (``compared``, as the run's source pairs them)."""
    out = RunDiff(a, b, warnings)
    for c, sa, sb in compared:
        ea = {e.case_id: e for e in a.view.entries if e.target == c.baseline_target}
        eb = {e.case_id: e for e in b.view.entries if e.target == c.target}
        out.targets.append(_target_diff(c, ea, eb, sa, sb))
    return out


def graded_comparisons(a: RunIndex, b: RunIndex) -> tuple[list[str], list[Compared]]:
    """Two graded runs paired and compared as the gate compares them, with its warnings."""
    compared = [
        (c, a.light.targets[c.baseline_target].summary, b.light.targets[c.target].summary)
        for c in compare_runs(a.light, b.light)
    ]
    return fingerprint_warnings(a.light, b.light), compared


def _target_diff(
    c: Comparison, ea: dict[str, CaseEntry], eb: dict[str, CaseEntry], sa: Summary, sb: Summary
) -> TargetDiff:
    """One target pair's rows (newly failing first) and metric deltas."""
    flaky = set(sa.stability.flaky if sa.stability else []) | set(
        sb.stability.flaky if sb.stability else []
    )
    rows = []
    for case in dict.fromkeys([*ea, *eb]):
        side_a, side_b = _side(ea.get(case)), _side(eb.get(case))
        rows.append(DiffRow(case, side_a, side_b, _change(case, side_a, side_b, c, flaky)))
    rows.sort(key=lambda r: _ORDER[r.change])
    metrics = [
        (
            marked(LABELS.get(m.metric, m.metric.replace("_", " ")), m.judge is not None),
            m.baseline,
            m.current,
            m.delta,
            m.test.p_value if m.test else None,
        )
        for m in [*c.metrics, *c.judged]
    ]
    legend = [visible(line) for line in comparison_legend(c)]
    return TargetDiff(c, sorted(flaky), rows, metrics, legend)


def _pairs(a: StoredRun, b: StoredRun) -> list[tuple[str, str]]:
    ta, tb = list(a.summaries), list(b.summaries)
    if len(ta) == 1 and len(tb) == 1:
        return [(ta[0], tb[0])]
    pairs = [(t, t) for t in tb if t in ta]
    if not pairs:
        raise UserError(f"cannot pair targets: A has {sorted(ta)}, B has {sorted(tb)}")
    return pairs


def _stored_warnings(a: StoredRun, b: StoredRun, suites: SuitesOf | None) -> list[str]:
    """What `compare` warns of, from what the store holds; when the tools differ, the
    runs' suites (``suites``) tell whether the rest of the suite does too."""
    fa = {k: v for k, v in a.view.fingerprint.items() if k != "toolproof version"}
    fb = b.view.fingerprint
    same = None
    tools = any(fa.get(k) != fb.get(k) for k in ("tools from", "tool schemas"))
    if tools and fa.get("suite fingerprint") != fb.get("suite fingerprint") and suites:
        sa, sb = suites(a), suites(b)
        if sa is not None and sb is not None:
            same = sa.fingerprint(tools=False) == sb.fingerprint(tools=False)
    out = fingerprint_differences(fa, fb, ("A", "B"), rest_same=same)
    ca, cb = {e.case_id for e in a.view.entries}, {e.case_id for e in b.view.entries}
    if ca != cb:
        out.append(f"case sets differ: {len(ca - cb)} only in A, {len(cb - ca)} only in B")
    return out


def _stored_comparison(
    ta: str, tb: str, ea: dict[str, CaseEntry], eb: dict[str, CaseEntry], a: Summary, b: Summary
) -> Comparison:
    """Strict pass over the cases both runs scored, paired case by case (McNemar);
    the other rates as each run stored them."""
    scored_a = {c for c, e in ea.items() if e.attempts > e.errors}
    scored_b = {c for c, e in eb.items() if e.attempts > e.errors}
    common = scored_a & scored_b
    oa = {c: ea[c].passes == ea[c].attempts - ea[c].errors for c in common}
    ob = {c: eb[c].passes == eb[c].attempts - eb[c].errors for c in common}

    def strict(es: dict[str, CaseEntry]) -> float | None:
        n = sum(es[c].attempts - es[c].errors for c in common)
        return sum(es[c].passes for c in common) / n if n else None

    sa, sb = strict(ea), strict(eb)
    test: McNemar | None = mcnemar(oa, ob) if common else None
    metrics = [
        MetricDelta(
            metric="strict_pass",
            baseline=sa,
            current=sb,
            delta=None if sa is None or sb is None else sb - sa,
            test=test,
        )
    ]
    for name in (*RATE_NAMES[1:], "reply"):
        va, vb = metric_view(getattr(a, name)).value, metric_view(getattr(b, name)).value
        delta = None if va is None or vb is None else vb - va
        metrics.append(MetricDelta(metric=name, baseline=va, current=vb, delta=delta))
    # (as the gate reads them: a case passes when every scored attempt passed)
    now = {c: e.passes == e.attempts - e.errors for c, e in eb.items() if c in scored_b}
    critical = {c for c, e in eb.items() if e.risk == "critical"}
    failing, fixed, new_critical = changed_cases(oa, ob, now, critical)
    return Comparison(
        baseline_target=ta,
        target=tb,
        metrics=metrics,
        counts={
            "unsafe_calls": (a.unsafe_calls, b.unsafe_calls),
            "forbidden_calls": (a.forbidden_calls, b.forbidden_calls),
        },
        newly_failing=failing,
        newly_fixed=fixed,
        new_critical_failures=new_critical,
        by_risk=[],
        warnings=[],
    )


#: A stored run's suite, as it was run (None: it cannot be loaded).
SuitesOf = Callable[[StoredRun], "Suite | None"]


def stored_comparisons(
    a: StoredRun, b: StoredRun, suites: SuitesOf | None = None
) -> tuple[list[str], list[Compared]]:
    """Two stored runs paired and compared from their stored case rows and figures
    (``suites``: loads a run's suite, asked only when the runs' tools differ)."""
    compared = []
    for ta, tb in _pairs(a, b):
        ea = {e.case_id: e for e in a.view.entries if e.target == ta}
        eb = {e.case_id: e for e in b.view.entries if e.target == tb}
        sa, sb = a.summaries[ta], b.summaries[tb]
        compared.append((_stored_comparison(ta, tb, ea, eb, sa, sb), sa, sb))
    return _stored_warnings(a, b, suites), compared


# -- trends -------------------------------------------------------------------


@dataclass(frozen=True)
class Chart:
    label: str
    width: int
    height: int
    line: str
    band: str
    dots: list[tuple[float, float, str]]
    points: list[tuple[str, str, RateView]]
    """(run reference for links, run name, rate)"""
    ticks: list[tuple[float, str, str]] = field(default_factory=list)
    """The x axis's labels: (x, text-anchor, label: the run's start, else its name)."""

    @property
    def svg_height(self) -> int:
        """The plot and, under it, the x axis's labels."""
        return self.height + (16 if self.ticks else 0)


@dataclass(frozen=True)
class TrendPoint:
    """One run on a trend: how links name it, its name, when it started, its rates."""

    ref: str
    name: str
    started: datetime | None
    rates: dict[str, RateView]


@dataclass
class Trend:
    suite: str
    target: str
    runs: list[TrendPoint]
    charts: list[Chart]


#: At most this many labels on a chart's x axis (the first, the last, evenly between).
_MAX_TICKS = 6


def _ticks(n: int, x: Callable[[int], float], names: Sequence[str]) -> list[tuple[float, str, str]]:
    if n == 0:
        return []
    step = max(1, -(-(n - 1) // (_MAX_TICKS - 1))) if n > 1 else 1
    chosen = sorted({*range(0, n, step), n - 1})
    if len(chosen) > 1 and chosen[-1] - chosen[-2] < step:  # keep the last, drop a crowded one
        chosen.pop(-2)
    out = []
    for i in chosen:
        anchor = "start" if i == 0 and n > 1 else "end" if i == n - 1 and n > 1 else "middle"
        name = names[i] if len(names[i]) <= 14 else names[i][:13] + "…"
        out.append((x(i), anchor, name))
    return out


def _when(started: datetime | None, name: str) -> str:
    """A run's label on an x axis: when it started (UTC), else its name."""
    if started is None:
        return name
    return started.astimezone(UTC).strftime("%m-%d %H:%M")


def _chart(
    label: str,
    points: list[tuple[str, str, RateView]],
    width: int = 560,
    axis: Sequence[str] | None = None,
) -> Chart:
    """``axis``: each point's x-axis label (default: the run names)."""
    height, pad, left = 140, 10, 44
    n = len(points)

    def x(i: int) -> float:
        return left + (width - left - pad) * (i / (n - 1) if n > 1 else 0.5)

    def y(v: float) -> float:
        return pad + (height - 2 * pad) * (1 - v)

    known = [(i, r) for i, (_, _, r) in enumerate(points) if r.value is not None]
    line = " ".join(f"{x(i):.1f},{y(r.value):.1f}" for i, r in known if r.value is not None)
    upper = [f"{x(i):.1f},{y(r.high):.1f}" for i, r in known if r.high is not None]
    lower = [f"{x(i):.1f},{y(r.low):.1f}" for i, r in reversed(known) if r.low is not None]
    dots = [
        (x(i), y(r.value), f"{points[i][1]}: {r.text} {r.interval}")
        for i, r in known
        if r.value is not None
    ]
    names = list(axis) if axis is not None else [p[1] for p in points]
    ticks = _ticks(n, x, names)
    return Chart(label, width, height, line, " ".join(upper + lower), dots, points, ticks)


#: The metrics a trend charts: each rate, and the reply rate.
TREND_METRICS = (*RATE_NAMES, "reply")


def trend(points: list[TrendPoint], suite: str, target: str) -> Trend:
    """Each rate metric of one suite and target over runs, oldest first, with intervals."""
    axis = [_when(p.started, p.name) for p in points]
    charts = []
    for metric in TREND_METRICS:
        pts = [(p.ref, p.name, p.rates[metric]) for p in points]
        charts.append(_chart(LABELS[metric], pts, axis=axis))
    return Trend(suite, target, points, charts)
