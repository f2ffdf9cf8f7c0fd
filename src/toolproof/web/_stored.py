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
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolproof.errors import UserError
from toolproof.report._htmlview import (
    AttemptView,
    CaseEntry,
    RateView,
    RunView,
    StabilityRow,
    TargetView,
    attempt_view,
    readable_diff,
    summary_view,
)
from toolproof.stats import Summary
from toolproof.stats._latency import Bar, Histogram

if TYPE_CHECKING:
    from toolproof.grade import Scorer
    from toolproof.store import AttemptRow, CaseRow, HistoryPoint, Page, RunDetail, RunRow, Store
    from toolproof.trust import Trust
    from toolproof.types import Case, Suite, Verdict

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
    lines: dict[tuple[str, str], int] = {}
    phk: dict[tuple[str, str], float] = {}
    for target, s in summaries.items():
        for c in s.stability.per_case if s.stability else []:
            phk[(target, c.case_id)] = c.pass_hat_k
    out = []
    for r in rows:
        case = cases.get(r.case_id)
        risk = r.risk or (case.risk.value if case is not None and case.risk else "low")
        out.append(
            CaseEntry(
                case_id=r.case_id,
                target=r.target,
                risk=risk,
                tags=list(r.tags) or _tags(case),
                kind=r.kind or "",
                attempts=r.attempts,
                passes=r.passes,
                errors=r.attempts - r.scored,
                failures=r.failures,
                pass_hat_k=(
                    r.pass_hat_k if r.position is not None else phk.get((r.target, r.case_id))
                ),
                case=case,
            )
        )
        lines[(r.target, r.case_id)] = r.position if r.position is not None else r.first_line or 0
    return _ordered(out, order, cases, lines)


def _ordered(
    entries: list[CaseEntry],
    order: list[str],
    cases: dict[str, Case],
    lines: dict[tuple[str, str], int] | None = None,
) -> list[CaseEntry]:
    """By target, then in suite order (without the suite: in the order they were run)."""
    position = {cid: i for i, cid in enumerate(cases)}
    rank = {t: i for i, t in enumerate(order)}
    far = 1 << 30
    if lines is None:
        lines = {(e.target, e.case_id): i for i, e in enumerate(entries)}

    def key(e: CaseEntry) -> tuple[int, int, int, str]:
        return (
            rank.get(e.target, far),
            position.get(e.case_id, far),
            lines.get((e.target, e.case_id), 0) if lines else 0,
            e.case_id,
        )

    return sorted(entries, key=key)


def _fingerprint(detail: RunDetail) -> dict[str, str | int | None]:
    """What the run was measured against, as ``Evaluation.fingerprint`` says it."""
    run = detail.run
    tools = (detail.manifest or {}).get("tools_source")
    return {
        "suite name": run.suite_name,
        "suite version": run.suite_version,
        "suite fingerprint": run.suite_fingerprint,
        "tool schemas": run.tools_fingerprint,
        "tools from": "the suite" if not isinstance(tools, str) else f"--tools {tools}",
        "system prompt": run.system_fingerprint,
        "repeats": run.repeats,
        "toolproof version": run.toolproof_version,
    }


