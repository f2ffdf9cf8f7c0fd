"""Reading the store: typed rows, paginated on the server."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Generic, TypeVar

from toolproof._shared.safe_io import MAX_LINE_CHARS, open_read
from toolproof.store._db import Database

T = TypeVar("T")


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of rows: ``items`` from ``offset``, out of ``total`` rows that match."""

    items: list[T]
    total: int
    offset: int
    limit: int


@dataclass(frozen=True)
class Metric:
    """One figure of one target in one run. Rates carry k of n and a 95% interval."""

    target: str
    metric: str
    value: float | None
    low: float | None = None
    high: float | None = None
    k: int | None = None
    n: int | None = None


@dataclass(frozen=True)
class GateRow:
    """A gate decision on a run: overall, per target, and the whole result as JSON."""

    id: int
    run_pk: int
    decided_at: datetime | None
    passed: bool
    exit_code: int
    baseline_key: str | None
    baseline_folder: str | None
    targets: dict[str, bool]
    result: dict[str, Any] = field(repr=False)


@dataclass(frozen=True)
class RunRow:
    """A run as listed: what it ran, when, and how it ended."""

    id: int
    key: str
    run_id: str
    folder: str | None
    suite_name: str
    suite_version: str | None
    suite_fingerprint: str
    tools_fingerprint: str
    system_fingerprint: str | None
    repeats: int
    toolproof_version: str | None
    targets: list[str]
    settings: dict[str, Any]
    git_commit: str | None
    shard: str | None
    status: str | None
    started_at: datetime | None
    ended_at: datetime | None
    exit_code: int | None
    attempts: int
    stored_at: datetime | None
    headline: dict[str, Metric] = field(default_factory=dict)
    """Strict pass per target."""
    gate: GateRow | None = None
    """The latest gate decision, if any."""


@dataclass(frozen=True)
class TargetRow:
    target: str
    kind: str | None
    settings: dict[str, Any] | None
    model_versions: list[str]
    summary: dict[str, Any] = field(repr=False)
    """The target's :class:`toolproof.stats.Summary` as JSON (``Summary.model_validate``)."""
    latency_histogram: dict[str, Any] | None = field(repr=False, default=None)
    """The run page's latency histogram (``toolproof.report._htmlview.Histogram`` fields)."""


@dataclass(frozen=True)
class RunDetail:
    run: RunRow
    targets: list[TargetRow]
    metrics: list[Metric]
    gates: list[GateRow]
    manifest: dict[str, Any] | None = field(repr=False, default=None)


@dataclass(frozen=True)
class AttemptRow:
    """One attempt's verdict, and where its raw exchange is (``records_path`` line)."""

    target: str
    case_id: str
    attempt: int
    outcome: str
    scored: bool
    passed: bool | None
    failure: str | None
    stage: str | None
    kind: str | None
    risk: str | None
    tags: list[str]
    expected_tools: list[str]
    actual_tools: list[str]
    findings: list[dict[str, Any]]
    """The scorer's checks: ``{"stage", "failure", "message"}``.

    The values check lists each wrong argument, ``tool: argument ...``, joined by ``; ``.
    """
    latency_ms: float | None
    cost_usd: float | None
    cached: bool
    started_at: datetime | None
    records_path: Path | None
    records_line: int | None
    records_offset: int | None


@dataclass(frozen=True)
class CaseRow:
    """One case of one target in a run: its attempts summed up (what a case list shows)."""

    target: str
    case_id: str
    attempts: int
    scored: int
    """Attempts with a model answer (graded)."""
    passes: int
    risk: str | None
    kind: str | None
    tags: list[str]
    failures: list[str]
    """The failure classes of its failed attempts, sorted."""
    first_line: int | None
    """The records line of its first attempt (the order it was run in)."""
    position: int | None = None
    """Its place in the suite (None from a store written before schema version 3)."""
    pass_at_k: float | None = None
    pass_hat_k: float | None = None
    flaky: bool | None = None
    """With repeats: pass@k, pass^k and whether its outcome changed between attempts."""


