"""--repeats auto through the runner: rounds, records, the manifest, resume, the gate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolproof.adaptive import Plan
from toolproof.evaluate import load_run
from toolproof.gate import run_gate
from toolproof.gate._schedule import schedule_inputs
from toolproof.providers import ModelSettings
from toolproof.providers._scripted import ScriptedProvider
from toolproof.records import read_records
from toolproof.run import RunOptions, Target, read_manifest, resume_run, run_suite
from toolproof.suite import load_suite
from toolproof.types import Suite

from .conftest import SUITE, write_suite


def right(i: int) -> dict[str, Any]:
    return {
        "tool_calls": [{"name": "lookup_order", "raw_arguments": f'{{"order_id": "ORD-{i:06d}"}}'}]
    }


WRONG = {"text": "Which order?"}
#: case-0 flaky, case-1 never right, case-2 right then wrong twice, the rest always right
SCRIPT = {
    "cases": {
        "case-0": [right(0), WRONG, right(0)],
        "case-1": WRONG,
        "case-2": [right(2), right(2), WRONG],
        **{f"case-{i}": right(i) for i in range(3, 6)},
    }
}


def options(tmp_path: Path, name: str, plan: Plan | None = None) -> RunOptions:
    return RunOptions(
        out=tmp_path / name,
        cache_dir=tmp_path / "cache",
        fsync=False,
        adaptive=plan or Plan(5, 2),
        scheduler=schedule_inputs,
    )


@pytest.fixture
def lenient(tmp_path: Path) -> Suite:
    """The mini suite with thresholds six cases decide after two rounds (at 10%)."""
    low = {"default": {"strict_pass": 0.1, "selection": 0.1, "arguments": 0.1}}
    return load_suite(write_suite(tmp_path / "lenient", {**SUITE, "thresholds": low}))


@pytest.fixture
def flaky(tmp_path: Path) -> Target:
    path = tmp_path / "flaky.yaml"
    path.write_text(json.dumps(SCRIPT))
    return Target(f"scripted:{path}")


def attempts_of(run_dir: Path) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for r in read_records(run_dir / "records.jsonl"):
        out.setdefault(r.case_id, []).append(r.attempt)
    return {c: sorted(a) for c, a in sorted(out.items())}


def test_a_case_stops_once_it_passed_and_failed(
    lenient: Suite, tmp_path: Path, flaky: Target
) -> None:
    result = run_suite(lenient, [flaky], options(tmp_path, "r"))
    counts = {c: len(a) for c, a in attempts_of(tmp_path / "r").items()}
    assert counts == {
        "case-0": 2, "case-1": 5, "case-2": 3, "case-3": 5, "case-4": 5, "case-5": 5
    }  # fmt: skip
    schedule = result.manifest.schedule
    assert schedule is not None and result.manifest.repeats == 5
    entry = schedule.targets[0]
    assert (entry.planned, entry.attempts, entry.saved) == (30, 25, 5)
    assert entry.stopped == {"mixed": 2} and entry.full_rounds == 2
    assert entry.ended == "planned"


def test_a_repeating_target_stops_every_case_at_min_repeats(suite: Suite, tmp_path: Path) -> None:
    steady = {"cases": {f"case-{i}": right(i) for i in range(6)} | {"case-1": WRONG}}
    t = Target(
        "scripted:steady",
        settings=ModelSettings(temperature=0, seed=0),
        provider=ScriptedProvider.from_dict(steady),
    )
    result = run_suite(suite, [t], options(tmp_path, "r"))
    entry = result.manifest.schedule.targets[0]  # type: ignore[union-attr]
    assert (entry.attempts, entry.stopped, entry.ended) == (12, {"repeats": 6}, "settled")
    ev = load_run(tmp_path / "r")
    st = ev.targets["scripted:steady"].summary.stability
    assert st is not None and st.k == 5
    # pass^5 as the fixed plan would give it: 1 for the five right cases, 0 for case-1
    assert st.pass_hat_k.value == pytest.approx(5 / 6) and st.undecided == []


def test_resuming_half_a_run_makes_the_decisions_of_the_unbroken_run(
    lenient: Suite, tmp_path: Path, flaky: Target
) -> None:
    run_suite(lenient, [flaky], options(tmp_path, "whole"))
    whole = tmp_path / "whole"
    lines = (whole / "records.jsonl").read_text().splitlines(keepends=True)
    for cut in (7, 13, 20):
        half = tmp_path / f"half{cut}"
        half.mkdir()
        (half / "records.jsonl").write_text("".join(lines[:cut]))
        manifest = json.loads((whole / "manifest.json").read_text())
        manifest["status"] = "interrupted"
        manifest["schedule"]["targets"] = []
        (half / "manifest.json").write_text(json.dumps(manifest))
        opts = RunOptions(cache_dir=tmp_path / "cache", fsync=False, scheduler=schedule_inputs)
        resume_run(half, opts, suite=lenient)
        assert attempts_of(half) == attempts_of(whole)
        a, b = read_manifest(half).schedule, read_manifest(whole).schedule
        assert a is not None and b is not None and a.targets == b.targets


def test_the_gate_reads_the_full_rounds_and_says_what_was_saved(
    lenient: Suite, tmp_path: Path, flaky: Target
) -> None:
    run_suite(lenient, [flaky], options(tmp_path, "r"))
    result = run_gate(load_run(tmp_path / "r"))
    spec = flaky.spec
    assert result.targets[0].target == spec
    assert result.coverage is not None and result.coverage.complete
    assert result.coverage.expected == 12  # 6 cases × 2 full rounds
    t = result.targets[0]
    # strict pass over rounds 0-1: case-0 failed once, case-1 twice: 9 of 12
    strict = next(c for c in t.thresholds if c.scope == "all" and c.metric == "strict_pass")
    assert strict.actual == pytest.approx(9 / 12) and strict.passed
    assert t.schedule is not None
    assert (t.schedule.planned, t.schedule.attempts, t.schedule.saved) == (30, 25, 5)
    decision = next(d for d in t.schedule.decisions if d.metric == "strict_pass")
    assert decision.decision == "pass" and 0.95 < decision.confidence < 1
    # every attempt still feeds pass^k: case-2 failed on its third attempt
    st = t.summary.stability
    assert st is not None
    rows = {c.case_id: c for c in st.per_case}
    assert rows["case-2"].attempts == 3 and rows["case-2"].pass_hat_k == 0.0


def test_an_undecided_threshold_keeps_every_case_running(
    suite: Suite, tmp_path: Path, flaky: Target
) -> None:
    """Six cases cannot decide the default 85% strict pass: the rates the gate reads
    need full rounds, so no case stops, and the gate reads all five, as with --repeats 5."""
    result = run_suite(suite, [flaky], options(tmp_path, "r"))
    entry = result.manifest.schedule.targets[0]  # type: ignore[union-attr]
    assert (entry.attempts, entry.full_rounds, entry.stopped) == (30, 5, {})


def test_until_decided_runs_every_round_while_a_threshold_is_open(
    suite: Suite, tmp_path: Path, flaky: Target
) -> None:
    result = run_suite(suite, [flaky], options(tmp_path, "r", Plan(5, 2, until_decided=True)))
    entry = result.manifest.schedule.targets[0]  # type: ignore[union-attr]
    # tool selection (21 of 30 against 95%) is decided, strict pass (21 of 30 against 85%)
    # is not with six cases: so every round of every case runs
    assert entry.ended == "planned" and entry.attempts == 30 and entry.full_rounds == 5
    looks = {look.key: look for look in entry.looks}
    assert looks["all: selection"].decided == "fail"
    assert looks["all: strict_pass"].decided is None


def test_adaptive_needs_a_way_to_grade(suite: Suite, tmp_path: Path, flaky: Target) -> None:
    from toolproof.errors import UserError

    opts = options(tmp_path, "r")
    opts.scheduler = None
    with pytest.raises(UserError, match="scheduler"):
        run_suite(suite, [flaky], opts)


def test_shards_merged_hold_what_one_unsharded_run_holds(
    lenient: Suite, tmp_path: Path, flaky: Target
) -> None:
    from toolproof.run._shard import merge_runs

    run_suite(lenient, [flaky], options(tmp_path, "whole"))
    parts = []
    for index in (1, 2):
        opts = options(tmp_path, f"shard{index}")
        opts.shard = (index, 2)
        run_suite(lenient, [flaky], opts)
        parts.append(tmp_path / f"shard{index}")
    merged = merge_runs(parts, tmp_path / "merged")
    assert attempts_of(tmp_path / "merged") == attempts_of(tmp_path / "whole")
    whole = read_manifest(tmp_path / "whole").schedule
    assert merged.schedule is not None and whole is not None
    a, b = merged.schedule.targets[0], whole.targets[0]
    assert (a.planned, a.attempts, a.stopped, a.full_rounds) == (
        b.planned, b.attempts, b.stopped, b.full_rounds
    )  # fmt: skip


def test_the_progress_bar_is_told_the_attempts_a_target_ran(
    lenient: Suite, tmp_path: Path, flaky: Target
) -> None:
    from toolproof.run import SilentObserver

    class Told(SilentObserver):
        def __init__(self) -> None:
            self.totals: dict[str, int] = {}
            self.replans: dict[str, int] = {}

        def started(self, totals: dict[str, int]) -> None:
            self.totals = totals

        def replanned(self, target: str, total: int) -> None:
            self.replans[target] = total

    opts = options(tmp_path, "r")
    opts.observer = told = Told()
    run_suite(lenient, [flaky], opts)
    assert told.totals == {flaky.spec: 30} and told.replans == {flaky.spec: 25}
