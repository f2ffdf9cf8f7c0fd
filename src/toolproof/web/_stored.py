"""The viewer over the history store: runs, figures and case rows from the store,
raw exchanges from the run folders the store points at.

Opening a run reads what the store already holds: the run, its targets'
summaries, its latest gate decision and one row per case and target, summed
over its attempts by the database. Nothing is graded to open a run. A case
page reads its attempts' rows a page at a time, and each attempt's raw record
from its line in the run folder's records file.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolproof.errors import UserError
from toolproof.report._htmlview import (
    AttemptView,
    CaseEntry,
    RateView,
    RunView,
    TargetView,
    attempt_view,
    summary_view,
)
from toolproof.stats import Summary

if TYPE_CHECKING:
    from toolproof.grade import Scorer
    from toolproof.store import AttemptRow, CaseRow, HistoryPoint, Page, RunDetail, RunRow, Store
    from toolproof.trust import Trust
    from toolproof.types import Case, Suite

_RISKS = ("critical", "high", "medium", "low")


@dataclass(frozen=True)
class StoredInfo:
    """A stored run as the pages name it: ``ref`` in links, ``run_id`` on screen."""

    ref: str
    run_id: str
    key: str
    folder: str | None
    suite: str
    stored_at: datetime | None


@dataclass
class StoredRun:
    """An opened stored run: what the run and case pages show."""

    info: StoredInfo
    view: RunView
    summaries: dict[str, Summary]
    detail: RunDetail
    cases: dict[str, Case]
    suite_note: str | None
    """Why contracts are not shown (the suite is not found from here), or None."""
    seconds: float
    """How long opening the run took."""
    suite: Suite | None = field(default=None, repr=False)


def _suite_source(detail: RunDetail) -> str | None:
    m = detail.manifest or {}
    source = m.get("suite_source")
    return source if isinstance(source, str) else None


def _gate_targets(result: dict[str, Any]) -> dict[str, tuple[bool, list[str]]]:
    out = {}
    for t in result.get("targets") or []:
        if not isinstance(t, dict) or not isinstance(t.get("target"), str):
            continue
        findings = [
            str(f.get("message", ""))
            for f in t.get("findings") or []
            if isinstance(f, dict) and f.get("blocking")
        ]
        out[t["target"]] = (bool(t.get("passed")), findings)
    return out


def _entries(
    rows: list[CaseRow],
    order: list[str],
    cases: dict[str, Case],
    summaries: dict[str, Summary],
) -> list[CaseEntry]:
    """Case rows as the case list shows them: by target, then in suite order."""
    position = {cid: i for i, cid in enumerate(cases)}
    rank = {t: i for i, t in enumerate(order)}
    far = 1 << 30

    def key(r: CaseRow) -> tuple[int, int, int, str]:
        return (rank.get(r.target, far), position.get(r.case_id, far), r.first_line or 0, r.case_id)

    phk: dict[tuple[str, str], float] = {}
    for target, s in summaries.items():
        for c in s.stability.per_case if s.stability else []:
            phk[(target, c.case_id)] = c.pass_hat_k
    out = []
    for r in sorted(rows, key=key):
        case = cases.get(r.case_id)
        risk = r.risk or (case.risk.value if case is not None and case.risk else "low")
        out.append(
            CaseEntry(
                case_id=r.case_id,
                target=r.target,
                risk=risk,
                tags=list(case.tags) if case is not None else list(r.tags),
                kind=r.kind or "",
                attempts=r.attempts,
                passes=r.passes,
                errors=r.attempts - r.scored,
                failures=r.failures,
                pass_hat_k=phk.get((r.target, r.case_id)),
                case=case,
            )
        )
    return out


def _fingerprint(run: RunRow) -> dict[str, str | int | None]:
    return {
        "suite name": run.suite_name,
        "suite version": run.suite_version,
        "suite fingerprint": run.suite_fingerprint,
        "tool schemas": run.tools_fingerprint,
        "system prompt": run.system_fingerprint,
        "repeats": run.repeats,
        "toolproof version": run.toolproof_version,
    }


class StoreSource:
    """The runs of a history store (``location``: as ``--store`` takes it).

    ``trust`` is what the runs' suites may do when they are loaded, for the
    contracts and the expected-against-actual diffs (default: the safe default).
    """

    def __init__(self, location: str, trust: Trust | None = None) -> None:
        self.location = location
        self.trust = trust
        self._local = threading.local()
        self._lock = threading.Lock()
        self._runs: dict[int, tuple[datetime | None, StoredRun]] = {}
        self._suites: dict[tuple[str, str], Suite | str] = {}
        self._scorers: dict[int, Scorer | None] = {}

    def store(self) -> Store:
        """This thread's connection to the store (SQLite connections stay in their thread)."""
        store: Store | None = getattr(self._local, "store", None)
        if store is None:
            from toolproof.store import open_store

            store = open_store(self.location)
            self._local.store = store
        return store

    # -- lists --------------------------------------------------------------------

    def runs(self, *, limit: int, offset: int) -> Page[RunRow]:
        return self.store().list_runs(limit=limit, offset=offset)

    def series(self) -> list[tuple[str, str]]:
        return self.store().series()

    def history(self, suite: str, target: str, last: int) -> list[HistoryPoint]:
        return self.store().history(suite, target, last=last)

    # -- one run ------------------------------------------------------------------

    def open(self, ref: str) -> StoredRun:
        """A stored run, opened from the store (cached until it is stored again).

        KeyError: no such run.
        """
        store = self.store()
        detail = store.get_run(ref) if ref else None
        if detail is None:
            raise KeyError(ref)
        pk = detail.run.id
        with self._lock:
            cached = self._runs.get(pk)
        if cached is not None and cached[0] == detail.run.stored_at:
            gate = detail.gates[-1].id if detail.gates else None
            opened = cached[1]
            if gate == (opened.detail.gates[-1].id if opened.detail.gates else None):
                return opened
        start = time.perf_counter()
        opened = self._open(store, detail)
        opened.seconds = time.perf_counter() - start
        with self._lock:
            self._runs[pk] = (detail.run.stored_at, opened)
        return opened

    def _suite(self, detail: RunDetail) -> tuple[Suite | None, str | None]:
        source = _suite_source(detail)
        if source is None:
            return None, "the run's manifest names no suite, so contracts are not shown"
        key = (source, detail.run.suite_fingerprint)
        with self._lock:
            known = self._suites.get(key)
        if known is None:
            known = self._load_suite(source, detail.run.suite_fingerprint)
            with self._lock:
                self._suites[key] = known
        if isinstance(known, str):
            return None, known
        return known, None

    def _load_suite(self, source: str, fingerprint: str) -> Suite | str:
        from toolproof.suite import load_suite
        from toolproof.trust import DEFAULT_TRUST

        if not Path(source).exists():
            return f"the run's suite {source} is not found here, so contracts are not shown"
        try:
            suite = load_suite(source, self.trust or DEFAULT_TRUST)
        except UserError as exc:
            return f"the run's suite could not be loaded, so contracts are not shown: {exc}"
        if suite.fingerprint() != fingerprint:
            return (
                f"the suite {source} has changed since the run, so contracts are not shown"
            )
        return suite

    def _open(self, store: Store, detail: RunDetail) -> StoredRun:
        run = detail.run
        suite, note = self._suite(detail)
        cases = {c.id: c for c in suite.cases} if suite is not None else {}
        summaries = {t.target: Summary.model_validate(t.summary) for t in detail.targets}
        order = [t.target for t in detail.targets]
        gate = detail.gates[-1] if detail.gates else None
        decided = _gate_targets(gate.result) if gate is not None else {}
        targets: list[TargetView] = []
        for name in order:
            tv = summary_view(name, summaries[name], store.latencies(run.id, name))
            if name in decided:
                tv.gate = "pass" if decided[name][0] else "fail"
                tv.gate_findings = decided[name][1]
            targets.append(tv)
        entries = _entries(store.cases(run.id), order, cases, summaries)
        view = RunView(
            title=run.run_id,
            suite=run.suite_name,
            source=run.folder,
            fingerprint=_fingerprint(run),
            started=run.started_at.isoformat() if run.started_at else None,
            targets=targets,
            entries=entries,
            failure_classes=sorted({f for e in entries for f in e.failures}),
            tags=sorted({t for e in entries for t in e.tags}),
            risks=[r for r in _RISKS if any(e.risk == r for e in entries)],
            gate=None if gate is None else ("pass" if gate.passed else "fail"),
        )
        info = StoredInfo(
            ref=str(run.id),
            run_id=run.run_id,
            key=run.key,
            folder=run.folder,
            suite=run.suite_name,
            stored_at=run.stored_at,
        )
        return StoredRun(info, view, summaries, detail, cases, note, 0.0, suite)

    # -- one case -----------------------------------------------------------------

    def attempts(
        self, run: StoredRun, case_id: str, target: str, *, offset: int, limit: int
    ) -> tuple[int, list[AttemptView]]:
        """A page of one case's attempts with their raw exchanges: (total, attempts)."""
        store = self.store()
        page = store.attempts(
            int(run.info.ref), target=target, case_id=case_id, offset=offset, limit=limit
        )
        return page.total, [self._attempt(run, a) for a in page.items]

    def _attempt(self, run: StoredRun, a: AttemptRow) -> AttemptView:
        from toolproof.store import Store
        from toolproof.types import Record

        raw = Store.read_raw(a)
        record = None
        if raw is not None:
            try:
                record = Record.model_validate(raw)
            except ValueError:
                record = None
        if record is None:
            where = f"{a.records_path}:{a.records_line}" if a.records_path else "the run folder"
            return AttemptView(
                target=a.target, attempt=a.attempt, outcome=a.outcome, passed=a.passed,
                failure=a.failure, reasons=_reasons(a), diff=[], calls=[], text=None,
                transcript=[], request="", response="", response_raw=False,
                error=f"the raw exchange is not found at {where}", latency_ms=a.latency_ms,
            )  # fmt: skip
        if record.target is None:
            record = record.model_copy(update={"target": a.target})
        view = attempt_view(record, None)
        view.passed, view.failure, view.reasons = a.passed, a.failure, _reasons(a)
        if a.passed is False:
            view.diff = self._diff(run, record, a)
        return view

    def _diff(self, run: StoredRun, record: Any, a: AttemptRow) -> list[Any]:
        """Expected against actual, from the suite's scorer, when it agrees with the store."""
        from toolproof.report._htmlview import readable_diff

        scorer = self._scorer(run)
        if scorer is None:
            return []
        try:
            verdict = scorer.grade(record)
        except Exception:  # a record the scorer refuses now: the stored reasons still show
            return []
        if verdict is None or verdict.passed or (verdict.failure or "") != (a.failure or ""):
            return []
        return readable_diff(scorer.diff(verdict))

    def _scorer(self, run: StoredRun) -> Scorer | None:
        suite = run.suite
        if suite is None:
            return None
        key = id(suite)
        with self._lock:
            if key in self._scorers:
                return self._scorers[key]
        from toolproof.grade import Scorer
        from toolproof.run import expected_states, load_checks
        from toolproof.trust import DEFAULT_TRUST

        trust = self.trust or DEFAULT_TRUST
        try:
            states = expected_states(suite, trust) if trust.allow_code else {}
            checks = load_checks(suite, allow_code=True) if trust.allow_code else None
            scorer: Scorer | None = Scorer(suite, states, checks)
        except Exception:  # the suite's own code failed: show the stored reasons only
            scorer = None
        with self._lock:
            self._scorers[key] = scorer
        return scorer


def _reasons(a: AttemptRow) -> list[str]:
    return [str(f.get("message", "")) for f in a.findings if f.get("failure")]


def metric_view(m: Any) -> RateView:
    """A stored metric as a rate with its interval."""
    if m is None or m.value is None:
        return RateView(0, 0, None, None, None)
    return RateView(m.k or 0, m.n or 0, m.value, m.low, m.high)
