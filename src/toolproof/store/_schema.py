"""The schema, as ordered migration steps, one schema for SQLite and PostgreSQL.

Each step moves the store from version N-1 to N. ``schema_version`` holds one
row per applied step. :func:`migrate` applies the missing steps in one
transaction, under a lock (SQLite's write lock; a PostgreSQL advisory lock),
so two processes opening a new store at once create it once. A store newer
than this toolproof is refused rather than written to.

To change the schema, append a step: never edit a released one.

JSON columns hold JSON text; booleans are 0/1 integers; timestamps are
TIMESTAMPTZ on PostgreSQL and ISO 8601 UTC text on SQLite (fixed width, so
text order is time order).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from toolproof.errors import UserError
from toolproof.store._db import Database


@dataclass(frozen=True)
class Step:
    version: int
    description: str
    statements: tuple[str, ...]


STEPS: tuple[Step, ...] = (
    Step(
        1,
        "runs, targets, metrics, attempts and gate decisions",
        (
            """CREATE TABLE runs (
                id {pk},
                run_key TEXT NOT NULL UNIQUE,
                run_id TEXT NOT NULL,
                folder TEXT,
                suite_name TEXT NOT NULL,
                suite_version TEXT,
                suite_fingerprint TEXT NOT NULL,
                tools_fingerprint TEXT NOT NULL,
                system_fingerprint TEXT,
                repeats INTEGER NOT NULL,
                toolproof_version TEXT,
                targets TEXT NOT NULL,
                settings TEXT NOT NULL,
                git_commit TEXT,
                shard TEXT,
                status TEXT,
                started_at {ts},
                ended_at {ts},
                exit_code INTEGER,
                attempts INTEGER NOT NULL,
                manifest TEXT,
                stored_at {ts} NOT NULL
            )""",
            "CREATE INDEX runs_suite_started ON runs (suite_name, started_at)",
            "CREATE INDEX runs_started ON runs (started_at)",
            """CREATE TABLE run_targets (
                run_pk {bigint} NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
                position INTEGER NOT NULL,
                target TEXT NOT NULL,
                kind TEXT,
                settings TEXT,
                model_versions TEXT,
                summary TEXT NOT NULL,
                PRIMARY KEY (run_pk, target)
            )""",
            "CREATE INDEX run_targets_target ON run_targets (target, run_pk)",
            """CREATE TABLE metrics (
                run_pk {bigint} NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
                target TEXT NOT NULL,
                metric TEXT NOT NULL,
                value DOUBLE PRECISION,
                low DOUBLE PRECISION,
                high DOUBLE PRECISION,
                k INTEGER,
                n INTEGER,
                PRIMARY KEY (run_pk, target, metric)
            )""",
            """CREATE TABLE attempts (
                run_pk {bigint} NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
                target TEXT NOT NULL,
                case_id TEXT NOT NULL,
                attempt INTEGER NOT NULL,
                outcome TEXT NOT NULL,
                scored INTEGER NOT NULL,
                passed INTEGER,
                failure TEXT,
                stage TEXT,
                kind TEXT,
                risk TEXT,
                tags TEXT,
                expected_tools TEXT,
                actual_tools TEXT,
                findings TEXT,
                latency_ms DOUBLE PRECISION,
                cost_usd DOUBLE PRECISION,
                cached INTEGER NOT NULL,
                started_at {ts},
                records_file TEXT NOT NULL,
                records_line INTEGER,
                records_offset {bigint},
                PRIMARY KEY (run_pk, target, case_id, attempt)
            )""",
            "CREATE INDEX attempts_failure ON attempts (run_pk, failure)",
            """CREATE TABLE gate_decisions (
                id {pk},
                run_pk {bigint} NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
                decided_at {ts} NOT NULL,
                passed INTEGER NOT NULL,
                exit_code INTEGER NOT NULL,
                baseline_key TEXT,
                baseline_folder TEXT,
                options TEXT,
                result TEXT NOT NULL,
                UNIQUE (run_pk, decided_at)
            )""",
            """CREATE TABLE gate_targets (
                gate_pk {bigint} NOT NULL REFERENCES gate_decisions (id) ON DELETE CASCADE,
                target TEXT NOT NULL,
                passed INTEGER NOT NULL,
                findings TEXT NOT NULL,
                PRIMARY KEY (gate_pk, target)
            )""",
        ),
    ),
    Step(
        2,
        "judge results and judge calibrations",
        (
            """CREATE TABLE judge_results (
                id {pk},
                run_pk {bigint} NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
                target TEXT NOT NULL,
                case_id TEXT NOT NULL,
                attempt INTEGER NOT NULL,
                judge TEXT NOT NULL,
                score DOUBLE PRECISION,
                passed INTEGER,
                detail TEXT,
                created_at {ts} NOT NULL
            )""",
            "CREATE INDEX judge_results_run ON judge_results (run_pk, target, case_id)",
            """CREATE TABLE calibrations (
                id {pk},
                judge TEXT NOT NULL,
                suite_name TEXT,
                created_at {ts} NOT NULL,
                agreement DOUBLE PRECISION,
                n INTEGER,
                detail TEXT
            )""",
        ),
    ),
    Step(
        3,
        "per-case results, suite cases and latency histograms, for the viewer",
        (
            """CREATE TABLE case_results (
                run_pk {bigint} NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
                target TEXT NOT NULL,
                case_id TEXT NOT NULL,
                position INTEGER NOT NULL,
                attempts INTEGER NOT NULL,
                scored INTEGER NOT NULL,
                passes INTEGER NOT NULL,
                risk TEXT,
                kind TEXT,
                tags TEXT,
                failures TEXT,
                pass_at_k DOUBLE PRECISION,
                pass_hat_k DOUBLE PRECISION,
                flaky INTEGER,
                PRIMARY KEY (run_pk, target, case_id)
            )""",
            "CREATE INDEX case_results_order ON case_results (run_pk, position)",
            """CREATE TABLE suite_cases (
                suite_fingerprint TEXT NOT NULL,
                case_id TEXT NOT NULL,
                position INTEGER NOT NULL,
                prompt TEXT,
                contract TEXT,
                reason TEXT,
                PRIMARY KEY (suite_fingerprint, case_id)
            )""",
            "ALTER TABLE run_targets ADD COLUMN latency_histogram TEXT",
            # the summary without its per-case lists (failures, per-case stability)
            "ALTER TABLE run_targets ADD COLUMN figures TEXT",
        ),
    ),
    Step(
        4,
        "a summary's failure list in parts, apart from the summary",
        (
            # run_targets.summary holds the failure list of the runs stored before this
            # step; from it on, an empty list, and the failures here, in order
            """CREATE TABLE summary_failures (
                run_pk {bigint} NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
                target TEXT NOT NULL,
                part INTEGER NOT NULL,
                failures TEXT NOT NULL,
                PRIMARY KEY (run_pk, target, part)
            )""",
        ),
    ),
)

#: The schema version this toolproof writes.
LATEST = STEPS[-1].version


def current_version(db: Database) -> int:
    """The store's schema version (0: empty)."""
    if db.kind == "sqlite":
        exists = db.one("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                        ("schema_version",))
    else:
        exists = db.one("SELECT to_regclass(?)", ("schema_version",))
        exists = exists if exists and exists[0] is not None else None
    if not exists:
        return 0
    row = db.one("SELECT MAX(version) FROM schema_version")
    return int(row[0]) if row and row[0] is not None else 0


def migrate(db: Database, target: int = LATEST) -> int:
    """Bring the store to ``target`` (default: the latest). Returns the version it was at."""
    with db.transaction():
        db.lock_schema()
        before = current_version(db)
        if before > LATEST:
            raise UserError(
                f"the store {db.url} has schema version {before}, newer than this "
                f"toolproof reads ({LATEST}): upgrade toolproof"
            )
        if before == 0:
            db.execute(
                "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, "
                f"applied_at {db.types['ts']} NOT NULL, description TEXT NOT NULL)"
            )
        for step in STEPS:
            if before < step.version <= target:
                for statement in step.statements:
                    db.execute(statement.format(**db.types))
                db.execute(
                    "INSERT INTO schema_version (version, applied_at, description) "
                    "VALUES (?, ?, ?)",
                    (step.version, db.ts(datetime.now(UTC)), step.description),
                )
    return before
