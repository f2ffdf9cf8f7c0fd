"""What the viewer's one set of routes asks of where runs come from: :class:`Pages`,
with two implementations.

:class:`FolderPages` grades run folders (through a :class:`RunCache`, each run
once when first opened); :class:`StorePages` reads the history store (nothing
is graded to open a run). The routes in ``_app`` render the same templates
from either; what must differ (where a run is opened from, how its attempts are
read, how two runs are compared) is here, behind the same methods.

A page that cannot be shown is a :class:`PageError` (its status and message);
a run still being opened is :class:`Opening` (a page that reloads itself).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

from toolproof.errors import UserError
from toolproof.report._htmlview import CaseEntry, RateView, attempt_view, entry, rate_view
from toolproof.web._pages import (
    TREND_METRICS,
    Compared,
    Opened,
    Page,
    Trend,
    TrendPoint,
    graded_comparisons,
    paginate,
    stored_comparisons,
    trend,
)
from toolproof.web._run_index import RunCache, RunIndex
from toolproof.web._stored import StoredRun, StoreSource, metric_view

__all__ = [
    "ATTEMPTS_PER_PAGE",
    "CasePage",
    "FolderPages",
    "Opening",
    "PageError",
    "Pages",
    "RunLine",
    "RunRow",
    "RunsList",
    "StorePages",
]

ATTEMPTS_PER_PAGE = 20
T = TypeVar("T")


class PageError(Exception):
    """A page that cannot be shown: the status it answers with, and why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Opening(Exception):
    """The run is being opened (graded) still: the page reloads itself."""

    def __init__(self, run_id: str) -> None:
        super().__init__(run_id)
        self.run_id = run_id


async def blocking(fn: Callable[[], T]) -> T:
    """``fn`` in a worker thread: the event loop keeps serving other pages meanwhile."""
    return await asyncio.get_running_loop().run_in_executor(None, fn)


# -- the runs list ----------------------------------------------------------------


@dataclass(frozen=True)
class RunLine:
    """One target of a run in the runs list: its strict pass, and the gate's word on it."""

    target: str
    rate: RateView | None
    gate: str | None
    """pass or fail; None: the run was not gated."""


@dataclass(frozen=True)
class RunRow:
    """One run in the runs list."""

    ref: str
    """How links name the run."""
    name: str
    suite: str
    suite_version: str | None
    started: datetime | None
    status: str
    option: str
    """The run in the diff form's lists."""
    lines: list[RunLine]
    """One per target; none while a run folder is not opened (then ``note`` says why)."""
    shard: str | None = None
    note: str | None = None
    refused: bool = False
    """``note`` is why the run cannot be opened."""


@dataclass(frozen=True)
class RunsList:
    """The runs list: its rows, a page of them when the source pages, and the trends."""

    rows: list[RunRow]
    series: list[tuple[str, str]]
    empty: str
    """What the page says when there are no runs."""
    page: Page[RunRow] | None = None
    location: str | None = None
    """The history store the runs are from (None: run folders)."""


@dataclass(frozen=True)
class CasePage:
    """One case of one run: its row in the case list, what is shown, a page of attempts."""

    row: CaseEntry
    shown: CaseEntry
    page: Page[Any]


# -- the interface ----------------------------------------------------------------


class Pages(Protocol):
    """Where the viewer's runs come from, as its pages ask for them."""

    #: How a run page says where the run was opened from ("" or "from the store").
    opened: str
    #: Whether diffs are computed from stored case rows (the diff page says so).
    stored: bool

    async def runs(self, number: int, size: int) -> RunsList:
        """The runs list (``number``: the page asked for, when the source pages it)."""
        ...

    async def open(self, ref: str) -> Opened:
        """One run; PageError (404, 422) or Opening when it cannot be shown now."""
        ...

    def note(self, run: Opened) -> str | None:
        """What the run's pages warn of (contracts not shown, and why), or None."""
        ...

    async def texts(self, run: Opened, entries: list[CaseEntry]) -> list[CaseEntry]:
        """A page of case rows with what they show (prompt, contract, reason)."""
        ...

    async def case(self, run: Opened, case_id: str, target: str, number: int) -> CasePage:
        """One case's page of attempts; PageError 404 when the run has no such case."""
        ...

    def version(self, run: Opened) -> tuple[Any, ...]:
        """Changes when the run does: a cached diff of it is then stale."""
        ...

    def compare(self, a: Opened, b: Opened) -> tuple[list[str], list[Compared]]:
        """Two runs' warnings and target pairs compared (blocking: called in a thread)."""
        ...

    async def trend(self, suite: str, target: str, n: int) -> Trend | None:
        """The last ``n`` runs of a suite and target, oldest first; None when there are none."""
        ...


