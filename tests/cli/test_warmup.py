"""The warm-up: what the report needs is imported while the run waits, in the background."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolproof.cli._warmup import AFTER_RUN, WarmingObserver, Warmup
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
