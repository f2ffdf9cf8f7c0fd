"""The store's write and read API, on SQLite and on a real PostgreSQL server."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.store.helpers import CODE, RECORDS_A, RECORDS_B, T0, run_folder, suite
from toolproof.errors import UserError
from toolproof.evaluate import evaluate, load_run
from toolproof.gate import run_gate
from toolproof.stats import Summary
from toolproof.store import SCHEMA_VERSION, open_store


def test_a_run_is_stored_with_metrics_attempts_and_pointers(store_url: str, tmp_path: Path) -> None:
    folder = run_folder(tmp_path, "r1")
    ev = load_run(folder, trust=CODE)
    with open_store(store_url) as st:
        pk = st.save(ev, [folder / "records.jsonl"], exit_code=0)
        detail = st.get_run(pk)
        assert detail is not None
        run = detail.run
        assert (run.run_id, run.suite_name, run.exit_code, run.attempts) == ("r1", "support", 0, 76)
        assert run.targets == ["recorded:demo-model"]
        assert run.git_commit == "0123456789abcdef0123456789abcdef01234567"
        assert run.started_at == T0 and run.status == "complete"
        assert run.suite_fingerprint == suite().fingerprint()
        summary = ev.targets["recorded:demo-model"].summary
        metrics = {m.metric: m for m in detail.metrics}
        sp = metrics["strict_pass"]
        assert (sp.k, sp.n) == (summary.strict_pass.k, summary.strict_pass.n)
        assert sp.low == pytest.approx(summary.strict_pass.low)
        assert sp.high == pytest.approx(summary.strict_pass.high)
        assert metrics["selection"].n == summary.selection.n
        assert metrics["macro_f1"].value == pytest.approx(summary.macro_f1)
        assert run.headline["recorded:demo-model"] == sp
        # The whole summary is kept and reads back as a Summary.
        assert Summary.model_validate(detail.targets[0].summary) == summary

        page = st.attempts(pk, limit=10)
        assert page.total == 76 and len(page.items) == 10
        everything = [a for off in range(0, 76, 25) for a in st.attempts(pk, offset=off, limit=25).items]
        assert len({(a.case_id, a.attempt) for a in everything}) == 76
        failed = st.attempts(pk, passed=False, limit=100)
        assert failed.total == summary.strict_pass.n - summary.strict_pass.k
        assert all(a.failure is not None and a.stage is not None for a in failed.items)
        assert all(a.findings and a.findings[0]["message"] for a in failed.items)
        wrong = st.attempts(pk, failure="wrong_arguments")
        assert wrong.total == summary.failure_counts.get("wrong_arguments", 0) > 0
        assert any(f["stage"] == "values" and "country" in f["message"] for a in wrong.items for f in a.findings)

        # Each attempt points at its line of the run folder's records.
        lines = (folder / "records.jsonl").read_text().splitlines()
        for a in everything:
            assert a.records_path == (folder / "records.jsonl").resolve()
            assert a.records_line is not None
            raw = json.loads(lines[a.records_line - 1])
            assert (raw["case_id"], raw.get("attempt", 0)) == (a.case_id, a.attempt)
            assert st.read_raw(a) == raw


def test_storing_again_replaces_and_keeps_one_run(store_url: str, tmp_path: Path) -> None:
    folder = run_folder(tmp_path, "r1")
    ev = load_run(folder, trust=CODE)
    with open_store(store_url) as st:
        first = st.save(ev, [folder / "records.jsonl"], exit_code=3)
        second = st.save(ev, [folder / "records.jsonl"])  # as `score` would: no exit code
        assert first == second
        page = st.list_runs()
        assert page.total == 1 and page.items[0].exit_code == 3
        assert st.attempts(first).total == 76


def test_a_bare_records_file_is_keyed_by_its_bytes(store_url: str, tmp_path: Path) -> None:
    ev = evaluate(suite(), [RECORDS_A], trust=CODE)
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(RECORDS_A.read_bytes())
    with open_store(store_url) as st:
        a = st.save(ev, [RECORDS_A])
        assert st.save(evaluate(suite(), [copy], trust=CODE), [copy]) == a
        changed = tmp_path / "changed.jsonl"
        changed.write_bytes(RECORDS_A.read_bytes()[:-1] + b"\n\n")
        assert st.save(evaluate(suite(), [changed], trust=CODE), [changed]) != a
        assert st.list_runs().total == 2


def test_runs_are_listed_and_filtered(store_url: str, tmp_path: Path) -> None:
    with open_store(store_url) as st:
        for i in range(5):
            records = RECORDS_A if i % 2 == 0 else RECORDS_B
            st.import_run(run_folder(tmp_path, f"r{i}", records, days=i), trust=CODE)
        page = st.list_runs(limit=2)
        assert page.total == 5 and [r.run_id for r in page.items] == ["r4", "r3"]
        assert [r.run_id for r in st.list_runs(limit=2, offset=4).items] == ["r0"]
        b = st.list_runs(target="recorded:demo-model-b")
        assert [r.run_id for r in b.items] == ["r3", "r1"]
        assert st.list_runs(suite="no-such-suite").total == 0
        assert st.suites() == ["support"]
        assert st.targets() == st.targets("support") == ["recorded:demo-model", "recorded:demo-model-b"]
        assert st.targets("no-such-suite") == []
        assert st.get_run("r2") is not None and st.get_run("nope") is None


def test_metric_history_over_the_last_runs(store_url: str, tmp_path: Path) -> None:
    with open_store(store_url) as st:
        for i in range(6):
            st.import_run(run_folder(tmp_path, f"n{i}", days=i), trust=CODE)
        st.import_run(run_folder(tmp_path, "other", RECORDS_B, days=9), trust=CODE)
        points = st.history("support", "recorded:demo-model", last=4)
        assert [p.run_id for p in points] == ["n2", "n3", "n4", "n5"]  # oldest first
        sp = points[-1].metrics["strict_pass"]
        assert sp.low is not None and sp.high is not None and sp.low <= sp.value <= sp.high  # type: ignore[operator]
        only = st.history("support", "recorded:demo-model", metrics=["selection"], last=2)
        assert [set(p.metrics) for p in only] == [{"selection"}, {"selection"}]
        assert st.history("support", "nobody") == []


def test_gate_decisions_are_kept(store_url: str, tmp_path: Path) -> None:
    folder = run_folder(tmp_path, "g")
    ev = load_run(folder, trust=CODE)
    result = run_gate(ev, None)
    with open_store(store_url) as st:
        pk = st.save(ev, [folder / "records.jsonl"])
        at = datetime(2026, 2, 1, tzinfo=UTC)
        assert st.save_gate(pk, result, decided_at=at, baseline_key="base@x") is not None
        assert st.save_gate(pk, result, decided_at=at) is None  # the same decision again
        detail = st.get_run(pk)
        assert detail is not None and len(detail.gates) == 1
        gate = detail.gates[0]
        assert gate.passed is result.passed and gate.exit_code == result.exit_code
        assert gate.decided_at == at and gate.baseline_key == "base@x"
        assert gate.targets == {t.target: t.passed for t in result.targets}
        assert gate.result["suite"] == result.suite
        assert st.list_runs().items[0].gate == gate


def test_prune_deletes_old_runs_and_everything_of_them(store_url: str, tmp_path: Path) -> None:
    with open_store(store_url) as st:
        old = st.import_run(run_folder(tmp_path, "old", days=0), trust=CODE).run_pk
        st.save_gate(old, run_gate(load_run(tmp_path / "old", trust=CODE), None), decided_at=T0)
        st.import_run(run_folder(tmp_path, "new", days=100), trust=CODE)
        assert st.prune(T0 + timedelta(days=50)) == 1
        assert [r.run_id for r in st.list_runs().items] == ["new"]
        for table in ("attempts", "metrics", "run_targets", "gate_decisions", "case_results",
                      "summary_failures"):  # fmt: skip
            rows = st.db.one(f"SELECT COUNT(*) FROM {table} WHERE run_pk = ?", (old,))
            assert rows[0] == 0, table
        assert st.db.one("SELECT COUNT(*) FROM gate_targets")[0] == 0
        kept = st.db.one("SELECT COUNT(*) FROM suite_cases")[0]
        assert kept == len(suite().cases)  # "new" runs the same suite: its cases stay
        assert st.prune(T0) == 0
        assert st.prune(T0 + timedelta(days=200)) == 1
        assert st.db.one("SELECT COUNT(*) FROM suite_cases")[0] == 0


def test_case_results_sum_the_attempts_and_light_summaries_drop_the_per_case_lists(
    store_url: str, tmp_path: Path
) -> None:
    folder = run_folder(tmp_path, "r1")
    ev = load_run(folder, trust=CODE)
    with open_store(store_url) as st:
        pk = st.import_run(folder, trust=CODE).run_pk
        attempts = st.attempts(pk, limit=1000).items
        rows = st.cases(pk)
        present = {a.case_id for a in attempts}
        assert [r.case_id for r in rows] == [c.id for c in ev.suite.cases if c.id in present]
        for r in rows:
            mine = [a for a in attempts if a.case_id == r.case_id and a.target == r.target]
            assert r.attempts == len(mine) and r.scored == sum(a.scored for a in mine)
            assert r.passes == sum(bool(a.passed) for a in mine)
            assert r.failures == sorted({a.failure for a in mine if a.failure})
        texts = st.case_texts(ev.suite.fingerprint(), ["lookup-not-search", "nope"])
        assert list(texts) == ["lookup-not-search"]
        prompt, contract, reason = texts["lookup-not-search"]
        assert prompt is not None and "ORD-377140" in prompt
        assert contract is not None and contract.startswith("call: lookup_order")
        assert reason is not None and reason.startswith("The name and the date")
        full, light = st.get_run(pk), st.get_run(pk, light=True)
        assert full is not None and light is not None
        (whole,), (part,) = full.targets, light.targets
        assert whole.summary["failures"] and part.summary["failures"] == []
        assert whole.summary["stability"]["per_case"]
        assert part.summary["stability"]["per_case"] == []

        def rest(d: dict[str, object]) -> dict[str, object]:
            st = {k: v for k, v in d["stability"].items() if k != "per_case"}  # type: ignore[attr-defined]
            return {**{k: v for k, v in d.items() if k != "failures"}, "stability": st}

        assert rest(whole.summary) == rest(part.summary)
        assert Summary.model_validate(part.summary).strict_pass == ev.summaries[
            "recorded:demo-model"
        ].strict_pass
        first = st.run_version(pk)
        assert first is not None and first[0] == pk and first[2] is None
        st.save_gate(pk, run_gate(ev), decided_at=T0)
        gated = st.run_version("r1")
        assert gated is not None and gated[2] is not None and gated[:2] == first[:2]
        st.import_run(folder, trust=CODE)  # stored again
        again = st.run_version(pk)
        assert again is not None and again[1] != first[1]
        assert st.run_version("nope") is None


def test_a_summary_s_failures_are_stored_apart_in_parts(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolproof.store import _write

    folder = run_folder(tmp_path, "r1")
    ev = load_run(folder, trust=CODE)
    summary = ev.targets["recorded:demo-model"].summary
    n = len(summary.failures)
    assert n > 7
    monkeypatch.setattr(_write, "FAILURES_PER_PART", 3)
    with open_store(store_url) as st:
        pk = st.save(ev, [folder / "records.jsonl"])
        stored = st.db.one("SELECT summary FROM run_targets WHERE run_pk = ?", (pk,))[0]
        assert json.loads(stored)["failures"] == []
        parts = st.db.all(
            "SELECT part, failures FROM summary_failures WHERE run_pk = ? ORDER BY part", (pk,)
        )
        assert [p for p, _ in parts] == list(range((n + 2) // 3))
        assert [len(json.loads(f)) for _, f in parts][:-1] == [3] * (len(parts) - 1)
        detail = st.get_run(pk)
        assert detail is not None
        whole = detail.targets[0].summary
        assert whole["failures"] == summary.model_dump(mode="json")["failures"]
        assert Summary.model_validate(whole) == summary
        st.save(ev, [folder / "records.jsonl"])  # stored again: the parts are replaced
        again = st.db.one("SELECT COUNT(*) FROM summary_failures WHERE run_pk = ?", (pk,))[0]
        assert again == len(parts)


def test_attempts_of_an_unknown_run_is_an_error(store_url: str) -> None:
    with open_store(store_url) as st, pytest.raises(UserError, match="no run 'x'"):
        st.attempts("x")


def test_schema_is_at_the_latest_version(store_url: str) -> None:
    with open_store(store_url) as st:
        versions = [r[0] for r in st.db.all("SELECT version FROM schema_version ORDER BY version")]
        assert versions == list(range(1, SCHEMA_VERSION + 1))
    with open_store(store_url) as st:  # opening again applies nothing twice
        assert st.db.one("SELECT COUNT(*) FROM schema_version")[0] == SCHEMA_VERSION


@pytest.mark.parametrize("batch", [1024, 7])
def test_rows_noted_while_grading_are_the_rows_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    import sqlite3

    from toolproof.store import _write
    from toolproof.store._write import AttemptLog

    monkeypatch.setattr(_write, "_LOG_BATCH", batch)  # 7: rows pickled in many batches

    # two targets in one bare records file (no manifest), one attempt recorded twice: first
    # without a model answer (a rate limit), then answered (as --resume --retry-failed writes)
    records = tmp_path / "both.jsonl"
    lines = RECORDS_A.read_text().splitlines(keepends=True)
    first = json.loads(lines[0])
    limited = {k: first[k] for k in ("format", "case_id", "target", "attempt") if k in first}
    limited["outcome"] = "rate_limited"
    unanswered = json.dumps(limited) + "\n"
    records.write_text(unanswered + "".join(lines[1:]) + RECORDS_B.read_text() + lines[0])
    noted = AttemptLog()
    ev = evaluate(suite(), [records], trust=CODE, keep_records=False, on_attempt=noted)
    assert ev.superseded == 1
    again = evaluate(suite(), [records], trust=CODE, keep_records=False)
    with open_store(str(tmp_path / "noted.db")) as st:
        st.save(ev, [records], noted=noted)
    with open_store(str(tmp_path / "read.db")) as st:
        st.save(again, [records])

    def table(db: str, name: str) -> list[tuple[object, ...]]:
        with sqlite3.connect(tmp_path / db) as con:
            cols = [r[1] for r in con.execute(f"PRAGMA table_info({name})")]
            keep = ", ".join(c for c in cols if c not in ("id", "stored_at"))
            return con.execute(f"SELECT {keep} FROM {name} ORDER BY rowid").fetchall()

    for name in ("attempts", "case_results", "run_targets", "runs", "metrics"):
        assert table("noted.db", name) == table("read.db", name), name
    rows = table("noted.db", "attempts")
    assert len(rows) == 76 + 69
    assert any(r[-1] for r in rows)  # byte offsets into the records file are kept


def test_a_copied_run_folder_is_a_run_of_its_own(store_url: str, tmp_path: Path) -> None:
    """The user's steps: copy a stored run folder, cut its records to 10 lines and gate
    the copy. Before, the copy shares the manifest's run ID and start, so it took over
    the original's row: its counts (10/10) and its gate column."""
    from toolproof.store._hooks import store_gate

    folder = run_folder(tmp_path, "shop-b3")
    original = load_run(folder, trust=CODE)
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    lines = (copy / "records.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (copy / "records.jsonl").write_text("".join(lines[:10]), encoding="utf-8")
    cut = load_run(copy, trust=CODE)
    with open_store(store_url) as st:
        store_gate(original, None, run_gate(original, None), store_url)
        (before,) = st.list_runs().items
        store_gate(cut, original, run_gate(cut, original), store_url)
        page = st.list_runs()
        assert page.total == 2
        by_folder = {Path(r.folder).name: r for r in page.items}
        kept = by_folder["shop-b3"]
        assert (kept.headline["recorded:demo-model"].n, kept.attempts) == (75, 76)  # 1 timeout
        assert kept.gate is not None and kept.gate == before.gate  # its own decision
        assert by_folder["copy"].attempts == 10 and by_folder["copy"].key != kept.key
        # importing both again changes neither: the copy keeps its own row
        st.import_run(folder, trust=CODE)
        st.import_run(copy, trust=CODE)
        again = {Path(r.folder).name: r for r in st.list_runs().items}
        assert again["shop-b3"].attempts == 76 and again["shop-b3"].gate == kept.gate
        assert again["copy"].key == by_folder["copy"].key and st.list_runs().total == 2


def test_a_moved_run_folder_keeps_its_row(store_url: str, tmp_path: Path) -> None:
    folder = run_folder(tmp_path, "m")
    with open_store(store_url) as st:
        pk = st.import_run(folder, trust=CODE).run_pk
        moved = folder.rename(tmp_path / "elsewhere")
        assert st.import_run(moved, trust=CODE).run_pk == pk
        assert st.list_runs().total == 1
