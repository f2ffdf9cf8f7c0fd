"""Writing evaluations and gate decisions: rows built first, then one short transaction."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import tempfile
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from pydantic import TypeAdapter

from toolproof.errors import UserError
from toolproof.evaluate import Evaluation
from toolproof.run import Manifest, read_manifest
from toolproof.stats import FailureItem, Rate, Summary
from toolproof.stats._repeats import Estimate
from toolproof.store._db import Database
from toolproof.types import Check, Record, Verdict

RECORDS_FILE = "records.jsonl"


@dataclass(frozen=True)
class RunSource:
    """Where a run's records are, and the key that identifies it in the store."""

    key: str
    run_id: str
    folder: Path
    files: tuple[Path, ...]
    manifest: Manifest | None


def run_key(manifest: Manifest) -> str:
    """A run folder's identity: its run ID and start time (kept across --resume)."""
    return f"{manifest.run_id}@{manifest.started_at.astimezone(UTC).isoformat()}"


def own_key(db: Database, source: RunSource) -> str:
    """The key of ``source``'s row: its run key, unless another folder holds that run.

    A run folder's manifest names its run ID and start, and a copy of the folder
    names the same: when the row of that key belongs to another folder that
    still holds the run, this folder (a copy, perhaps edited) is a run of its
    own, keyed by its real path too, and never rewrites the other's row. A run
    whose folder was moved (the old one holds it no longer) keeps its row.
    """
    if source.manifest is None:  # a bare records file: keyed by its bytes already
        return source.key
    row = db.one("SELECT folder FROM runs WHERE run_key = ?", (source.key,))
    here = os.path.realpath(source.folder)
    if row is None or os.path.realpath(row[0]) == here or not _holds(Path(row[0]), source.key):
        return source.key
    return f"{source.key}#{hashlib.sha256(here.encode()).hexdigest()[:12]}"


def _holds(folder: Path, key: str) -> bool:
    try:
        return (folder / "manifest.json").is_file() and run_key(read_manifest(folder)) == key
    except (OSError, UserError):
        return False


def source_for(files: Sequence[Path], manifest: Manifest | None) -> RunSource:
    """The source of an evaluation read from ``files`` (records files)."""
    resolved = tuple(Path(os.path.abspath(f)) for f in files)
    folder = resolved[0].parent if resolved else Path.cwd()
    if manifest is not None:
        return RunSource(run_key(manifest), manifest.run_id, folder, resolved, manifest)
    digest = hashlib.sha256()
    for f in resolved:
        with open(f, "rb") as fh:
            for block in iter(lambda fh=fh: fh.read(1 << 20), b""):  # type: ignore[misc]
                digest.update(block)
        digest.update(b"\0")
    name = resolved[0].stem if len(resolved) == 1 else folder.name
    return RunSource(f"records:{digest.hexdigest()[:32]}", name, folder, resolved, None)


#: ``json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)``, without
#: making an encoder on every call (several are made per attempt row).
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode


def _dumps_text(value: list[Any]) -> str:
    """:func:`_dumps` of a list that holds only text, None and such lists or mappings.

    orjson writes those as the standard library does (compact, Unicode kept,
    the same escapes), several times faster; a lone surrogate, which it refuses,
    goes to :func:`_dumps`.
    """
    try:
        return orjson.dumps(value).decode("utf-8")
    except TypeError:
        return _dumps(value)


def _line_index(source: RunSource) -> dict[tuple[str, str, int], tuple[str, int, int]]:
    """(target, case, attempt) -> (records file relative to the folder, line, byte offset).

    The last line of a triple wins, as in :func:`toolproof.evaluate.evaluate`.
    Lines that do not parse were refused or skipped by the evaluation already.
    """
    out: dict[tuple[str, str, int], tuple[str, int, int]] = {}
    for file in source.files:
        rel = os.path.relpath(file, source.folder)
        offset = 0
        with open(file, "rb") as fh:
            for number, line in enumerate(fh, start=1):
                start, offset = offset, offset + len(line)
                if not line.strip():
                    continue
                try:
                    data = json.loads(line)
                    target = data.get("target") or file.stem
                    key = (str(target), str(data["case_id"]), int(data.get("attempt", 0)))
                except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
                    continue
                out[key] = (rel, number, start)
    return out


def _rate(name: str, r: Rate) -> tuple[Any, ...]:
    return (name, r.value, r.low, r.high, r.k, r.n)