class StoreSource:
    """The runs of a history store (``location``: as ``--store`` takes it).

    ``trust`` is what the runs' suites may do when they are loaded, for the
    contracts and the expected-against-actual diffs (default: the safe default).
    A run's figures and case rows need no suite; its contracts do. With
    ``suites_in_background`` (what ``toolproof view`` does) a run opens at once
    and its suite is loaded in a thread: until it is, pages say so and show no
    contracts. Without, opening a run loads its suite first.
    """

    def __init__(
        self, location: str, trust: Trust | None = None, *, suites_in_background: bool = False
    ) -> None:
        self.location = location
        self.trust = trust
        self.background = suites_in_background
        self._local = threading.local()
        self._lock = threading.Lock()
        self._runs: dict[int, tuple[Any, StoredRun]] = {}
        self._suites: dict[tuple[str, str, str], Suite | str | None] = {}
        """Loaded suites, why one could not be, or None while it is being loaded."""
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
        version = store.run_version(ref) if ref else None
        if version is None:
            raise KeyError(ref)
        pk = version[0]
        with self._lock:
            cached = self._runs.get(pk)
        if cached is not None and cached[0] == version:
            return cached[1]
        start = time.perf_counter()
        detail = store.get_run(pk, light=True)
        if detail is None:
            raise KeyError(ref)
        opened = self._open(store, detail)
        opened.seconds = time.perf_counter() - start
        with self._lock:
            self._runs[pk] = (version, opened)
        self._attach(opened)  # the suite may have been loaded meanwhile
        return opened

    def _suite(self, detail: RunDetail) -> tuple[Suite | None, str | None]:
        """The run's suite, or None and why the contracts are not shown."""
        source = _suite_source(detail)
        if source is None:
            return None, "the run's manifest names no suite, so contracts are not shown"
        key = _suite_key(source, detail)
        with self._lock:
            loading = key in self._suites
            known = self._suites.get(key)
            if not loading:
                self._suites[key] = None
        if not loading:
            if self.background:
                threading.Thread(target=self._load, args=(key,), daemon=True).start()
                return None, f"loading the suite {source}: reload for the contracts"
            known = self._load(key)
        if known is None:
            return None, f"loading the suite {source}: reload for the contracts"
        if isinstance(known, str):
            return None, known
        return known, None

    def suite_of(self, run: StoredRun) -> Suite | None:
        """The run's suite as it was run, loaded now if need be (None: it cannot be)."""
        if run.suite is not None:
            return run.suite
        source = _suite_source(run.detail)
        if source is None:
            return None
        key = _suite_key(source, run.detail)
        with self._lock:
            known = self._suites.get(key)
        if known is None:
            known = self._load(key)
        return None if isinstance(known, str) else known

    def _load(self, key: tuple[str, str, str]) -> Suite | str:
        loaded = _load_suite(*key, self.trust)
        with self._lock:
            self._suites[key] = loaded
            runs = [run for _, run in self._runs.values()]
        for run in runs:
            self._attach(run)
        return loaded

    def _attach(self, run: StoredRun) -> None:
        """Give an opened run its suite, once loaded: contracts, and the suite's case order."""
        if run.suite is not None:
            return
        source = _suite_source(run.detail)
        if source is None:
            return
        with self._lock:
            known = self._suites.get(_suite_key(source, run.detail))
        if known is None:
            return
        if isinstance(known, str):
            run.suite_note = known
            return
        cases = {c.id: c for c in known.cases}
        entries = [
            replace(e, case=cases.get(e.case_id), tags=e.tags or _tags(cases.get(e.case_id)))
            for e in run.view.entries
        ]
        run.cases, run.suite = cases, known
        run.view.entries = _ordered(entries, list(run.summaries), cases)
        run.suite_note = None

    def _open(self, store: Store, detail: RunDetail) -> StoredRun:
        run = detail.run
        rows = store.cases(run.id)
        # Stored since schema version 3: per-case results, the suite's case texts and the
        # latency histogram. Then opening a run needs neither the suite nor the attempts.
        full = bool(rows) and rows[0].position is not None
        suite, note = (None, None) if full else self._suite(detail)
        cases = {c.id: c for c in suite.cases} if suite is not None else {}
        summaries = {t.target: _summary(t.summary, light=full) for t in detail.targets}
        order = [t.target for t in detail.targets]
        gate = detail.gates[-1] if detail.gates else None
        decided = _gate_targets(gate.result) if gate is not None else {}
        targets: list[TargetView] = []
        for t in detail.targets:
            name = t.target
            if full:
                tv = summary_view(name, summaries[name], [])
                tv.latency = _histogram(t.latency_histogram)
                tv.stability = [
                    StabilityRow(r.case_id, r.scored, r.passes, r.pass_at_k, r.pass_hat_k,
                                 bool(r.flaky))
                    for r in rows
                    if r.target == name and r.pass_at_k is not None and r.pass_hat_k is not None
                ]  # fmt: skip
            else:
                tv = summary_view(name, summaries[name], store.latencies(run.id, name))
            if name in decided:
                tv.gate = "pass" if decided[name][0] else "fail"
                tv.gate_findings = decided[name][1]
            targets.append(tv)
        entries = _entries(rows, order, cases, summaries)
        view = RunView(
            title=run.run_id,
            suite=run.suite_name,
            source=run.folder,
            fingerprint=_fingerprint(detail),
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

    def with_texts(self, run: StoredRun, entries: list[CaseEntry]) -> list[CaseEntry]:
        """Entries with their prompt, contract and reason (from the store, where the run's
        suite has no case loaded): what a page of them shows."""
        wanted = [e.case_id for e in entries if e.case is None and e.texts is None]
        if not wanted:
            return entries
        texts = self.store().case_texts(run.detail.run.suite_fingerprint, wanted)
        return [
            replace(e, texts=texts[e.case_id])
            if e.case is None and e.texts is None and e.case_id in texts
            else e
            for e in entries
        ]

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
        from toolproof.records._steps import expand_requests
        from toolproof.store import Store
        from toolproof.types import Record

        raw = Store.read_raw(a)
        record, view, problem = None, None, "is not found"
        if raw is not None:
            try:
                if isinstance(raw, dict):  # requests stored as deltas: whole again
                    raw = dict(raw)
                    expand_requests(raw, raw.get("format", "toolproof.record/3"))
                record = Record.model_validate(raw)
                if record.target is None:
                    record = record.model_copy(update={"target": a.target})
                problem = "cannot be shown (nested too deeply or of the wrong shape)"
                view = attempt_view(record, None)
            except (ValueError, TypeError, RecursionError):  # BadSteps too; untrusted lines
                view = None
        if record is None or view is None:
            where = f"{a.records_path}:{a.records_line}" if a.records_path else "the run folder"
            return AttemptView(
                target=a.target, attempt=a.attempt, outcome=a.outcome, passed=a.passed,
                failure=a.failure, reasons=_reasons(a), diff=[], calls=[], text=None,
                transcript=[], request="", response="", response_raw=False,
                error=f"the raw exchange {problem} at {where}", latency_ms=a.latency_ms,
            )  # fmt: skip
        view.passed, view.failure, view.reasons = a.passed, a.failure, _reasons(a)
        if a.scored:
            verdict, scorer = self._regraded(run, record, a)
            if verdict is not None and scorer is not None:
                view.notes = list(verdict.notes)
                if not verdict.passed:
                    view.diff = readable_diff(scorer.diff(verdict))
        return view

    def _regraded(
        self, run: StoredRun, record: Any, a: AttemptRow
    ) -> tuple[Verdict | None, Scorer | None]:
        """The attempt graded again by the suite's scorer (for its expected-against-actual
        diff and notes), when the suite is loaded and agrees with the stored verdict."""
        scorer = self._scorer(run)
        if scorer is None:
            return None, None
        try:
            # stored is the raw verdict: a call printed as text counts as no call there, and
            # its diff says so ("printed as text, not called (counts only when repaired)")
            verdict = scorer.grade_raw(record) or scorer.grade(record)
        except Exception:  # a record the scorer refuses now: the stored reasons still show
            return None, None
        if verdict is None or verdict.passed != a.passed:
            return None, None
        if (verdict.failure or "") != (a.failure or ""):
            return None, None
        return verdict, scorer

    def _scorer(self, run: StoredRun) -> Scorer | None:
        suite = run.suite
        if suite is None:
            suite, _ = self._suite(run.detail)  # in the background: a later page has it
        if suite is None:
            return None
        key = id(suite)
        with self._lock:
            if key in self._scorers:
                return self._scorers[key]
        from toolproof.grade import Scorer
        from toolproof.run import load_checks
        from toolproof.run._expected import StoredStates, default_expected_dir
        from toolproof.trust import DEFAULT_TRUST

        trust = self.trust or DEFAULT_TRUST
        try:
            scorer: Scorer | None = None
            if trust.allow_code:  # expected states computed for the cases shown, and kept
                states = StoredStates(suite, trust, folder=default_expected_dir())
                checks = load_checks(suite, allow_code=True)
                scorer = Scorer(suite, states, checks, initial_state=states.initial())
            else:
                scorer = Scorer(suite, {}, None)
        except Exception:  # the suite's own code failed: show the stored reasons only
            scorer = None
        with self._lock:
            self._scorers[key] = scorer
        return scorer


def _suite_key(source: str, detail: RunDetail) -> tuple[str, str, str]:
    """What a run's suite is loaded from: its file, its fingerprint, and the run folder
    when the run's tools replaced the suite's (``run --tools``; "" otherwise)."""
    replaced = (detail.manifest or {}).get("tools_source") is not None
    folder = detail.run.folder if replaced and detail.run.folder else ""
    return source, detail.run.suite_fingerprint, folder


def _load_suite(source: str, fingerprint: str, run: str, trust: Trust | None) -> Suite | str:
    """The run's suite, with the tools the run sent when they replaced the suite's (read
    from ``run``, its folder, as ``score`` reads them); or why the contracts are not shown."""
    from toolproof.run import read_manifest
    from toolproof.run._manifest import with_run_tools
    from toolproof.suite import load_suite
    from toolproof.trust import DEFAULT_TRUST

    if not Path(source).exists():
        return f"the run's suite {source} is not found here, so contracts are not shown"
    try:
        policy = trust or DEFAULT_TRUST
        suite = load_suite(source, policy)
        if run:
            suite = with_run_tools(suite, Path(run), read_manifest(Path(run)), policy)
    except UserError as exc:
        return f"the run's suite could not be loaded, so contracts are not shown: {exc}"
    if suite.fingerprint() != fingerprint:
        return f"the suite {source} has changed since the run, so contracts are not shown"
    return suite


def _summary(data: dict[str, Any], *, light: bool) -> Summary:
    """A stored summary; ``light``: without its per-case lists (the failure list and the
    per-case stability), which the store's per-case results hold for the pages."""
    if light:  # a store before schema version 3 has only the whole summary
        data = {**data, "failures": []}
        if isinstance(data.get("stability"), dict):
            data["stability"] = {**data["stability"], "per_case": []}
    return Summary.model_validate(data)


def _histogram(data: dict[str, Any] | None) -> Histogram | None:
    if not data:
        return None
    return Histogram(
        width=int(data["width"]),
        height=int(data["height"]),
        bars=[Bar(**b) for b in data["bars"]],
        ticks=[(float(x), str(label)) for x, label in data["ticks"]],
        n=int(data["n"]),
    )


def _tags(case: Case | None) -> list[str]:
    return list(case.tags) if case is not None else []


def _reasons(a: AttemptRow) -> list[str]:
    return [str(f.get("message", "")) for f in a.findings if f.get("failure")]


def metric_view(m: Any) -> RateView:
    """A stored metric as a rate with its interval."""
    if m is None or m.value is None:
        return RateView(0, 0, None, None, None)
    return RateView(m.k or 0, m.n or 0, m.value, m.low, m.high)