@dataclass(frozen=True)
class HistoryPoint:
    """One run in a metric history: the run and its figures for one target."""

    run_pk: int
    run_key: str
    run_id: str
    started_at: datetime | None
    git_commit: str | None
    metrics: dict[str, Metric]


_RUN_SELECT = (
    "SELECT id, run_key, run_id, folder, suite_name, suite_version, suite_fingerprint, "
    "tools_fingerprint, system_fingerprint, repeats, toolproof_version, targets, settings, "
    "git_commit, shard, status, started_at, ended_at, exit_code, attempts, stored_at FROM runs"
)


def _loads(text: Any, default: Any) -> Any:
    return json.loads(text) if text is not None else default


def _run(db: Database, row: Sequence[Any], **extra: Any) -> RunRow:
    return RunRow(
        id=int(row[0]), key=row[1], run_id=row[2], folder=row[3], suite_name=row[4],
        suite_version=row[5], suite_fingerprint=row[6], tools_fingerprint=row[7],
        system_fingerprint=row[8], repeats=int(row[9]), toolproof_version=row[10],
        targets=_loads(row[11], []), settings=_loads(row[12], {}), git_commit=row[13],
        shard=row[14], status=row[15], started_at=db.read_ts(row[16]),
        ended_at=db.read_ts(row[17]), exit_code=row[18], attempts=int(row[19]),
        stored_at=db.read_ts(row[20]), **extra,
    )  # fmt: skip


def _metric(row: Sequence[Any]) -> Metric:
    return Metric(
        target=row[0], metric=row[1], value=row[2], low=row[3], high=row[4],
        k=None if row[5] is None else int(row[5]), n=None if row[6] is None else int(row[6]),
    )  # fmt: skip


def _marks(n: int) -> str:
    return ", ".join("?" for _ in range(n))


def gates_of(db: Database, run_pks: Sequence[int]) -> dict[int, list[GateRow]]:
    if not run_pks:
        return {}
    rows = db.all(
        "SELECT id, run_pk, decided_at, passed, exit_code, baseline_key, baseline_folder, result "
        f"FROM gate_decisions WHERE run_pk IN ({_marks(len(run_pks))}) ORDER BY decided_at, id",
        list(run_pks),
    )
    targets: dict[int, dict[str, bool]] = {}
    if rows:
        ids = [int(r[0]) for r in rows]
        for gate_pk, target, passed in db.all(
            "SELECT gate_pk, target, passed FROM gate_targets "
            f"WHERE gate_pk IN ({_marks(len(ids))})",
            ids,
        ):
            targets.setdefault(int(gate_pk), {})[target] = bool(passed)
    out: dict[int, list[GateRow]] = {}
    for r in rows:
        out.setdefault(int(r[1]), []).append(
            GateRow(
                id=int(r[0]), run_pk=int(r[1]), decided_at=db.read_ts(r[2]), passed=bool(r[3]),
                exit_code=int(r[4]), baseline_key=r[5], baseline_folder=r[6],
                targets=targets.get(int(r[0]), {}), result=_loads(r[7], {}),
            )
        )  # fmt: skip
    return out