def _estimate(name: str, e: Estimate) -> tuple[Any, ...]:
    return (name, e.value, e.low, e.high, None, e.n)


def metric_rows(summary: Summary) -> list[tuple[Any, ...]]:
    """(metric, value, low, high, k, n) for every headline figure of a summary."""
    rows: list[tuple[Any, ...]] = []
    for name in type(summary).model_fields:
        value = getattr(summary, name)
        if isinstance(value, Rate):
            rows.append(_rate(name, value))
        elif isinstance(value, bool):
            continue
        elif isinstance(value, int | float) or (value is None and name in _SCALARS):
            rows.append((name, value, None, None, None, None))
    d = summary.decision
    for part in ("precision", "recall", "f1"):
        rows.append((f"decision_{part}", getattr(d, part), None, None, None, None))
    st = summary.stability
    if st is not None:
        rows += [
            _estimate("pass_at_1", st.pass_at_1),
            _estimate("pass_at_k", st.pass_at_k),
            _estimate("pass_hat_k", st.pass_hat_k),
            _rate("tool_change", st.tool_change),
            ("flaky_cases", float(len(st.flaky)), None, None, None, st.cases),
        ]
    ms = summary.multistep
    if ms is not None:
        for name in type(ms).model_fields:
            value = getattr(ms, name)
            if isinstance(value, Rate):
                rows.append(_rate(f"multistep_{name}", value))
    return rows


_SCALARS = ("macro_f1", "latency_ms_p50", "latency_ms_p95", "cost_usd")


def _attempt_row(
    run_pk: int,
    db: Database,
    record: Record,
    verdict: Verdict | None,
    where: tuple[str, int, int] | None,
    default_file: str,
) -> tuple[Any, ...]:
    *fields, started = _attempt_fields(record, verdict)
    file, line, offset = where if where is not None else (default_file, None, None)
    return (run_pk, *fields, db.ts(started), file, line, offset)


#: The JSON text of lists of names and of findings, by what they list: attempts repeat the
#: same few (a case's tags and tools, the findings of answers alike), so each is written once.
_TEXTS: dict[Any, str] = {}
#: Texts :data:`_TEXTS` keeps before it starts afresh (a bound for a long evaluation).
_TEXTS_SIZE = 8192


def _kept(key: Any, text: str) -> str:
    """Keep the text of ``key`` in :data:`_TEXTS` (starting afresh when it is full)."""
    if len(_TEXTS) >= _TEXTS_SIZE:
        _TEXTS.clear()
    _TEXTS[key] = text
    return text


def _names_text(names: tuple[str, ...]) -> str:
    """``_dumps_text(list(names))``, written once for names alike."""
    try:
        text = _TEXTS.get(names)
    except TypeError:  # (not a tuple of text: written as it is)
        return _dumps_text(list(names))
    return text if text is not None else _kept(names, _dumps_text(list(names)))


def _findings_text(checks: tuple[Check, ...]) -> str:
    """The findings column of a verdict's checks, written once for checks alike (a check
    is its stage, failure class and message: equal checks give the same text)."""
    key = ("findings", checks)
    try:
        text = _TEXTS.get(key)
    except TypeError:  # (checks that cannot be hashed: written each time)
        return _findings_json(checks)
    return text if text is not None else _kept(key, _findings_json(checks))


def _findings_json(checks: tuple[Check, ...]) -> str:
    return _dumps_text(
        [
            {
                "stage": c.stage.value,
                "failure": c.failure.value if c.failure is not None else None,
                "message": c.message,
            }
            for c in checks
        ]
    )


def _attempt_fields(record: Record, verdict: Verdict | None) -> tuple[Any, ...]:
    """An attempt row's columns from target to started_at (a datetime)."""
    target = record.target or ""
    findings = None
    passed = failure = stage = kind = risk = tags = expected = actual = None
    if verdict is not None:
        passed = int(verdict.passed)
        if verdict.failure is not None:
            failure = verdict.failure.value
            stage = verdict.failure.stage.value
        kind, risk = verdict.kind.value, verdict.risk.value
        tags = _names_text(verdict.tags)
        expected = _names_text(verdict.expected_tools)
        actual = _names_text(verdict.actual_tools)
        findings = _findings_text(verdict.checks)
    elif record.error is not None:
        findings = _dumps_text(
            [{"stage": None, "failure": None, "message": record.error.message}]
        )
    return (
        target, record.case_id, record.attempt, record.outcome.value,
        int(verdict is not None), passed, failure, stage, kind, risk, tags, expected, actual,
        findings, record.latency_ms, record.cost_usd, int(record.cached), record.started_at,
    )  # fmt: skip