def _no_case(case_id: str, target: str) -> PageError:
    return PageError(404, f"no case '{case_id}' for target '{target}' in this run")


def _started(started: datetime | None) -> str:
    return started.strftime("%Y-%m-%d %H:%M") if started else ""


# -- run folders ------------------------------------------------------------------


class FolderPages:
    """Run folders, each graded once when first opened (``open_wait``: seconds a page
    waits for a run being opened before it answers with a page that reloads; 0 waits
    as long as it takes)."""

    opened = ""
    stored = False

    def __init__(self, cache: RunCache, open_wait: float = 0) -> None:
        self.cache = cache
        self.open_wait = open_wait

    async def runs(self, number: int, size: int) -> RunsList:
        infos = await blocking(self.cache.source.runs)
        rows: list[RunRow] = []
        series: set[tuple[str, str]] = set()
        for info in infos:
            idx = self.cache.peek(info)
            lines = []
            if isinstance(idx, RunIndex):
                lines = [RunLine(t.target, t.metrics[0][1], t.gate) for t in idx.view.targets]
                series |= {(info.suite, t) for t in idx.light.targets}
            note = idx if isinstance(idx, str) else None
            if idx is None:
                note = info.error or "not opened yet: open the run to compute its figures"
            rows.append(
                RunRow(
                    ref=info.run_id, name=info.run_id, suite=info.suite,
                    suite_version=info.suite_version, started=info.started, status=info.status,
                    option=info.run_id, lines=lines, note=note, refused=isinstance(idx, str),
                )
            )  # fmt: skip
        return RunsList(rows, sorted(series), "No run folders found.")

    async def open(self, ref: str) -> RunIndex:
        cache, wait = self.cache, self.open_wait
        if wait > 0 and cache.opening(ref):
            raise Opening(ref)
        future = asyncio.get_running_loop().run_in_executor(None, lambda: cache.get(ref))
        future.add_done_callback(lambda f: f.cancelled() or f.exception())
        try:
            if wait > 0:
                return await asyncio.wait_for(asyncio.shield(future), wait)
            return await future
        except TimeoutError:
            raise Opening(ref) from None
        except KeyError:
            raise PageError(404, f"no run '{ref}'") from None
        except UserError as exc:
            raise PageError(422, str(exc)) from None

    def note(self, run: Opened) -> str | None:
        return None

    async def texts(self, run: Opened, entries: list[CaseEntry]) -> list[CaseEntry]:
        return entries  # a graded run's rows carry their case

    async def case(self, run: Opened, case_id: str, target: str, number: int) -> CasePage:
        assert isinstance(run, RunIndex)
        index = run
        case = index.cases.get(case_id)
        row = next(
            (e for e in index.view.entries if e.case_id == case_id and e.target == target), None
        )
        if case is None or row is None:
            raise _no_case(case_id, target)
        keys = sorted(
            (k for k in index.offsets if k[0] == case_id and k[1] == target), key=lambda k: k[2]
        )
        page = paginate(keys, number, ATTEMPTS_PER_PAGE)
        pass_hat_k = row.pass_hat_k

        def load() -> CaseEntry:
            records = [index.record(k) for k in page.items]
            found = [r for r in records if r is not None]
            verdicts = [index.verdicts.get((r.case_id, target, r.attempt)) for r in found]
            shown = entry(case, target, found, verdicts, pass_hat_k, details=False)
            light = index.light
            said = [j for j in light.judgements if j.target == target and j.case_id == case_id]
            shown.details = [
                attempt_view(
                    r,
                    v,
                    diff=light.diff,
                    judgements=[j for j in said if j.attempt == r.attempt],
                    case=case,
                )
                for r, v in zip(found, verdicts, strict=True)
            ]
            return shown

        return CasePage(row, await blocking(load), page)

    def version(self, run: Opened) -> tuple[Any, ...]:
        assert isinstance(run, RunIndex)
        return (run.info.run_id, run.info.version)

    def compare(self, a: Opened, b: Opened) -> tuple[list[str], list[Compared]]:
        assert isinstance(a, RunIndex) and isinstance(b, RunIndex)
        return graded_comparisons(a, b)

    async def trend(self, suite: str, target: str, n: int) -> Trend | None:
        cache = self.cache

        def load() -> list[RunIndex]:
            out = []
            for info in cache.source.runs():
                if info.suite != suite or (info.targets and target not in info.targets):
                    continue
                try:
                    idx = cache.get(info.run_id)
                except (KeyError, UserError):
                    continue
                if target in idx.light.targets:
                    out.append(idx)
                if len(out) >= n:
                    break
            return list(reversed(out))

        runs = await blocking(load)
        if not runs:
            return None
        points = []
        for r in runs:
            summary = r.light.targets[target].summary
            rates = {m: rate_view(getattr(summary, m)) for m in TREND_METRICS}
            points.append(TrendPoint(r.info.run_id, r.info.run_id, r.info.started, rates))
        return trend(points, suite, target)