def list_runs(
    db: Database,
    *,
    suite: str | None = None,
    target: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> Page[RunRow]:
    where, params = [], []
    if suite is not None:
        where.append("suite_name = ?")
        params.append(suite)
    if target is not None:
        where.append(
            "EXISTS (SELECT 1 FROM run_targets t WHERE t.run_pk = runs.id AND t.target = ?)"
        )
        params.append(target)
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    total = int(db.one(f"SELECT COUNT(*) FROM runs{clause}", params)[0])
    rows = db.all(
        f"{_RUN_SELECT}{clause} "
        "ORDER BY COALESCE(started_at, stored_at) DESC, id DESC LIMIT ? OFFSET ?",
        [*params, limit, offset],
    )
    pks = [int(r[0]) for r in rows]
    headline: dict[int, dict[str, Metric]] = {}
    if pks:
        for row in db.all(
            "SELECT run_pk, target, metric, value, low, high, k, n FROM metrics "
            f"WHERE metric = 'strict_pass' AND run_pk IN ({_marks(len(pks))})",
            pks,
        ):
            headline.setdefault(int(row[0]), {})[row[1]] = _metric(row[1:])
    gates = gates_of(db, pks)
    items = []
    for r in rows:
        latest = gates.get(int(r[0]), [])
        items.append(
            _run(db, r, headline=headline.get(int(r[0]), {}), gate=latest[-1] if latest else None)
        )
    return Page(items, total, offset, limit)


def find_run(db: Database, ref: int | str) -> int | None:
    """A run's id from its id, its key, or its run ID (the newest run of that ID)."""
    if isinstance(ref, int) or (isinstance(ref, str) and ref.isdigit()):
        row = db.one("SELECT id FROM runs WHERE id = ?", (int(ref),))
        if row is not None:
            return int(row[0])
    row = db.one("SELECT id FROM runs WHERE run_key = ?", (str(ref),))
    if row is None:
        row = db.one(
            "SELECT id FROM runs WHERE run_id = ? "
            "ORDER BY COALESCE(started_at, stored_at) DESC, id DESC LIMIT 1",
            (str(ref),),
        )
    return int(row[0]) if row is not None else None


def run_version(db: Database, ref: int | str) -> tuple[int, Any, int | None] | None:
    """(id, when it was stored, its latest gate decision's id): changes when it does."""
    pk = find_run(db, ref)
    if pk is None:
        return None
    row = db.one(
        "SELECT r.stored_at, (SELECT MAX(g.id) FROM gate_decisions g WHERE g.run_pk = r.id) "
        "FROM runs r WHERE r.id = ?",
        (pk,),
    )
    return (pk, row[0], None if row[1] is None else int(row[1])) if row else None


def get_run(db: Database, ref: int | str, *, light: bool = False) -> RunDetail | None:
    pk = find_run(db, ref)
    if pk is None:
        return None
    row = db.one(f"{_RUN_SELECT} WHERE id = ?", (pk,))
    gates = gates_of(db, [pk]).get(pk, [])
    metrics = [
        _metric(r)
        for r in db.all(
            "SELECT target, metric, value, low, high, k, n FROM metrics WHERE run_pk = ?", (pk,)
        )
    ]
    headline = {m.target: m for m in metrics if m.metric == "strict_pass"}
    targets = [
        TargetRow(
            target=r[0], kind=r[1], settings=_loads(r[2], None), model_versions=_loads(r[3], []),
            summary=_loads(r[4], {}), latency_histogram=_loads(r[5], None),
        )
        for r in db.all(
            "SELECT target, kind, settings, model_versions, "
            f"{'COALESCE(figures, summary)' if light else 'summary'}, latency_histogram "
            "FROM run_targets "
            "WHERE run_pk = ? ORDER BY position",
            (pk,),
        )
    ]
    if not light:
        for t in targets:
            _add_failures(db, pk, t)
    manifest = db.one("SELECT manifest FROM runs WHERE id = ?", (pk,))[0]
    return RunDetail(
        run=_run(db, row, headline=headline, gate=gates[-1] if gates else None),
        targets=targets,
        metrics=metrics,
        gates=gates,
        manifest=_loads(manifest, None),
    )


def _add_failures(db: Database, pk: int, target: TargetRow) -> None:
    """The failure list of a summary stored with its failures apart (schema version 4 on;
    before, the summary holds them, and there are no parts)."""
    parts = db.all(
        "SELECT failures FROM summary_failures WHERE run_pk = ? AND target = ? ORDER BY part",
        (pk, target.target),
    )
    if parts:
        target.summary["failures"] = [item for (text,) in parts for item in json.loads(text)]


def list_attempts(
    db: Database,
    run_pk: int,
    *,
    target: str | None = None,
    case_id: str | None = None,
    failure: str | None = None,
    passed: bool | None = None,
    outcome: str | None = None,
    offset: int = 0,
    limit: int = 100,
) -> Page[AttemptRow]:
    where: list[str] = ["run_pk = ?"]
    params: list[Any] = [run_pk]
    for column, value in (("target", target), ("case_id", case_id), ("failure", failure),
                          ("outcome", outcome)):  # fmt: skip
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    if passed is not None:
        where.append("passed = ?")
        params.append(int(passed))
    clause = " AND ".join(where)
    total = int(db.one(f"SELECT COUNT(*) FROM attempts WHERE {clause}", params)[0])
    folder_row = db.one("SELECT folder FROM runs WHERE id = ?", (run_pk,))
    folder = Path(folder_row[0]) if folder_row and folder_row[0] else None
    rows = db.all(
        "SELECT target, case_id, attempt, outcome, scored, passed, failure, stage, kind, risk, "
        "tags, expected_tools, actual_tools, findings, latency_ms, cost_usd, cached, "
        "started_at, records_file, records_line, records_offset FROM attempts "
        f"WHERE {clause} ORDER BY target, case_id, attempt LIMIT ? OFFSET ?",
        [*params, limit, offset],
    )
    items = [
        AttemptRow(
            target=r[0], case_id=r[1], attempt=int(r[2]), outcome=r[3], scored=bool(r[4]),
            passed=None if r[5] is None else bool(r[5]), failure=r[6], stage=r[7], kind=r[8],
            risk=r[9], tags=_loads(r[10], []), expected_tools=_loads(r[11], []),
            actual_tools=_loads(r[12], []), findings=_loads(r[13], []), latency_ms=r[14],
            cost_usd=r[15], cached=bool(r[16]), started_at=db.read_ts(r[17]),
            records_path=_records_path(folder, r[18]),
            records_line=r[19], records_offset=None if r[20] is None else int(r[20]),
        )
        for r in rows
    ]
    return Page(items, total, offset, limit)


def case_rows(db: Database, run_pk: int) -> list[CaseRow]:
    """Every case × target of a run, summed over its attempts, in suite order
    (by target and case ID for a run stored before schema version 3)."""
    stored = db.all(
        "SELECT target, case_id, position, attempts, scored, passes, risk, kind, tags, failures, "
        "pass_at_k, pass_hat_k, flaky FROM case_results WHERE run_pk = ? ORDER BY position",
        (run_pk,),
    )
    if stored:
        texts: dict[str, list[str]] = {}  # few distinct tag and failure lists: decoded once

        def listed(text: str | None) -> list[str]:
            if text is None:
                return []
            if text not in texts:
                texts[text] = json.loads(text)
            return list(texts[text])

        return [
            CaseRow(
                target=r[0], case_id=r[1], attempts=int(r[3]), scored=int(r[4]),
                passes=int(r[5]), risk=r[6], kind=r[7], tags=listed(r[8]), failures=listed(r[9]),
                first_line=None, position=int(r[2]), pass_at_k=r[10], pass_hat_k=r[11],
                flaky=None if r[12] is None else bool(r[12]),
            )
            for r in stored
        ]  # fmt: skip
    return _summed_case_rows(db, run_pk)


def case_texts(
    db: Database, suite_fingerprint: str, case_ids: Sequence[str]
) -> dict[str, tuple[str | None, str | None, str | None]]:
    """The prompt, contract and reason of cases of a suite, as stored with its runs."""
    out: dict[str, tuple[str | None, str | None, str | None]] = {}
    ids = list(dict.fromkeys(case_ids))
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        for r in db.all(
            "SELECT case_id, prompt, contract, reason FROM suite_cases "
            f"WHERE suite_fingerprint = ? AND case_id IN ({_marks(len(chunk))})",
            [suite_fingerprint, *chunk],
        ):
            out[r[0]] = (r[1], r[2], r[3])
    return out


def _summed_case_rows(db: Database, run_pk: int) -> list[CaseRow]:
    failures: dict[tuple[str, str], list[str]] = {}
    for target, case_id, failure in db.all(
        "SELECT DISTINCT target, case_id, failure FROM attempts "
        "WHERE run_pk = ? AND failure IS NOT NULL",
        (run_pk,),
    ):
        failures.setdefault((target, case_id), []).append(failure)
    rows = db.all(
        "SELECT target, case_id, COUNT(*), SUM(scored), SUM(COALESCE(passed, 0)), MIN(risk), "
        "MIN(kind), MIN(tags), MIN(records_line) FROM attempts WHERE run_pk = ? "
        "GROUP BY target, case_id ORDER BY target, case_id",
        (run_pk,),
    )
    return [
        CaseRow(
            target=r[0], case_id=r[1], attempts=int(r[2]), scored=int(r[3] or 0),
            passes=int(r[4] or 0), risk=r[5], kind=r[6], tags=_loads(r[7], []),
            failures=sorted(failures.get((r[0], r[1]), [])),
            first_line=None if r[8] is None else int(r[8]),
        )
        for r in rows
    ]  # fmt: skip


def latencies(db: Database, run_pk: int, target: str) -> list[float]:
    """The latencies (ms) of a target's attempts in a run, where recorded."""
    rows = db.all(
        "SELECT latency_ms FROM attempts WHERE run_pk = ? AND target = ? "
        "AND latency_ms IS NOT NULL",
        (run_pk, target),
    )
    return [float(r[0]) for r in rows]


def series(db: Database) -> list[tuple[str, str]]:
    """Every (suite, target) with stored runs, sorted: what has a history."""
    rows = db.all(
        "SELECT DISTINCT r.suite_name, t.target FROM runs r JOIN run_targets t ON t.run_pk = r.id "
        "ORDER BY 1, 2"
    )
    return [(r[0], r[1]) for r in rows]


def history(
    db: Database,
    suite: str,
    target: str,
    *,
    metrics: Sequence[str] | None = None,
    last: int = 30,
) -> list[HistoryPoint]:
    runs = db.all(
        "SELECT r.id, r.run_key, r.run_id, r.started_at, r.git_commit FROM runs r "
        "JOIN run_targets t ON t.run_pk = r.id WHERE r.suite_name = ? AND t.target = ? "
        "ORDER BY COALESCE(r.started_at, r.stored_at) DESC, r.id DESC LIMIT ?",
        (suite, target, last),
    )
    if not runs:
        return []
    pks = [int(r[0]) for r in runs]
    sql = (
        "SELECT run_pk, target, metric, value, low, high, k, n FROM metrics "
        f"WHERE target = ? AND run_pk IN ({_marks(len(pks))})"
    )
    params: list[Any] = [target, *pks]
    if metrics:
        sql += f" AND metric IN ({_marks(len(metrics))})"
        params += list(metrics)
    figures: dict[int, dict[str, Metric]] = {}
    for row in db.all(sql, params):
        figures.setdefault(int(row[0]), {})[row[2]] = _metric(row[1:])
    return [
        HistoryPoint(
            run_pk=int(r[0]), run_key=r[1], run_id=r[2], started_at=db.read_ts(r[3]),
            git_commit=r[4], metrics=figures.get(int(r[0]), {}),
        )
        for r in reversed(runs)
    ]


def _records_path(folder: Path | None, name: str) -> Path | None:
    """A row's records file, when it names one inside the run's folder (rows are untrusted)."""
    from toolproof.trust import resolve_inside

    if folder is None:
        return None
    try:
        return resolve_inside(folder, name)
    except ValueError:
        return None


def read_raw(attempt: AttemptRow) -> dict[str, Any] | None:
    """The attempt's raw record (request, response, transcript) from its run folder.

    ``None`` when the run folder is not here (another machine) or the line no
    longer holds that attempt.
    """
    if attempt.records_path is None or attempt.records_offset is None:
        return None
    try:  # a regular file in the run's folder: never /dev/zero, a FIFO or a link out
        with open_read(attempt.records_path) as fh:
            fh.seek(attempt.records_offset)
            data = json.loads(fh.readline(MAX_LINE_CHARS + 1))
    # UnsafePath and UnicodeDecodeError are ValueErrors; a line nested past the parser's
    # depth is a RecursionError: the line is untrusted, either way no record of this attempt
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("case_id") != attempt.case_id:
        return None
    number = data.get("attempt", 0)  # compared, never converted: 1e999 has no int
    if isinstance(number, bool) or not isinstance(number, int | float):
        return None
    if number != attempt.attempt:
        return None
    return data
