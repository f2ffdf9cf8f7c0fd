"""Raw and repaired figures: the gate uses raw by default, --repaired uses the repaired ones."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from tests.cli.cli_support import toolproof
from toolproof.evaluate import evaluate
from toolproof.gate import GateOptions, run_gate
from toolproof.report import html_report, render_markdown, render_terminal, summary_json
from toolproof.suite import load_suite
from toolproof.types import Record, Response, ToolCall

SUITE = {
    "suite": "repair",
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
    "thresholds": {"default": {"strict_pass": 0.9}},
    "cases": [
        {
            "id": f"c{i}",
            "prompt": f"Where is ORD-{i}?",
            "expect": {"call": "lookup_order", "args": {"order_id": f"ORD-{i}"}},
        }
        for i in range(4)
    ],
}


def _record(i: int, recovered: bool) -> Record:
    call = ToolCall(
        id=f"x{i}",
        name="lookup_order",
        raw_arguments=json.dumps({"order_id": f"ORD-{i}"}),
        arguments={"order_id": f"ORD-{i}"},
        extracted_from_text=recovered,
    )
    return Record(case_id=f"c{i}", target="m", response=Response(tool_calls=[call]))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "suite.yaml").write_text(yaml.safe_dump(SUITE))
    # one of four answers printed its call as text, and the adapter recovered it
    records = [_record(0, True), *(_record(i, False) for i in (1, 2, 3))]
    (tmp_path / "records.jsonl").write_text(
        "".join(r.model_dump_json(exclude_none=True) + "\n" for r in records)
    )
    return tmp_path


def test_the_headline_is_raw_with_the_repaired_figures_beside_it(folder: Path) -> None:
    ev = evaluate(load_suite(folder / "suite"), folder / "records.jsonl")
    s = ev.targets["m"].summary
    assert (s.strict_pass.k, s.strict_pass.n) == (3, 4)
    assert s.failure_counts == {"missed_call": 1}
    assert s.repaired is not None
    assert (s.repaired.strict_pass.k, s.repaired.strict_pass.n) == (4, 4)
    assert (s.repaired.recovered_calls, s.repaired.attempts, s.repaired.failed) == (1, 1, 0)

    data = summary_json(ev.summaries)["targets"]["m"]
    assert data["strict_pass"]["k"] == 3 and data["repaired"]["strict_pass"]["k"] == 4

    out = io.StringIO()
    render_terminal(ev.summaries, Console(file=out, width=120, color_system=None))
    text = out.getvalue()
    headline = text[text.rindex("headline") :]
    assert "75.0% (3/4) · repaired 100.0% (4/4)" in headline
    assert "1 call in 1 attempt, missed when raw" in headline

    html = html_report(ev)
    assert "repaired: calls recovered from text counted as calls" in html
    assert "strict pass 100.0% (4/4)" in html


def test_the_gate_uses_raw_figures_unless_told_otherwise(folder: Path) -> None:
    ev = evaluate(load_suite(folder / "suite"), folder / "records.jsonl")
    raw = run_gate(ev, opts=GateOptions(allow_partial=True))
    assert not raw.passed and raw.figures == "raw"
    assert "1 call(s) the model printed as text count as missed calls" in raw.figures_note
    assert any("strict pass" in f.message for f in raw.targets[0].findings if f.blocking)
    md = render_markdown(raw)
    assert "75.0% (3/4)" in md and "repaired 100.0% (4/4)" in md
    assert "Figures: gated on the raw figures" in md

    fixed = run_gate(ev, opts=GateOptions(allow_partial=True, repaired=True))
    assert fixed.passed and fixed.figures == "repaired"
    assert fixed.figures_note.startswith("gated on the repaired figures (--repaired)")


def test_gate_repaired_on_the_command_line(folder: Path) -> None:
    args = ["gate", "records.jsonl", "--suite", "suite", "--allow-partial", "--no-store"]
    blocked = toolproof(*args, cwd=folder)
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    assert "figures: gated on the raw figures" in blocked.stdout
    passed = toolproof(*args, "--repaired", "--json", "g.json", cwd=folder)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "figures: gated on the repaired figures (--repaired)" in passed.stdout
    gate = json.loads((folder / "g.json").read_text())
    assert gate["figures"] == "repaired" and gate["options"]["repaired"] is True


def test_without_recovered_calls_nothing_changes(folder: Path) -> None:
    records = [_record(i, False) for i in range(4)]
    ev = evaluate(load_suite(folder / "suite"), records)
    s = ev.targets["m"].summary
    assert s.repaired is None and ev.targets["m"].repaired is None
    result = run_gate(ev, opts=GateOptions(allow_partial=True))
    assert result.passed and result.figures_note == ""