# -- the history store ------------------------------------------------------------


class StorePages:
    """The runs of a history store: figures, case rows and gate decisions as stored."""

    opened = "from the store"
    stored = True

    def __init__(self, source: StoreSource) -> None:
        self.source = source

    async def runs(self, number: int, size: int) -> RunsList:
        source = self.source
        number = max(1, number)

        def load() -> tuple[Any, list[tuple[str, str]]]:
            return source.runs(limit=size, offset=(number - 1) * size), source.series()

        try:
            got, series = await blocking(load)
        except UserError as exc:
            raise PageError(422, str(exc)) from None
        rows = [_stored_row(r) for r in got.items]
        page = Page(rows, number, max(1, -(-got.total // size)), got.total, size)
        location = _shown_location(source.store().location)
        return RunsList(rows, series, "No runs in the store yet.", page, location)

    async def open(self, ref: str) -> StoredRun:
        source = self.source
        try:
            return await blocking(lambda: source.open(ref))
        except KeyError:
            raise PageError(404, f"no run '{ref}' in the store") from None
        except UserError as exc:
            raise PageError(422, str(exc)) from None

    def note(self, run: Opened) -> str | None:
        assert isinstance(run, StoredRun)
        return run.suite_note

    async def texts(self, run: Opened, entries: list[CaseEntry]) -> list[CaseEntry]:
        assert isinstance(run, StoredRun)
        stored = run
        return await blocking(lambda: self.source.with_texts(stored, entries))

    async def case(self, run: Opened, case_id: str, target: str, number: int) -> CasePage:
        assert isinstance(run, StoredRun)
        stored = run
        row = next(
            (e for e in stored.view.entries if e.case_id == case_id and e.target == target), None
        )
        if row is None:
            raise _no_case(case_id, target)
        pages = max(1, -(-row.attempts // ATTEMPTS_PER_PAGE))
        number = min(max(1, number), pages)
        offset = (number - 1) * ATTEMPTS_PER_PAGE
        total, attempts = await blocking(
            lambda: self.source.attempts(
                stored, case_id, target, offset=offset, limit=ATTEMPTS_PER_PAGE
            )
        )
        page = Page(
            attempts, number, max(1, -(-total // ATTEMPTS_PER_PAGE)), total, ATTEMPTS_PER_PAGE
        )
        (texted,) = await self.texts(stored, [row])
        return CasePage(row, replace(texted, details=attempts), page)

    def version(self, run: Opened) -> tuple[Any, ...]:
        assert isinstance(run, StoredRun)
        return (run.info.ref, run.info.stored_at)

    def compare(self, a: Opened, b: Opened) -> tuple[list[str], list[Compared]]:
        assert isinstance(a, StoredRun) and isinstance(b, StoredRun)
        return stored_comparisons(a, b, self.source.suite_of)

    async def trend(self, suite: str, target: str, n: int) -> Trend | None:
        history = await blocking(lambda: self.source.history(suite, target, n))
        if not history:
            return None
        points = [
            TrendPoint(
                str(p.run_pk),
                p.run_id,
                p.started_at,
                {m: metric_view(p.metrics.get(m)) for m in TREND_METRICS},
            )
            for p in history
        ]
        return trend(points, suite, target)


def _stored_row(r: Any) -> RunRow:
    """A stored run in the runs list (one line per target; a run without targets has one)."""
    if r.gate is None:
        gates: dict[str, str | None] = {}
    else:
        gates = {t: "pass" if r.gate.targets.get(t, r.gate.passed) else "fail" for t in r.targets}
        gates[""] = "pass" if r.gate.passed else "fail"
    lines = [RunLine(t, metric_view(r.headline.get(t)), gates.get(t)) for t in (r.targets or [""])]
    status = (r.status or "–") + (f" · exit {r.exit_code}" if r.exit_code is not None else "")
    return RunRow(
        ref=str(r.id),
        name=r.run_id,
        suite=r.suite_name,
        suite_version=r.suite_version,
        started=r.started_at,
        status=status,
        option=f"{r.run_id} · {_started(r.started_at) or r.id}",
        lines=lines,
        shard=r.shard,
    )


def _shown_location(location: str) -> str:
    """A PostgreSQL store by its URL (without password), a SQLite store by its file name."""
    return location if "://" in location else Path(location).name