#: Attempt rows pickled together (a few hundred kB): far fewer, far cheaper calls than one each.
_LOG_BATCH = 1024


class AttemptLog:
    """An evaluation's attempt rows, noted as it grades (``evaluate(..., on_attempt=log)``),
    in a temporary file: storing the evaluation then reads and grades no record again."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()  # noqa: SIM115 - closed with the log
        self._batch: list[tuple[tuple[Any, ...], tuple[str, int] | None]] = []
        """Rows not yet written: they go to the file a batch at a time (one pickle each)."""
        self.latencies: dict[str, array[float]] = {}
        """Each target's latencies, in grading order (as ``latencies(records)`` gives them)."""
        self.first_start: datetime | None = None
        self.cases = CaseTally()
        """The case rows' sums, made as the attempts are noted (:func:`case_results`)."""

    def __call__(
        self, record: Record, verdict: Verdict | None, origin: tuple[str, int] | None
    ) -> None:
        fields = _attempt_fields(record, verdict)
        batch = self._batch
        batch.append((fields, origin))
        if len(batch) >= _LOG_BATCH:
            self._flush()
        self.cases.add(
            fields[0], fields[1], fields[4], fields[5], fields[6], fields[8], fields[9],
            fields[10], origin[1] if origin is not None else None,
        )  # fmt: skip
        response = record.response
        latency = (
            record.latency_ms
            if record.latency_ms is not None
            else (response.latency_ms if response else None)
        )
        if latency is not None:
            self.latencies.setdefault(fields[0], array("d")).append(latency)
        started = record.started_at
        if started is not None and (self.first_start is None or started < self.first_start):
            self.first_start = started

    def rows(
        self, db: Database, source: RunSource, targets: Iterable[str], default_file: str
    ) -> Iterator[tuple[Any, ...]]:
        """The attempt rows (run key 0), one target after another, each in grading order."""
        offsets: dict[str, tuple[str, array[int]]] = {}
        for target in targets:
            for fields, origin in self._read():
                if fields[0] != target:
                    continue
                *columns, started = fields
                if origin is None:
                    yield (0, *columns, db.ts(started), default_file, None, None)
                    continue
                path, line = origin
                found = offsets.get(path)
                if found is None:
                    found = offsets[path] = (
                        os.path.relpath(os.path.abspath(path), source.folder),
                        _line_offsets(path),
                    )
                rel, starts = found
                yield (0, *columns, db.ts(started), rel, line, starts[line])

    def _flush(self) -> None:
        if self._batch:
            self._file.seek(0, os.SEEK_END)
            pickle.dump(self._batch, self._file, protocol=pickle.HIGHEST_PROTOCOL)
            self._batch = []

    def _read(self) -> Iterator[tuple[tuple[Any, ...], tuple[str, int] | None]]:
        self._flush()
        file = self._file
        file.flush()
        file.seek(0)
        while file.peek(1):
            yield from pickle.load(file)

    def close(self) -> None:
        self._file.close()

    def __del__(self) -> None:
        self._file.close()


def _line_offsets(path: str) -> array[int]:
    """The byte offset at which each line of a file starts (index: line number from 1)."""
    starts = array("q", [0, 0])
    offset = 0
    with open(path, "rb") as fh:
        for line in fh:
            offset += len(line)
            starts.append(offset)
    return starts


