"""Two writers at once (two CI jobs sharing a store): nothing lost, nothing corrupted."""

from __future__ import annotations

import multiprocessing as mp
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.store.helpers import CODE, RECORDS_B, run_folder
from toolproof.store import open_store

RUNS_EACH = 5
GATES_EACH = 10


def _writer(url: str, folders: list[str], shared: str, start: object, name: str) -> None:
    """Import its own run folders and a shared one, and store gate decisions, all at once."""
    import time

    from toolproof.evaluate import load_run
    from toolproof.gate import run_gate

    start.wait(60)  # type: ignore[attr-defined]
    began = time.time()
    with open_store(url) as st:  # both open a new store at once: one creates the schema
        for folder in folders:
            st.import_run(folder, trust=CODE)
            st.import_run(shared, trust=CODE)  # the same run from both writers, again and again
        pk = st.import_run(shared, trust=CODE).run_pk
        result = run_gate(load_run(shared, trust=CODE), None)
        base = datetime(2026, 3, 1, tzinfo=UTC) + timedelta(hours=0 if name == "a" else 1)
        for i in range(GATES_EACH):
            st.save_gate(pk, result, decided_at=base + timedelta(seconds=i))
    Path(folders[0]).with_name(f"span-{name}").write_text(f"{began} {time.time()}")


def _race(url: str, tmp_path: Path) -> None:
    shared = str(run_folder(tmp_path, "shared", RECORDS_B))
    mine = {
        w: [str(run_folder(tmp_path, f"{w}{i}", days=i)) for i in range(RUNS_EACH)] for w in "ab"
    }
    ctx = mp.get_context("spawn")
    start = ctx.Event()
    procs = [
        ctx.Process(target=_writer, args=(url, mine[w], shared, start, w)) for w in "ab"
    ]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(240)
    assert [p.exitcode for p in procs] == [0, 0]
    (a0, a1), (b0, b1) = (map(float, (tmp_path / f"span-{w}").read_text().split()) for w in "ab")
    assert a0 < b1 and b0 < a1  # the two writers really wrote at the same time
    with open_store(url) as st:
        runs = st.list_runs(limit=100)
        ids = sorted(r.run_id for r in runs.items)
        assert ids == sorted(["shared", *(f"{w}{i}" for w in "ab" for i in range(RUNS_EACH))])
        assert runs.total == 2 * RUNS_EACH + 1
        for r in runs.items:  # every run complete: no attempt lost or doubled
            assert st.attempts(r.id, limit=1).total == r.attempts == (69 if r.run_id == "shared" else 76)
        total = st.db.one("SELECT COUNT(*) FROM attempts")[0]
        assert total == 2 * RUNS_EACH * 76 + 69
        detail = st.get_run("shared")
        assert detail is not None and len(detail.gates) == 2 * GATES_EACH
        assert st.db.one("SELECT COUNT(*) FROM gate_targets")[0] == 2 * GATES_EACH
        assert st.db.one("SELECT COUNT(*) FROM schema_version")[0] >= 1


def test_two_processes_write_one_sqlite_store(tmp_path: Path) -> None:
    db = tmp_path / "history.db"
    _race(str(db), tmp_path)
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []


def test_two_processes_write_one_postgresql_store(pg_url: str, tmp_path: Path) -> None:
    _race(pg_url, tmp_path)
