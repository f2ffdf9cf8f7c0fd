"""The Store: one open history store, its writes and its reads."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from toolproof.errors import UserError
from toolproof.store import _read
from toolproof.store._db import Database, connect, resolve_location
from toolproof.store._events import EVENTS_FILE, check_gate_event, read_events
from toolproof.store._read import AttemptRow, CaseRow, HistoryPoint, Page, RunDetail, RunRow
from toolproof.store._schema import migrate

if TYPE_CHECKING:  # the write path imports the scorer: only when it is used
    from toolproof.evaluate import Evaluation
    from toolproof.store._write import AttemptLog, RunSource
    from toolproof.trust import Trust

RECORDS_FILE = "records.jsonl"


@dataclass(frozen=True)
class Imported:
    folder: Path
    run_pk: int
    attempts: int
    gates: int


class Store:
    """An open history store. Open one with :func:`open_store`; close it (or use ``with``)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._suites: dict[str, Any] = {}

    @property
    def location(self) -> str:
        """The SQLite file or the PostgreSQL URL (without its password)."""
        return self.db.url

    @property
    def kind(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.db.kind

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- writing ---------------------------------------------------------------

    def save(
        self,
        ev: Evaluation,
        files: Sequence[str | Path] | RunSource,
        *,
        exit_code: int | None = None,
        noted: AttemptLog | None = None,
    ) -> int:
        """Store an evaluation read from records ``files``; returns the run's id.

        Storing the same run again (same run ID and start, or for a bare records
        file the same bytes) replaces its attempts and metrics. ``noted``: the
        attempt rows noted while ``ev`` was graded (``evaluate(on_attempt=...)``);
        without them the records are read and graded again.
        """
        from toolproof.store._write import RunSource, save_evaluation

        source = files if isinstance(files, RunSource) else _source(files, ev)
        return save_evaluation(self.db, ev, source, exit_code=exit_code, noted=noted)

    def set_exit_code(self, run_pk: int, exit_code: int) -> None:
        from toolproof.store._write import set_exit_code

        set_exit_code(self.db, run_pk, exit_code)

    def save_gate(
        self,
        run_pk: int,
        result: Any,
        *,
        decided_at: datetime,
        baseline_key: str | None = None,
        baseline_folder: str | None = None,
    ) -> int | None:
        """Store a gate decision; ``None`` if one at that time was stored already."""
        from toolproof.store._write import save_gate

        return save_gate(
            self.db,
            run_pk,
            result,
            decided_at=decided_at,
            baseline_key=baseline_key,
            baseline_folder=baseline_folder,
        )

    def import_run(
        self, folder: str | Path, suite: str | Path | None = None, trust: Trust | None = None
    ) -> Imported:
        """Load one run folder: records, manifest and its events (exit code, gate decisions).

        ``trust`` is the policy for the suite (default: it may not run code).
        """
        from toolproof.evaluate import load_run
        from toolproof.store._write import source_for
        from toolproof.trust import DEFAULT_TRUST

        path = Path(folder)
        policy = trust or DEFAULT_TRUST
        loaded = self._suite(path, policy) if suite is None else suite
        ev = load_run(path, loaded, keep_raw=False, trust=policy)
        events = read_events(path)
        for e in events:  # a gate event is decided again from the records before it counts
            if e.kind == "gate":
                check_gate_event(str(path / EVENTS_FILE), e, ev)
        codes = [e.exit_code for e in events if e.kind == "run"]
        source = source_for([path / RECORDS_FILE], ev.manifest)
        pk = self.save(ev, source, exit_code=codes[-1] if codes else None)
        gates = 0
        for e in events:
            if e.kind == "gate":
                stored = self.save_gate(
                    pk,
                    e.result,
                    decided_at=e.at,
                    baseline_key=e.baseline_key,
                    baseline_folder=e.baseline_folder,
                )
                gates += stored is not None
        return Imported(path, pk, len(ev.records), gates)

    def _suite(self, folder: Path, trust: Trust) -> Any:
        """The suite a run folder's manifest names, loaded once per import of many runs."""
        from toolproof.run import read_manifest
        from toolproof.suite import load_suite

        if not (folder / "manifest.json").is_file():
            return None
        source = read_manifest(folder).suite_source
        if source is None or not Path(source).exists():
            return None  # load_run says what is missing
        key = str(Path(source).resolve())  # the store lives for one command: files stay put
        if key not in self._suites:
            self._suites[key] = load_suite(source, trust)
        return self._suites[key]

    def prune(self, before: datetime) -> int:
        """Delete the runs that started before ``before``; returns how many.

        Runs with no start time are judged by when they were stored.
        """
        cutoff = self.db.ts(before)
        with self.db.transaction():
            rows = self.db.all(
                "SELECT id FROM runs WHERE COALESCE(started_at, stored_at) < ?", (cutoff,)
            )
            ids = [int(r[0]) for r in rows]
            for chunk in _chunks(ids, 500):
                marks = ", ".join("?" for _ in chunk)
                gates = f"SELECT id FROM gate_decisions WHERE run_pk IN ({marks})"
                self.db.execute(f"DELETE FROM gate_targets WHERE gate_pk IN ({gates})", chunk)
                for table in ("gate_decisions", "judge_results", "attempts", "metrics",
                              "case_results", "summary_failures", "run_targets"):  # fmt: skip
                    self.db.execute(f"DELETE FROM {table} WHERE run_pk IN ({marks})", chunk)
                self.db.execute(f"DELETE FROM runs WHERE id IN ({marks})", chunk)
            if ids:  # the cases of suites no run refers to any more
                self.db.execute(
                    "DELETE FROM suite_cases WHERE suite_fingerprint NOT IN "
                    "(SELECT suite_fingerprint FROM runs)"
                )
        return len(ids)

    # -- reading ---------------------------------------------------------------

    def list_runs(
        self,
        *,
        suite: str | None = None,
        target: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> Page[RunRow]:
        """Runs, newest first, with strict pass per target and the latest gate decision."""
        return _read.list_runs(self.db, suite=suite, target=target, limit=limit, offset=offset)

    def get_run(self, ref: int | str, *, light: bool = False) -> RunDetail | None:
        """One run by id, key or run ID: targets with summaries, every metric, gate decisions.

        ``light``: the summaries without their per-case lists (``failures`` and the
        stability's ``per_case`` are empty) where the store has them so, as ``cases``
        holds those: far less to read for a large run.
        """
        return _read.get_run(self.db, ref, light=light)

    def run_version(self, ref: int | str) -> tuple[int, Any, int | None] | None:
        """A run's (id, stored at, latest gate decision id), or None: cheap to ask, and it
        changes whenever what :meth:`get_run` returns does."""
        return _read.run_version(self.db, ref)

    def attempts(
        self,
        run: int | str,
        *,
        target: str | None = None,
        case_id: str | None = None,
        failure: str | None = None,
        passed: bool | None = None,
        outcome: str | None = None,
        offset: int = 0,
        limit: int = 100,
    ) -> Page[AttemptRow]:
        """A page of a run's attempts, ordered by target, case and attempt."""
        pk = self._pk(run)
        return _read.list_attempts(
            self.db,
            pk,
            target=target,
            case_id=case_id,
            failure=failure,
            passed=passed,
            outcome=outcome,
            offset=offset,
            limit=limit,
        )

    def cases(self, run: int | str) -> list[CaseRow]:
        """Every case × target of a run, summed over its attempts (by target and case ID)."""
        return _read.case_rows(self.db, self._pk(run))

    def case_texts(
        self, suite_fingerprint: str, case_ids: Sequence[str]
    ) -> dict[str, tuple[str | None, str | None, str | None]]:
        """Case ID → (prompt, contract as YAML, reason), for a suite stored with its runs."""
        return _read.case_texts(self.db, suite_fingerprint, case_ids)

    def latencies(self, run: int | str, target: str) -> list[float]:
        """The recorded latencies (ms) of one target's attempts in a run."""
        return _read.latencies(self.db, self._pk(run), target)

    def series(self) -> list[tuple[str, str]]:
        """Every (suite, target) pair with stored runs: the histories there are."""
        return _read.series(self.db)

    def _pk(self, run: int | str) -> int:
        pk = _read.find_run(self.db, run)
        if pk is None:
            raise UserError(f"no run {run!r} in the store {self.location}")
        return pk

    def history(
        self,
        suite: str,
        target: str,
        *,
        metrics: Sequence[str] | None = None,
        last: int = 30,
    ) -> list[HistoryPoint]:
        """Metrics of ``target`` over the last ``last`` runs of ``suite``, oldest first."""
        return _read.history(self.db, suite, target, metrics=metrics, last=last)

    def suites(self) -> list[str]:
        """The suites with stored runs, by name."""
        return [r[0] for r in self.db.all("SELECT DISTINCT suite_name FROM runs ORDER BY 1")]

    def targets(self, suite: str | None = None) -> list[str]:
        """The targets with stored runs (of ``suite``), by name."""
        sql = "SELECT DISTINCT t.target FROM run_targets t"
        params: list[Any] = []
        if suite is not None:
            sql += " JOIN runs r ON r.id = t.run_pk WHERE r.suite_name = ?"
            params.append(suite)
        return [r[0] for r in self.db.all(sql + " ORDER BY 1", params)]

    @staticmethod
    def read_raw(attempt: AttemptRow) -> dict[str, Any] | None:
        """The raw record of an attempt, read from its run folder (None if not found)."""
        return _read.read_raw(attempt)


def _chunks(items: list[int], size: int) -> Iterator[list[int]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _source(files: Sequence[str | Path], ev: Evaluation) -> RunSource:
    from toolproof.run import read_manifest
    from toolproof.store._write import source_for

    paths = [Path(f) for f in files]
    manifest = ev.manifest
    if manifest is None and len(paths) == 1 and (paths[0].parent / "manifest.json").is_file():
        try:
            manifest = read_manifest(paths[0].parent)
        except UserError:
            manifest = None
    return source_for(paths, manifest)


def open_store(location: str | None = None) -> Store:
    """Open (creating or migrating) the store at ``location``.

    ``location`` is a file path, ``sqlite:///PATH`` or ``postgresql://…``;
    ``None`` means ``$TOOLPROOF_STORE``, else ``.toolproof/history.db`` under
    the working folder.
    """
    where = resolve_location(location)
    if where is None:
        raise UserError("the history store is off (--store off or TOOLPROOF_STORE=off)")
    db = connect(where)
    try:
        migrate(db)
    except BaseException:
        db.close()
        raise
    return Store(db)


_DURATION = re.compile(r"^\s*(\d+)\s*([hdw])\s*$")


def parse_keep(text: str, now: datetime | None = None) -> datetime:
    """``90d``, ``12w`` or ``48h`` → the time before which runs are pruned."""
    m = _DURATION.match(text)
    if m is None:
        raise UserError(f"--keep {text!r}: give a duration such as 90d, 12w or 48h")
    n, unit = int(m[1]), m[2]
    span = {"h": timedelta(hours=n), "d": timedelta(days=n), "w": timedelta(weeks=n)}[unit]
    return (now or datetime.now(UTC)) - span


def find_run_folders(paths: Iterable[str | Path]) -> list[Path]:
    """Run folders (manifest.json + records.jsonl) at or under ``paths``, sorted.

    A folder inside a run folder (the runs of its judges, under ``judges/``)
    belongs to that run: it is read with it, never imported as a run of its own."""
    out: list[Path] = []
    for p in map(Path, paths):
        if not p.exists():
            raise UserError(f"{p}: no such folder")
        if (p / "manifest.json").is_file():
            out.append(p)
            continue
        found = sorted(m.parent for m in p.rglob("manifest.json") if m.parent != p)
        runs = set(found)
        found = [f for f in found if not any(a in runs for a in f.parents)]
        if not found:
            raise UserError(f"{p}: no run folder (manifest.json) in it")
        out += found
    return out