def save_evaluation(
    db: Database,
    ev: Evaluation,
    source: RunSource,
    *,
    exit_code: int | None = None,
    noted: AttemptLog | None = None,
) -> int:
    """Store (or replace) one run: its row, targets, metrics and attempts. Returns its key.

    ``noted``: the rows noted while ``ev`` was graded (else the records are read again).
    """
    m = source.manifest or ev.manifest
    key = own_key(db, source)
    fp = ev.fingerprint()
    now = datetime.now(UTC)
    specs = list(ev.targets)
    entries = {t.spec: t for t in m.targets} if m is not None else {}
    settings = {s: entries[s].settings.model_dump(mode="json") for s in specs if s in entries}
    started = (
        m.started_at
        if m is not None
        else noted.first_start
        if noted is not None
        else _first_start(r for t in ev.targets.values() for r in t.records)
    )
    attempts = sum(len(t.records) for t in ev.targets.values())
    run_row = (
        key, source.run_id, str(source.folder), str(fp["suite name"]),
        fp["suite version"], str(fp["suite fingerprint"]), str(fp["tool schemas"]),
        fp["system prompt"], int(fp["repeats"] or 1), fp["toolproof version"], _dumps(specs),
        _dumps(settings), getattr(m, "git_commit", None), getattr(m, "shard", None),
        m.status if m is not None else None, db.ts(started),
        db.ts(m.ended_at if m is not None else None), exit_code, attempts,
        m.model_dump_json(exclude_none=True) if m is not None else None, db.ts(now),
    )  # fmt: skip
    default_file = os.path.relpath(source.files[0], source.folder) if source.files else ""
    targets: list[tuple[Any, ...]] = []
    metrics: list[tuple[Any, ...]] = []
    for position, (spec, t) in enumerate(ev.targets.items()):
        entry = entries.get(spec)
        targets.append(
            (
                position, spec, entry.kind if entry else None,
                _dumps(entry.settings.model_dump(mode="json")) if entry else None,
                _dumps(entry.model_versions) if entry else None, _without_failures(t.summary),
                _histogram_json(noted.latencies.get(spec, ()))
                if noted is not None
                else latency_histogram(t.records),
                figures(t.summary),
            )
        )  # fmt: skip
        metrics += [(spec, *row) for row in metric_rows(t.summary)]
    rows: Iterable[tuple[Any, ...]]
    if noted is not None:
        log = noted
        rows = _Rows(lambda: log.rows(db, source, list(ev.targets), default_file))
    else:
        index = _line_index(source)
        rows = [
            _attempt_row(
                0, db, r, v, index.get((r.target or "", r.case_id, r.attempt)), default_file
            )
            for t in ev.targets.values()
            for r, v in t.pairs()
        ]
    if noted is not None:  # summed as they were noted: the rows are read once, to insert them
        results = noted.cases.results(ev, list(ev.targets))
    else:
        results = case_results(ev, rows)
    known = db.one(
        "SELECT 1 FROM suite_cases WHERE suite_fingerprint = ? LIMIT 1", (fp["suite fingerprint"],)
    )
    # a suite's cases are stored once: known, its fingerprint need not even be computed
    make_suite_rows = suite_cases(ev, str(fp["suite fingerprint"])) if known is None else None
    suite_rows = make_suite_rows() if make_suite_rows is not None else []
    with db.transaction():
        pk = _upsert_run(db, run_row)
        for table in ("attempts", "metrics", "case_results", "summary_failures", "run_targets"):
            db.execute(f"DELETE FROM {table} WHERE run_pk = ?", (pk,))
        db.executemany(
            "INSERT INTO run_targets (run_pk, position, target, kind, settings, "
            "model_versions, summary, latency_histogram, figures) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(pk, *row) for row in targets],
        )
        db.executemany(
            "INSERT INTO summary_failures (run_pk, target, part, failures) VALUES (?, ?, ?, ?)",
            (
                (pk, spec, part, text)
                for spec, t in ev.targets.items()
                for part, text in enumerate(failure_parts(t.summary))
            ),
        )
        db.executemany(
            "INSERT INTO case_results (run_pk, target, case_id, position, attempts, scored, "
            "passes, risk, kind, tags, failures, pass_at_k, pass_hat_k, flaky) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(pk, *row) for row in results],
        )
        if suite_rows:  # a suite's cases are stored once, for every run of it
            db.executemany(
                "INSERT INTO suite_cases (suite_fingerprint, case_id, position, prompt, contract, "
                "reason) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (suite_fingerprint, case_id) DO NOTHING",
                suite_rows,
            )
        db.executemany(
            "INSERT INTO metrics (run_pk, target, metric, value, low, high, k, n) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(pk, *row) for row in metrics],
        )
        db.executemany(
            "INSERT INTO attempts (run_pk, target, case_id, attempt, outcome, scored, passed, "
            "failure, stage, kind, risk, tags, expected_tools, actual_tools, findings, "
            "latency_ms, cost_usd, cached, started_at, records_file, records_line, "
            "records_offset) VALUES "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            ((pk, *row[1:]) for row in rows),
        )
    return pk


class _Rows:
    """Rows made afresh each time they are iterated."""

    def __init__(self, make: Callable[[], Iterator[tuple[Any, ...]]]) -> None:
        self._make = make

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return self._make()


