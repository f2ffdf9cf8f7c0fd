"""Schema versions and the migration path."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.store.helpers import CODE, run_folder
from toolproof.errors import UserError
from toolproof.store import SCHEMA_VERSION, open_store
from toolproof.store._db import connect
from toolproof.store._schema import STEPS, current_version, migrate


def test_steps_are_numbered_in_order() -> None:
    assert [s.version for s in STEPS] == list(range(1, len(STEPS) + 1))
    assert SCHEMA_VERSION == STEPS[-1].version >= 2


def test_an_old_store_is_migrated_and_keeps_its_data(store_url: str, tmp_path: Path) -> None:
    db = connect(store_url)
    assert current_version(db) == 0
    assert migrate(db, target=1) == 0
    assert current_version(db) == 1
    db.close()
    with open_store(store_url) as st:  # opening migrates to the latest
        assert current_version(st.db) == SCHEMA_VERSION
        pk = st.import_run(run_folder(tmp_path, "v1"), trust=CODE).run_pk
        assert st.attempts(pk).total == 76
        st.db.execute(
            "INSERT INTO judge_results (run_pk, target, case_id, attempt, judge, score, passed, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (pk, "recorded:demo-model", "lookup-exact-id", 0, "j", 0.5, 1,
             st.db.ts(datetime.now(UTC))),
        )  # fmt: skip
        described = st.db.all("SELECT version, description FROM schema_version ORDER BY version")
        assert [v for v, _ in described] == [1, 2, 3, 4]
        assert [d for _, d in described] == [step.description for step in STEPS]


def _as_version_2(store_url: str) -> None:
    """Take the store back to what toolproof wrote at schema version 2 (before step 3)."""
    db = connect(store_url)
    with db.transaction():
        db.execute("DROP TABLE summary_failures")
        db.execute("DELETE FROM schema_version WHERE version = 4")
        db.execute("DROP TABLE case_results")
        db.execute("DROP TABLE suite_cases")
        db.execute("ALTER TABLE run_targets DROP COLUMN latency_histogram")
        db.execute("ALTER TABLE run_targets DROP COLUMN figures")
        db.execute("DELETE FROM schema_version WHERE version = 3")
    db.close()


def test_a_version_2_store_is_migrated_and_its_runs_still_open_in_the_viewer(
    store_url: str, tmp_path: Path
) -> None:
    from toolproof.web import StoreSource

    with open_store(store_url) as st:
        st.import_run(run_folder(tmp_path, "v2"), trust=CODE)
    source = StoreSource(store_url, CODE)
    opened = source.open("v2")
    new = opened.view
    new.entries = source.with_texts(opened, new.entries)  # contracts, from the store
    _as_version_2(store_url)
    with open_store(store_url) as st:
        assert current_version(st.db) == SCHEMA_VERSION
        assert st.db.one("SELECT COUNT(*) FROM case_results")[0] == 0
    old = StoreSource(store_url, CODE).open("v2").view  # summed from its attempts instead

    def rows(view: object) -> list[tuple[object, ...]]:
        return [
            (e.target, e.case_id, e.status, e.passes, e.attempts, e.failures, e.tags, e.contract)
            for e in view.entries  # type: ignore[attr-defined]
        ]

    assert rows(old) == rows(new) and len(rows(new)) == 76
    assert [t.metrics for t in old.targets] == [t.metrics for t in new.targets]


def test_a_version_3_store_keeps_its_failures_in_the_summary(
    store_url: str, tmp_path: Path
) -> None:
    import json

    with open_store(store_url) as st:
        pk = st.import_run(run_folder(tmp_path, "v3"), trust=CODE).run_pk
        whole = {t.target: t.summary for t in st.get_run(pk).targets}
    assert all(s["failures"] for s in whole.values())
    db = connect(store_url)  # as toolproof wrote it at version 3: the failures in the summary
    with db.transaction():
        for target, summary in whole.items():
            db.execute(
                "UPDATE run_targets SET summary = ? WHERE run_pk = ? AND target = ?",
                (json.dumps(summary), pk, target),
            )
        db.execute("DROP TABLE summary_failures")
        db.execute("DELETE FROM schema_version WHERE version = 4")
    db.close()
    with open_store(store_url) as st:
        assert current_version(st.db) == SCHEMA_VERSION
        assert st.db.one("SELECT COUNT(*) FROM summary_failures")[0] == 0
        assert {t.target: t.summary for t in st.get_run(pk).targets} == whole
        light = st.get_run(pk, light=True).targets
        assert all(t.summary["failures"] == [] for t in light)


def test_a_store_newer_than_toolproof_is_refused(store_url: str) -> None:
    open_store(store_url).close()
    db = connect(store_url)
    with db.transaction():
        db.execute(
            "INSERT INTO schema_version (version, applied_at, description) VALUES (?, ?, ?)",
            (SCHEMA_VERSION + 1, db.ts(datetime(2030, 1, 1)), "future"),
        )
    db.close()
    with pytest.raises(UserError, match="newer than this toolproof reads"):
        open_store(store_url)


def test_locations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from toolproof.store import resolve_location

    monkeypatch.delenv("TOOLPROOF_STORE", raising=False)
    assert resolve_location() == str(Path(".toolproof") / "history.db")
    assert resolve_location(enabled=False) is None
    assert resolve_location("off") is None
    monkeypatch.setenv("TOOLPROOF_STORE", "OFF")
    assert resolve_location() is None
    monkeypatch.setenv("TOOLPROOF_STORE", "postgresql://u@h/db")
    assert resolve_location() == "postgresql://u@h/db"
    assert resolve_location(str(tmp_path / "x.db")) == str(tmp_path / "x.db")
    with pytest.raises(UserError, match="give a file path"):
        connect("mysql://u@h/db")
    st = open_store(f"sqlite:///{tmp_path / 'y.db'}")
    assert st.kind == "sqlite" and (tmp_path / "y.db").is_file()
    st.close()


def test_a_password_never_shows_in_messages() -> None:
    with pytest.raises(UserError) as info:
        open_store("postgresql://me:s3cret@/nodb?host=/nonexistent-socket-dir&connect_timeout=1")
    assert "s3cret" not in str(info.value) and "***" in str(info.value)
