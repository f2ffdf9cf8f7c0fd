"""run, score and gate write the store; history import, list and prune; store failures warn."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.store.helpers import CODE, RECORDS_A, RECORDS_B, SUITE_DIR, run_folder
from toolproof.cli import app
from toolproof.store import open_store

SCRIPT = SUITE_DIR / "script.yaml"


def _cli(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """The real command line: separate stdout and stderr, exit codes as a user sees them."""
    return subprocess.run(
        [sys.executable, "-m", "toolproof", *args],
        capture_output=True, text=True, env={**os.environ, "COLUMNS": "150", **(env or {})},
        check=False, cwd=cwd,
    )  # fmt: skip


def _run(
    out: Path, *extra: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return _cli(
        "run", str(SUITE_DIR), "--model", f"scripted:{SCRIPT}", "-q", "--no-cache",
        "--tags", "smoke", "-o", str(out), "--allow-code", *extra, env=env, cwd=cwd,
    )  # fmt: skip


def test_run_score_and_gate_write_the_store(store_url: str, tmp_path: Path) -> None:
    db = store_url  # a SQLite file, then a PostgreSQL database
    done = _run(tmp_path / "r", "--store", str(db))
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr
    events = [json.loads(x) for x in (tmp_path / "r" / "events.jsonl").read_text().splitlines()]
    assert [(e["event"], e["exit_code"]) for e in events] == [("run", 0)]
    gate = _cli("gate", str(tmp_path / "r"), "--allow-code", "--store", str(db))
    assert gate.returncode == 0, gate.stderr
    score = _cli("score", str(SUITE_DIR), str(RECORDS_B), "--store", str(db), "--allow-code")
    assert score.returncode == 0, score.stderr
    with open_store(db) as st:
        runs = {r.run_id: r for r in st.list_runs().items}
        assert set(runs) == {"r", "records-b"}
        r = runs["r"]
        assert r.exit_code == 0 and r.gate is not None and r.gate.passed
        assert r.attempts == st.attempts(r.id).total > 0
        assert r.git_commit is None or len(r.git_commit) == 40
        assert runs["records-b"].attempts == 69 and runs["records-b"].exit_code is None


def test_a_failed_gate_keeps_its_exit_code_and_is_stored(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    folder = run_folder(tmp_path, "bad", RECORDS_A)  # 77% strict pass: below the thresholds
    gate = _cli("gate", str(folder), "--allow-code", "--allow-partial", "--max-infra-errors", "5%", "--store", str(db))
    assert gate.returncode == 1
    with open_store(str(db)) as st:
        run = st.list_runs().items[0]
        assert run.gate is not None and run.gate.passed is False and run.gate.exit_code == 1
    event = json.loads((folder / "events.jsonl").read_text())
    assert event["event"] == "gate" and event["exit_code"] == 1


def test_no_store_and_store_off_write_nothing(tmp_path: Path) -> None:
    unset = {"TOOLPROOF_STORE": ""}
    assert _run(tmp_path / "a", "--no-store", env=unset, cwd=tmp_path).returncode == 0
    assert _run(tmp_path / "b", env={"TOOLPROOF_STORE": "off"}, cwd=tmp_path).returncode == 0
    score = _cli("score", str(SUITE_DIR), str(RECORDS_A), "--store", "off", "--allow-code", env=unset, cwd=tmp_path)
    assert score.returncode == 0
    assert (tmp_path / "a" / "records.jsonl").is_file()
    assert not (tmp_path / ".toolproof" / "history.db").exists()
    assert not (tmp_path / "a" / "events.jsonl").exists()


def test_the_default_store_is_under_the_working_folder(tmp_path: Path) -> None:
    done = _cli("score", str(SUITE_DIR), str(RECORDS_A), "--allow-code", env={"TOOLPROOF_STORE": ""}, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / ".toolproof" / "history.db").is_file()


@pytest.mark.parametrize(
    "where",
    ["FILE/history.db", "postgresql://postgres@/nodb?host=/nonexistent-dir&connect_timeout=2"],
)
def test_a_store_that_cannot_be_written_is_a_warning(tmp_path: Path, where: str) -> None:
    (tmp_path / "FILE").write_text("a file, not a folder")
    where = where.replace("FILE", str(tmp_path / "FILE"))
    done = _run(tmp_path / "r", "--store", where)
    assert done.returncode == 0
    assert done.stderr.count("warning: the history store was not updated") == 1
    assert (tmp_path / "r" / "records.jsonl").read_text().count("\n") > 0  # the run is kept
    gate = _cli("gate", str(tmp_path / "r"), "--allow-code", "--store", where)
    assert gate.returncode == 0 and "history store was not updated" in gate.stderr


def _import(*args: str) -> subprocess.CompletedProcess[str]:
    return _cli("history", "import", "--allow-code", *args)


def test_import_is_idempotent_and_rebuilds_the_store(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    for i, records in enumerate([RECORDS_A, RECORDS_B, RECORDS_A]):
        run_folder(runs, f"r{i}", records, days=i)
    db = tmp_path / "h.db"
    assert _cli("gate", str(runs / "r1"), "--allow-code", "--allow-partial", "--store", str(db)).returncode in (0, 1)
    (runs / "r0" / "events.jsonl").write_text(
        json.dumps({"format": "toolproof.event/1", "event": "run", "at": "2026-01-01T12:04:00+00:00",
                    "exit_code": 3}) + "\n"
    )  # fmt: skip

    def snapshot() -> object:
        with open_store(str(db)) as st:
            page = st.list_runs()
            return [
                (r.key, r.exit_code, r.attempts, r.gate.decided_at if r.gate else None,
                 sorted((m.metric, m.value, m.low, m.high) for m in st.get_run(r.id).metrics),  # type: ignore[union-attr]
                 [(a.case_id, a.passed, a.failure, a.records_line) for a in st.attempts(r.id, limit=500).items])
                for r in page.items
            ]  # fmt: skip

    first = _import(str(runs), "--store", str(db))
    assert first.returncode == 0, first.stderr
    assert "3 of 3 run(s)" in first.stdout
    before = snapshot()
    again = _import(str(runs), "--store", str(db))
    assert again.returncode == 0 and "0 new gate decision(s)" in again.stdout
    assert snapshot() == before
    db.unlink()
    for extra in (db.with_name("h.db-wal"), db.with_name("h.db-shm")):
        extra.unlink(missing_ok=True)
    assert _import(str(runs), "--store", str(db)).returncode == 0
    rebuilt = snapshot()
    assert rebuilt == before
    by_id = {key.split("@")[0]: (code, gate) for key, code, _, gate, *_ in rebuilt}  # type: ignore[misc]
    assert by_id["r0"][0] == 3 and by_id["r1"][1] is not None and by_id["r2"] == (None, None)


def test_import_reports_bad_folders_and_goes_on(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    run_folder(runs, "good")
    bad = run_folder(runs, "bad")
    (bad / "events.jsonl").write_text('{"format": "toolproof.event/1", "event": "run", "at": "x"}\n')
    broken = run_folder(runs, "broken")
    (broken / "records.jsonl").write_text('{"case_id": "no-such-case"}\n')
    done = _import(str(runs), "--store", str(tmp_path / "h.db"))
    assert done.returncode == 2
    errors = done.stderr.strip().splitlines()
    assert len(errors) == 2
    assert "events.jsonl:1" in errors[0] and "at" in errors[0] and "ISO 8601" in errors[0]
    assert "records.jsonl:1" in errors[1] and "no-such-case" in errors[1]
    assert "1 of 3 run(s)" in done.stdout
    missing = _import(str(tmp_path / "nothing-here"), "--store", str(tmp_path / "h.db"))
    assert missing.returncode == 2 and missing.stderr.startswith("error: ")
    assert "Traceback" not in missing.stderr


def test_history_list_and_prune(tmp_path: Path) -> None:
    db = str(tmp_path / "h.db")
    with open_store(db) as st:
        st.import_run(run_folder(tmp_path, "ancient"), trust=CODE)  # started 2026-01-01
        st.import_run(run_folder(tmp_path, "other", RECORDS_B, days=1), trust=CODE)
    listed = _cli("history", "list", "--store", db)
    assert listed.returncode == 0, listed.stderr
    assert "ancient" in listed.stdout and "other" in listed.stdout and "2 run(s)" in listed.stdout
    only = _cli("history", "list", "--store", db, "--target", "recorded:demo-model-b")
    assert "other" in only.stdout and "ancient" not in only.stdout
    page = _cli("history", "list", "--store", db, "--limit", "1")
    assert "1 more: --offset 1" in page.stdout
    kept = _cli("history", "prune", "--keep", "36500d", "--store", db)
    assert kept.returncode == 0 and "pruned 0 run(s)" in kept.stdout
    pruned = _cli("history", "prune", "--keep", "1d", "--store", db)
    assert pruned.returncode == 0 and "pruned 2 run(s)" in pruned.stdout
    bad = _cli("history", "prune", "--keep", "soon", "--store", db)
    assert bad.returncode == 2 and "--keep 'soon'" in bad.stderr


def test_model_output_is_escaped_in_the_list(tmp_path: Path) -> None:
    folder = run_folder(tmp_path, "[bold red]x[/]")
    result = CliRunner().invoke(
        app, ["history", "import", str(folder), "--store", str(tmp_path / "h.db"), "--allow-code"]
    )
    assert result.exit_code == 0, result.output
    listed = _cli("history", "list", "--store", str(tmp_path / "h.db"))
    assert "[bold red]x[/]" in listed.stdout


def test_tests_keep_the_store_out_of_the_checkout() -> None:
    root = Path(__file__).resolve().parents[2]
    where = os.environ.get("TOOLPROOF_STORE")  # set for the session by tests/conftest.py
    assert where and not Path(where).resolve().is_relative_to(root)


def test_run_grades_once_and_stores_what_its_report_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    # the module (``toolproof.evaluate``, the attribute, is the function)
    evaluate_module = importlib.import_module("toolproof.evaluate")

    calls = []
    real = evaluate_module.evaluate

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(evaluate_module, "evaluate", counted)
    db = tmp_path / "h.db"
    done = CliRunner().invoke(
        app,
        ["run", str(SUITE_DIR), "--model", f"scripted:{SCRIPT}", "-q", "--no-cache",
         "--tags", "smoke", "-o", str(tmp_path / "r"), "--allow-code", "--store", str(db)],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert len(calls) == 1
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())["targets"]
    with open_store(str(db)) as st:
        run = st.list_runs().items[0]
        (target,) = run.targets
        assert run.headline[target].k == summary[target]["strict_pass"]["k"]
        assert run.attempts == st.attempts(run.id).total == summary[target]["attempts"]
