"""The warm-up: what the report needs is imported while the run waits, in the background."""

from __future__ import annotations

import sys
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolproof.cli._warmup import AFTER_RUN, WarmingObserver, Warmup
from toolproof.trust import Trust
from toolproof.types import Outcome, Record


class Events:
    """An observer that keeps what it was told."""

    def __init__(self) -> None:
        self.seen: list[tuple[Any, ...]] = []

    def started(self, totals: dict[str, int]) -> None:
        self.seen.append(("started", totals))

    def recorded(self, record: Record) -> None:
        self.seen.append(("recorded", record.case_id))

    def retrying(self, target: str, outcome: Outcome, delay_s: float) -> None:
        self.seen.append(("retrying", target, outcome, delay_s))

    def note(self, target: str, text: str) -> None:
        self.seen.append(("note", target, text))

    def finished(self) -> None:
        self.seen.append(("finished",))


class CountingWarmup(Warmup):
    def __init__(self) -> None:
        super().__init__(())
        self.starts = 0

    def start(self) -> None:
        self.starts += 1
        super().start()


def test_every_event_is_passed_on_and_the_warmup_starts_at_the_first_record() -> None:
    inner, warmup = Events(), CountingWarmup()
    observer = WarmingObserver(inner, warmup)
    observer.started({"m": 2})
    observer.note("m", "loading")
    assert warmup.starts == 0  # nothing yet: the runner may still be importing
    observer.recorded(Record(case_id="a", target="m"))
    observer.retrying("m", Outcome.rate_limited, 1.5)
    observer.recorded(Record(case_id="b", target="m"))
    observer.finished()
    warmup.join()
    assert inner.seen == [
        ("started", {"m": 2}),
        ("note", "m", "loading"),
        ("recorded", "a"),
        ("retrying", "m", Outcome.rate_limited, 1.5),
        ("recorded", "b"),
        ("finished",),
    ]
    assert warmup.starts == 2  # asked twice, started once (see the next test)


def test_an_observer_without_note_still_works() -> None:
    class Old:
        def started(self, totals: dict[str, int]) -> None: ...
        def recorded(self, record: Record) -> None: ...
        def retrying(self, target: str, outcome: Outcome, delay_s: float) -> None: ...
        def finished(self) -> None: ...

    WarmingObserver(Old(), Warmup(())).note("m", "loading")  # type: ignore[arg-type]