def case_results(ev: Evaluation, rows: Iterable[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """One row per case and target, summed over its attempt rows (as :func:`_attempt_row`
    builds them), with its pass@k and pass^k: what a case list shows without the attempts."""
    tally = CaseTally()
    for r in rows:
        # r: run_pk, target, case, attempt, outcome, scored, passed, failure, stage, kind,
        #    risk, tags, ..., records_line at 20
        tally.add(r[1], r[2], r[5], r[6], r[7], r[9], r[10], r[11], r[20])
    return tally.results(ev)


class CaseTally:
    """The sums :func:`case_results` makes of attempt rows, made one attempt at a time."""

    def __init__(self) -> None:
        # target -> case -> attempts, scored, passes, risk, kind, tags, failures, first line
        self._acc: dict[str, dict[str, list[Any]]] = {}

    def add(
        self,
        target: str,
        case_id: str,
        scored: int,
        passed: int | None,
        failure: str | None,
        kind: str | None,
        risk: str | None,
        tags: str | None,
        line: int | None,
    ) -> None:
        cases = self._acc.get(target)
        if cases is None:
            cases = self._acc[target] = {}
        a = cases.get(case_id)
        if a is None:
            a = cases[case_id] = [0, 0, 0, None, None, None, set(), None]
        a[0] += 1
        a[1] += scored
        a[2] += passed or 0
        a[3] = a[3] or risk
        a[4] = a[4] or kind
        a[5] = a[5] or tags
        if failure is not None:
            a[6].add(failure)
        if line is not None and (a[7] is None or line < a[7]):
            a[7] = line

    def results(
        self, ev: Evaluation, targets: Iterable[str] | None = None
    ) -> list[tuple[Any, ...]]:
        """The rows, target after target (``targets``: only these, in this order)."""
        order = {c.id: i for i, c in enumerate(ev.suite.cases)}
        stability = {
            (name, c.case_id): c
            for name, t in ev.targets.items()
            for c in (t.summary.stability.per_case if t.summary.stability else [])
        }
        far = len(order)
        known = {c.id: c for c in ev.suite.cases}
        out = []
        for target in self._acc if targets is None else targets:
            for case_id, a in self._acc.get(target, {}).items():
                st = stability.get((target, case_id))
                case = known.get(case_id)
                if a[5] is None and case is not None:  # no attempt graded: the case's own
                    a[5] = _dumps(list(case.tags))
                    a[3] = a[3] or (case.risk.value if case.risk else None)
                out.append(
                    (
                        target, case_id, order.get(case_id, far + (a[7] or 0)), a[0], a[1],
                        a[2], a[3], a[4], a[5], _dumps(sorted(a[6])),
                        st.pass_at_k if st else None, st.pass_hat_k if st else None,
                        None if st is None else int(st.flaky),
                    )
                )  # fmt: skip
        return out


def suite_cases(ev: Evaluation, fingerprint: str) -> Callable[[], list[tuple[Any, ...]]] | None:
    """The suite's cases as a case page shows them (prompt, contract, reason), made when
    first needed; None when the suite graded is not the one the run was made with."""
    suite = ev.suite
    if suite.fingerprint() != fingerprint:
        return None

    def rows() -> list[tuple[Any, ...]]:
        from toolproof.suite._text import case_prompt, contract_text

        return [
            (fingerprint, c.id, i, case_prompt(c), contract_text(c), c.reason)
            for i, c in enumerate(suite.cases)
        ]

    return rows


#: Failures per row of ``summary_failures``.
FAILURES_PER_PART = 1000
_FAILURE_LIST: TypeAdapter[list[FailureItem]] = TypeAdapter(list[FailureItem])


def _without_failures(summary: Summary) -> str:
    """A summary's JSON with an empty failure list: its failures are stored apart, in
    parts (:func:`failure_parts`), so that neither is ever whole in memory."""
    return summary.model_copy(update={"failures": []}).model_dump_json()


def failure_parts(summary: Summary) -> Iterator[str]:
    """A summary's failure list as JSON lists of at most :data:`FAILURES_PER_PART` failures
    each, made one at a time (a failure log is read as it goes)."""
    rows = getattr(summary.failures, "rows", None)
    if callable(rows):  # a failure log: its rows are JSON-ready already
        data: list[dict[str, Any]] = []
        for row in rows():
            data.append(dict(zip(_FAILURE_FIELDS, row, strict=True)))
            if len(data) == FAILURES_PER_PART:
                yield _failure_json(data)
                data = []
        if data:
            yield _failure_json(data)
        return
    part: list[FailureItem] = []
    for item in summary.failures:
        part.append(item)
        if len(part) == FAILURES_PER_PART:
            yield _FAILURE_LIST.dump_json(part).decode("utf-8")
            part = []
    if part:
        yield _FAILURE_LIST.dump_json(part).decode("utf-8")


_FAILURE_FIELDS = tuple(FailureItem.model_fields)


def _failure_json(data: list[dict[str, Any]]) -> str:
    """``_FAILURE_LIST.dump_json`` of these failures: orjson writes the same bytes, faster
    (what it refuses, a lone surrogate, goes to pydantic, as before)."""
    try:
        return orjson.dumps(data).decode("utf-8")
    except TypeError:
        return _FAILURE_LIST.dump_json(_FAILURE_LIST.validate_python(data)).decode("utf-8")


def figures(summary: Summary) -> str:
    """A summary without its per-case lists (the failure list, per-case stability),
    which ``case_results`` holds: what a run page reads, a few kB for any run size."""
    data = summary.model_copy(update={"failures": []}).model_dump(mode="json")
    if isinstance(data.get("stability"), dict):
        data["stability"]["per_case"] = []
    return _dumps(data)


def latency_histogram(records: Iterable[Record]) -> str | None:
    """The latency histogram the run page draws, as JSON (None: no latency recorded)."""
    from toolproof.stats._latency import latencies

    return _histogram_json(latencies(records))


def _histogram_json(values: Sequence[float]) -> str | None:
    from dataclasses import asdict

    from toolproof.stats._latency import histogram

    made = histogram(values)  # no copy: an array of a million latencies stays one
    return None if made is None else _dumps(asdict(made))


_RUN_COLUMNS = (
    "run_key, run_id, folder, suite_name, suite_version, suite_fingerprint, tools_fingerprint, "
    "system_fingerprint, repeats, toolproof_version, targets, settings, git_commit, shard, "
    "status, started_at, ended_at, exit_code, attempts, manifest, stored_at"
)


def _upsert_run(db: Database, row: Sequence[Any]) -> int:
    names = [c.strip() for c in _RUN_COLUMNS.split(",")]
    updates = ", ".join(
        f"{c} = COALESCE(excluded.{c}, runs.{c})" if c == "exit_code" else f"{c} = excluded.{c}"
        for c in names
        if c != "run_key"
    )
    marks = ", ".join("?" for _ in names)
    got = db.one(
        f"INSERT INTO runs ({_RUN_COLUMNS}) VALUES ({marks}) "
        f"ON CONFLICT (run_key) DO UPDATE SET {updates} RETURNING id",
        row,
    )
    return int(got[0])


def _first_start(records: Iterable[Record]) -> datetime | None:
    times = [r.started_at for r in records if r.started_at is not None]
    return min(times) if times else None


def set_exit_code(db: Database, run_pk: int, exit_code: int) -> None:
    with db.transaction():
        db.execute("UPDATE runs SET exit_code = ? WHERE id = ?", (exit_code, run_pk))


def save_gate(
    db: Database,
    run_pk: int,
    result: Any,
    *,
    decided_at: datetime,
    baseline_key: str | None = None,
    baseline_folder: str | None = None,
) -> int | None:
    """Store a gate decision (a :class:`toolproof.gate.GateResult`). Idempotent on its time."""
    data = result.model_dump(mode="json")
    row = (
        run_pk, db.ts(decided_at), int(result.passed), int(result.exit_code), baseline_key,
        baseline_folder, _dumps(result.options), _dumps(data),
    )  # fmt: skip
    with db.transaction():
        got = db.one(
            "INSERT INTO gate_decisions (run_pk, decided_at, passed, exit_code, baseline_key, "
            "baseline_folder, options, result) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (run_pk, decided_at) DO NOTHING RETURNING id",
            row,
        )
        if got is None:
            return None
        pk = int(got[0])
        db.executemany(
            "INSERT INTO gate_targets (gate_pk, target, passed, findings) VALUES (?, ?, ?, ?)",
            [
                (pk, t.target, int(t.passed), _dumps([f.model_dump() for f in t.findings]))
                for t in result.targets
            ],
        )
    return pk
