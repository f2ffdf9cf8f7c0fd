"""The gate's pieces take what the run already made: cases are compiled once.

``Scorer.cases`` holds every case compiled; the schedule's threshold bounds and
the risks of unscored cases read them from the scorer that grades the run,
instead of compiling the suite again.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from tests.gate.builders import records, run, suite
from toolproof.gate import unscored
from toolproof.gate._gate import case_risks
from toolproof.gate._schedule import schedule_inputs, threshold_bounds
from toolproof.grade import Scorer
from toolproof.types import Outcome, Record


@pytest.fixture
def scorers(monkeypatch: pytest.MonkeyPatch) -> list[Scorer]:
    """Every Scorer made while the test runs."""
    made: list[Scorer] = []
    real = Scorer.__init__

    def counted(self: Scorer, *args: Any, **kwargs: Any) -> None:
        made.append(self)
        real(self, *args, **kwargs)

    monkeypatch.setattr(Scorer, "__init__", counted)
    return made


def test_the_schedule_compiles_the_suite_once(scorers: list[Scorer]) -> None:
    s = suite(thresholds={"critical": {"strict_pass": 0.9}})
    _, bounds = schedule_inputs(s)
    assert len(scorers) == 1  # the grader's scorer gives the bounds their risks
    assert [b.key for b in bounds] == [b.key for b in threshold_bounds(s)]
    critical = next(b for b in bounds if b.key == "critical: strict_pass")
    assert critical.cases == frozenset({"cancel"})


def test_risks_of_unscored_cases_come_from_the_runs_scorer(scorers: list[Scorer]) -> None:
    s = suite()
    down = [
        Record(case_id="cancel", target="m", attempt=0, outcome=Outcome.server_error),
        *[r for r in records(s) if r.case_id != "cancel"],
    ]
    ev = run(s, extra_records=[])
    made = len(scorers)
    te = ev.targets["m"]
    te = replace(te, records=down, verdicts=[v for v in te.verdicts if v.case_id != "cancel"])
    risks = case_risks(ev, te)
    assert len(scorers) == made  # nothing compiled again
    assert risks["cancel"].value == "critical"
    assert any("cancel" in m for m in unscored(te.records, te.verdicts, risks))
