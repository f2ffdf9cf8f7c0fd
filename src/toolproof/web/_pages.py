"""What the viewer's pages show, computed from opened runs. Pure: no HTTP here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from toolproof.gate import Comparison, compare_runs, fingerprint_warnings
from toolproof.report import RunView
from toolproof.report._htmlview import LABELS, CaseEntry, RateView, rate_view
from toolproof.stats import RATE_NAMES, Summary
from toolproof.web._index import RunIndex

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


@dataclass
class RunDiff:
    a: RunIndex
    b: RunIndex
    warnings: list[str]
    targets: list[TargetDiff] = field(default_factory=list)


_ORDER = {"newly failing": 0, "newly fixed": 1, "flaky": 2, "only in A": 3, "only in B": 4,
          "same": 5}


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


def run_diff(a: RunIndex, b: RunIndex) -> RunDiff:
    """Two runs compared target by target (paired as the gate pairs them)."""
    out = RunDiff(a, b, fingerprint_warnings(a.light, b.light))
    for c in compare_runs(a.light, b.light):
        ea = {e.case_id: e for e in a.view.entries if e.target == c.baseline_target}
        eb = {e.case_id: e for e in b.view.entries if e.target == c.target}
        sa, sb = a.light.targets[c.baseline_target].summary, b.light.targets[c.target].summary
        flaky = set(sa.stability.flaky if sa.stability else []) | set(
            sb.stability.flaky if sb.stability else []
        )
        cases = list(dict.fromkeys([*ea, *eb]))
        rows = []
        for case in cases:
            sa_, sb_ = _side(ea.get(case)), _side(eb.get(case))
            rows.append(DiffRow(case, sa_, sb_, _change(case, sa_, sb_, c, flaky)))
        rows.sort(key=lambda r: _ORDER[r.change])
        metrics = [
            (
                LABELS.get(m.metric, m.metric.replace("_", " ")),
                m.baseline,
                m.current,
                m.delta,
                m.test.p_value if m.test else None,
            )
            for m in c.metrics
        ]
        out.targets.append(TargetDiff(c, sorted(flaky), rows, metrics))
    return out


# -- trends -------------------------------------------------------------------


@dataclass(frozen=True)
class Chart:
    label: str
    width: int
    height: int
    line: str
    band: str
    dots: list[tuple[float, float, str]]
    points: list[tuple[str, RateView]]


@dataclass
class Trend:
    suite: str
    target: str
    runs: list[RunIndex]
    charts: list[Chart]


def _chart(label: str, points: list[tuple[str, RateView]], width: int = 560) -> Chart:
    height, pad, left = 140, 10, 44
    n = len(points)

    def x(i: int) -> float:
        return left + (width - left - pad) * (i / (n - 1) if n > 1 else 0.5)

    def y(v: float) -> float:
        return pad + (height - 2 * pad) * (1 - v)

    known = [(i, r) for i, (_, r) in enumerate(points) if r.value is not None]
    line = " ".join(f"{x(i):.1f},{y(r.value):.1f}" for i, r in known if r.value is not None)
    upper = [f"{x(i):.1f},{y(r.high):.1f}" for i, r in known if r.high is not None]
    lower = [f"{x(i):.1f},{y(r.low):.1f}" for i, r in reversed(known) if r.low is not None]
    dots = [
        (x(i), y(r.value), f"{points[i][0]}: {r.text} {r.interval}")
        for i, r in known
        if r.value is not None
    ]
    return Chart(label, width, height, line, " ".join(upper + lower), dots, points)


def trend(runs: list[RunIndex], suite: str, target: str) -> Trend:
    """Each rate metric of one suite and target over runs, oldest first, with intervals."""
    summaries: list[tuple[str, Summary]] = [
        (r.info.run_id, r.light.targets[target].summary) for r in runs
    ]
    charts = []
    for metric in (*RATE_NAMES, "reply"):
        pts = [(rid, rate_view(getattr(s, metric))) for rid, s in summaries]
        charts.append(_chart(LABELS[metric], pts))
    return Trend(suite, target, runs, charts)