def test_the_modules_are_imported_once_in_one_background_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "warm_probe_a.py").write_text(
        "import threading\nTHREAD = threading.current_thread().name\n"
    )
    (tmp_path / "warm_probe_c.py").write_text("VALUE = 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("warm_probe_a", "warm_probe_c"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    # a module that fails to import does not stop the others: the real import reports it
    warmup = Warmup(("warm_probe_a", "warm_probe_missing", "warm_probe_c"))
    interval = sys.getswitchinterval()
    warmup.start()
    warmup.start()
    warmup.join()
    assert sys.modules["warm_probe_a"].THREAD == "toolproof-warmup"
    assert sys.modules["warm_probe_c"].VALUE == 3
    assert "warm_probe_missing" not in sys.modules
    assert sys.getswitchinterval() == interval  # given back as it was
    assert not any(t.name == "toolproof-warmup" for t in threading.enumerate())


def test_join_before_start_returns_at_once() -> None:
    Warmup().join()


def test_the_modules_warmed_exist() -> None:
    import importlib.util

    for name in AFTER_RUN:
        assert importlib.util.find_spec(name) is not None, name


def test_a_run_from_the_command_line_warms_up_while_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.cli.test_run import SCRIPT, toolproof, write_suite

    monkeypatch.chdir(tmp_path)
    write_suite(tmp_path / "suite")
    (tmp_path / "script.yaml").write_text(yaml.safe_dump(SCRIPT))
    (tmp_path / "warm_probe_run.py").write_text(
        "import threading\nTHREAD = threading.current_thread().name\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "warm_probe_run", raising=False)
    monkeypatch.setattr("toolproof.cli._warmup.AFTER_RUN", ("warm_probe_run",))
    code = toolproof(monkeypatch, "run", "suite", "-m", "scripted:script.yaml", "-q")
    assert code == 0, capsys.readouterr().err
    assert sys.modules["warm_probe_run"].THREAD == "toolproof-warmup"


def _tables(db: Path) -> dict[str, list[tuple[object, ...]]]:
    import sqlite3

    out = {}
    with sqlite3.connect(db) as con:
        names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for name in names:
            cols = [r[1] for r in con.execute(f"PRAGMA table_info({name})")]
            keep = ", ".join(c for c in cols if c not in ("stored_at", "applied_at"))
            out[name] = con.execute(f"SELECT {keep} FROM {name} ORDER BY rowid").fetchall()
    return out


def _made_after(run_dir: Path, db: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    """The report and summary.json made from the run folder after the run, and its store rows."""
    from toolproof.cli._run import _report
    from toolproof.records import read_records
    from toolproof.run._manifest import read_manifest
    from toolproof.run._runner import RunResult, load_suite_file
    from toolproof.store._hooks import store_run
    from toolproof.trust import DEFAULT_TRUST

    manifest = read_manifest(run_dir)
    assert manifest.suite_source is not None
    suite = load_suite_file(manifest.suite_source)
    records = read_records(run_dir / "records.jsonl")
    result = RunResult(run_dir, manifest, records, suite, attempted=len(records))
    (run_dir / "summary.json").unlink()
    capsys.readouterr()
    ev = _report(result, True, DEFAULT_TRUST)
    store_run(result, str(db), exit_code=0, evaluation=ev)
    return capsys.readouterr().out, (run_dir / "summary.json").read_text()


def _streamed_suite(folder: Path, cases: int = 40) -> None:
    folder.mkdir()
    suite = {
        "format": 1,
        "suite": "streamed",
        "tools": [
            {
                "name": "lookup_order",
                "parameters": {
                    "type": "object",
                    "properties": {"order_id": {"type": "string"}},
                    "required": ["order_id"],
                },
            }
        ],
        "cases": [
            {
                "id": f"case-{i}",
                "prompt": f"Where is ORD-{i:06d}?",
                "expect": {"call": "lookup_order", "args": {"order_id": f"ORD-{i:06d}"}},
            }
            for i in range(cases)
        ],
    }
    (folder / "suite.yaml").write_text(yaml.safe_dump(suite))
    script = {  # half right, a quarter wrong, a quarter no call
        "default": {"text": "Which order do you mean?"},
        "cases": {
            f"case-{i}": {
                "tool_calls": [
                    {"name": "lookup_order", "arguments": {"order_id": f"ORD-{i % 2:06d}"}}
                ]
            }
            for i in range(0, cases, 2)
        },
    }
    (folder / "script.yaml").write_text(yaml.safe_dump(script))


def test_a_new_run_is_graded_as_it_goes_and_reports_and_stores_what_grading_after_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.cli.test_run import toolproof

    from toolproof.cli import _run

    monkeypatch.chdir(tmp_path)
    _streamed_suite(tmp_path / "suite")

    def not_again(*args: object) -> None:
        raise AssertionError("the run's records were evaluated again after the run")

    monkeypatch.setattr(_run, "_evaluation", not_again)
    args = ["run", "suite", "-m", "scripted:suite/script.yaml", "-q", "-o", "r"]
    code = toolproof(monkeypatch, *args, "--store", str(tmp_path / "run.db"))
    out = capsys.readouterr().out
    assert code == 0
    summary = (tmp_path / "r" / "summary.json").read_text()
    assert "✗ case-2 (low) wrong_arguments" in out and "failures · scripted" in out
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    again_out, again_summary = _made_after(Path("r"), tmp_path / "after.db", capsys)
    assert out == again_out
    assert summary == again_summary
    ran, after = _tables(tmp_path / "run.db"), _tables(tmp_path / "after.db")
    assert len(ran["attempts"]) == 40 and all(row[-2] for row in ran["attempts"])  # lines
    assert ran == after


def test_when_grading_as_it_goes_fails_the_run_is_evaluated_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.cli.test_run import toolproof

    from toolproof.evaluate import EvaluationStream

    monkeypatch.chdir(tmp_path)
    _streamed_suite(tmp_path / "suite")
    calls = []
    add = EvaluationStream.add

    def broken_once(self: EvaluationStream, record: Record, origin: Any = None) -> None:
        calls.append(record.case_id)
        if len(calls) == 1:
            raise RuntimeError("grading broke")
        add(self, record, origin)

    monkeypatch.setattr(EvaluationStream, "add", broken_once)
    args = ["run", "suite", "-m", "scripted:suite/script.yaml", "-q", "-o", "r"]
    code = toolproof(monkeypatch, *args, "--store", str(tmp_path / "run.db"))
    out = capsys.readouterr().out
    # tried once as it went, then all 40 records evaluated after the run
    assert code == 0 and len(calls) == 41
    summary = (tmp_path / "r" / "summary.json").read_text()
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    again_out, again_summary = _made_after(Path("r"), tmp_path / "after.db", capsys)
    assert (out, summary) == (again_out, again_summary)
    assert _tables(tmp_path / "run.db") == _tables(tmp_path / "after.db")


def test_only_a_suite_that_is_cheap_to_grade_is_graded_as_it_goes(tmp_path: Path) -> None:
    from toolproof.cli._warmup import StreamedEvaluation
    from toolproof.suite import load_suite

    _streamed_suite(tmp_path / "plain")
    assert StreamedEvaluation.suits(load_suite(tmp_path / "plain"))
    root = Path(__file__).resolve().parents[2]
    # multi-step cases, an environment and Python checks of its own
    assert not StreamedEvaluation.suits(load_suite(root / "examples" / "support"))


def test_records_written_before_the_grading_is_ready_are_graded_after_with_the_rest(
    tmp_path: Path,
) -> None:
    from toolproof.cli._warmup import StreamedEvaluation
    from toolproof.run import RunResult
    from toolproof.run._manifest import Manifest
    from toolproof.suite import load_suite
    from toolproof.types import Response, ToolCall

    _streamed_suite(tmp_path / "s")
    suite = load_suite(tmp_path / "s")
    grading = StreamedEvaluation(suite, ["m"], tmp_path / "records.jsonl", Trust(), store=True)
    call = ToolCall(name="lookup_order", arguments={"order_id": "ORD-000000"})
    records = [
        Record(case_id=f"case-{i}", target="m", response=Response(tool_calls=[call]))
        for i in range(20)
    ]
    for record in records[:8]:
        grading.add(record)  # not ready: kept
    grading.prepare()
    for record in records[8:]:
        grading.add(record)  # ready: graded, catching up a few at a time
    manifest = Manifest.model_construct(run_id="x", started_at=datetime.now(UTC))
    other = RunResult(tmp_path, manifest, records[:-1], suite)
    made = StreamedEvaluation(suite, ["m"], tmp_path / "records.jsonl", Trust(), store=False)
    made.prepare()
    for record in records:
        made.add(record)
    assert made.result(other) is None  # the run's records are not those fed: evaluate after
    got = grading.result(RunResult(tmp_path, manifest, records, suite))
    assert got is not None
    ev, log = got
    assert ev.manifest is manifest and log is not None
    t = ev.targets["m"]
    assert [r.case_id for r in t.records] == [r.case_id for r in records]
    assert t.summary.scored == 20 and t.summary.strict_pass.k == 1  # only case-0 is right
    noted = [origin for _, origin in log._read()]
    assert noted == [(str(tmp_path / "records.jsonl"), line) for line in range(1, 21)]


def test_when_the_grading_cannot_be_made_records_pass_and_the_run_is_evaluated_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    from toolproof.cli._warmup import StreamedEvaluation
    from toolproof.run import RunResult
    from toolproof.run._manifest import Manifest
    from toolproof.suite import load_suite

    def refuse(*args: object, **kwargs: object) -> None:
        raise RuntimeError("cannot grade")

    _streamed_suite(tmp_path / "s")
    suite = load_suite(tmp_path / "s")
    # the package (``toolproof.evaluate``, the attribute, is the function)
    evaluate = importlib.import_module("toolproof.evaluate")
    monkeypatch.setattr(evaluate, "EvaluationStream", refuse)
    grading = StreamedEvaluation(suite, ["m"], tmp_path / "records.jsonl", Trust(), store=True)
    records = [Record(case_id=f"case-{i}", target="m") for i in range(3)]
    grading.add(records[0])
    grading.prepare()  # fails, in the warm-up thread: never an error in the event loop
    for record in records[1:]:
        grading.add(record)
    manifest = Manifest.model_construct(run_id="x", started_at=datetime.now(UTC))
    assert grading.result(RunResult(tmp_path, manifest, records, suite)) is None


def test_two_records_of_one_attempt_leave_the_evaluation_to_after_the_run(tmp_path: Path) -> None:
    """A later record of an attempt supersedes the earlier one after the run; a stream
    that counted both would differ, so it is not used."""
    from toolproof.cli._warmup import StreamedEvaluation
    from toolproof.run import RunResult
    from toolproof.run._manifest import Manifest
    from toolproof.suite import load_suite

    _streamed_suite(tmp_path / "s")
    suite = load_suite(tmp_path / "s")
    manifest = Manifest.model_construct(run_id="x", started_at=datetime.now(UTC))
    records = [Record(case_id=f"case-{i}", target="m") for i in range(3)]
    twice = [*records, Record(case_id="case-1", target="m")]
    for fed, usable in ((records, True), (twice, False)):
        grading = StreamedEvaluation(suite, ["m"], tmp_path / "r.jsonl", Trust(), store=False)
        grading.prepare()
        for record in fed:
            grading.add(record)
        got = grading.result(RunResult(tmp_path, manifest, fed, suite))
        assert (got is not None) is usable


def test_in_an_event_loop_records_are_graded_once_the_step_that_wrote_them_is_done(
    tmp_path: Path,
) -> None:
    import asyncio

    from toolproof.cli._warmup import StreamedEvaluation
    from toolproof.suite import load_suite
    from toolproof.types import Response, ToolCall

    _streamed_suite(tmp_path / "s")
    suite = load_suite(tmp_path / "s")
    grading = StreamedEvaluation(suite, ["m"], tmp_path / "records.jsonl", Trust(), store=False)
    grading.prepare()
    call = ToolCall(name="lookup_order", arguments={"order_id": "ORD-000000"})
    records = [
        Record(case_id=f"case-{i}", target="m", response=Response(tool_calls=[call]))
        for i in range(3)
    ]
    warmup = Warmup(())
    observer = WarmingObserver(Events(), warmup, grading)

    async def step() -> tuple[int, int]:
        observer.recorded(records[0])  # a worker writes its record, then sends its next request
        observer.recorded(records[1])
        during = grading._graded
        await asyncio.sleep(0)
        return during, grading._graded

    assert asyncio.run(step()) == (0, 2)
    observer.recorded(records[2])  # outside an event loop: graded at once
    assert grading._graded == 3
    warmup.join()
