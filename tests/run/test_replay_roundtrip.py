"""Run the example suite with its script, replay the run, and get the same verdicts."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from toolproof.grade import Scorer
from toolproof.run import RunOptions, expected_states, run_suite
from toolproof.suite import load_suite
from toolproof.trust import Trust
from toolproof.types import Outcome, Record, Suite, Verdict

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support"
CODE = Trust(allow_code=True)  # the example's environment tools are its own Python


def _verdict_view(verdict: Verdict) -> dict[str, Any]:
    """Everything a verdict says, except the wording of its messages."""
    view = {
        name: value
        for name, value in verdict._asdict().items()
        if name not in ("checks", "multistep", "target", "evidence")
    }
    view["checks"] = [(c.stage, c.failure) for c in verdict.checks]
    multistep = getattr(verdict, "multistep", None)
    view["multistep"] = dataclasses.asdict(multistep) if multistep is not None else None
    return view


def _verdicts(suite: Suite, records: list[Record]) -> dict[tuple[str, int], dict[str, Any]]:
    # gold actions of end-state checks run the example's tools: computed here, handed in as data
    scorer = Scorer(suite, expected_states(suite, CODE))
    out = {}
    for record in records:
        verdict = scorer.grade(record)
        assert verdict is not None, record.case_id
        out[(record.case_id, record.attempt)] = _verdict_view(verdict)
    return out


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> tuple[Suite, Path, list[Record]]:
    suite = load_suite(EXAMPLE / "suite.yaml")
    out = tmp_path_factory.mktemp("runs") / "original"
    result = run_suite(
        suite, [f"scripted:{EXAMPLE / 'script.yaml'}"], RunOptions(trust=CODE, out=out, cache=False)
    )
    assert all(r.outcome is Outcome.ok for r in result.records)
    return suite, out, result.records


def test_replay_gives_the_verdicts_of_the_original_run(
    original: tuple[Suite, Path, list[Record]], tmp_path: Path
) -> None:
    suite, run_dir, records = original
    replayed = run_suite(
        suite, [f"replay:{run_dir}"], RunOptions(trust=CODE, out=tmp_path / "replay", cache=False)
    ).records
    assert len(replayed) == len(records) == len(suite.cases)
    before, after = _verdicts(suite, records), _verdicts(suite, replayed)
    multistep = [c.id for c in suite.cases if c.multistep]
    assert len(multistep) >= 7
    differ = sorted(case for case, _ in before if before[case, 0] != after[case, 0])
    assert differ == []
    assert before == after


def test_replay_reproduces_every_step_and_tool_result(
    original: tuple[Suite, Path, list[Record]], tmp_path: Path
) -> None:
    suite, run_dir, records = original
    replayed = {
        r.case_id: r
        for r in run_suite(
            suite,
            [f"replay:{run_dir}"],
            RunOptions(trust=CODE, out=tmp_path / "replay", cache=False),
        ).records
    }
    steps_seen = 0
    for record in records:
        if record.transcript is None:
            continue
        again = replayed[record.case_id]
        assert again.transcript == record.transcript
        assert again.state_changes == record.state_changes
        assert again.state_base == record.state_base
        assert again.steps is not None and record.steps is not None
        assert [s["response"] for s in again.steps] == [s["response"] for s in record.steps]
        steps_seen += len(record.steps)
    assert steps_seen > 7  # several multi-step cases take more than one step
