"""Multi-step figures in the terminal and JSON reports, next to the single-step ones."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from toolproof.grade import Scorer
from toolproof.records import read_records
from toolproof.report import render_terminal, summary_json
from toolproof.stats import summarize
from toolproof.suite import load_suite
from toolproof.trust import Trust

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = ROOT / "examples" / "support"

CODE = Trust(allow_code=True)  # these suites run their own tools


def _render(records_file: Path, tags: tuple[str, ...] = ()) -> tuple[str, dict[str, object]]:
    suite = load_suite(SUPPORT)
    records = read_records(records_file)
    if tags:
        wanted = {c.id for c in suite.cases if set(tags) & set(c.tags)}
        records = [r for r in records if r.case_id in wanted]
    scorer = Scorer(suite, CODE)
    verdicts = [v for r in records if (v := scorer.grade(r)) is not None]
    summary = summarize(suite, records, verdicts)
    out = io.StringIO()
    render_terminal({summary.target: summary}, Console(file=out, width=140, color_system=None))
    return out.getvalue(), summary_json({summary.target: summary})


def test_the_demo_records_show_multistep_figures() -> None:
    text, data = _render(SUPPORT / "records.jsonl")
    assert "strict pass" in text  # the single-step table is still there
    assert "multi-step tasks" in text
    for label in (
        "task success",
        "trajectory success",
        "end-state success",
        "clarification rate",
        "unsafe calls",
        "graceful failure (heuristic)",
        "steps / calls per success",
        "multi-step by risk class",
        "multi-step by tool",
        "multi-step by tag",
    ):
        assert label in text, label
    ms = data["targets"]["recorded:demo-model"]["multistep"]  # type: ignore[index]
    assert ms["attempts"] == 7
    assert ms["success"]["k"] == 6
    assert ms["unsafe_calls"] == 1
    assert ms["end_state"] == {
        "k": 4,
        "n": 5,
        "low": ms["end_state"]["low"],
        "high": ms["end_state"]["high"],
    }
    assert ms["graceful_failure"]["k"] == ms["graceful_failure"]["n"] == 2
    assert set(ms["by_risk"]) == {"critical", "low"}


def test_single_step_records_have_no_multistep_section() -> None:
    text, data = _render(SUPPORT / "records-b.jsonl")
    assert "multi-step tasks" not in text
    assert data["targets"]["recorded:demo-model-b"]["multistep"] is None  # type: ignore[index]
