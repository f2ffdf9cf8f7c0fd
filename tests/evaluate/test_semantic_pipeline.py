"""A suite that compares free text by meaning, through evaluate() and the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolproof.cli import app
from toolproof.evaluate import evaluate
from toolproof.match import _semantic as semantic_module
from toolproof.match import semantic_missing
from toolproof.suite import load_suite

runner = CliRunner()
needs_model = pytest.mark.skipif(semantic_missing() is not None, reason=semantic_missing() or "")

SUITE = """\
suite: notes
tools:
  - name: add_note
    description: Add a note to a customer's ticket.
    parameters:
      type: object
      properties:
        ticket: {type: string}
        note: {type: string}
      required: [ticket, note]
    match:
      note: {use: semantic, min: 0.7}
cases:
  - id: damaged
    prompt: "Note on T-1 that the customer wants a refund: the item came damaged."
    expect:
      call: add_note
      args: {ticket: T-1, note: "refund because the item arrived damaged"}
  - id: cancel
    prompt: "Note on T-2 that the client would like to cancel the order."
    expect:
      call: add_note
      args:
        ticket: T-2
        note: {semantic: "customer wants to cancel the order", min: 0.75}
"""


def _record(case: str, ticket: str, note: str) -> str:
    args = json.dumps({"ticket": ticket, "note": note})
    call = {"id": "c1", "name": "add_note", "raw_arguments": args}
    return json.dumps(
        {
            "format": "toolproof.record/1",
            "case_id": case,
            "target": "demo",
            "attempt": 0,
            "response": {"text": None, "tool_calls": [call], "stop_reason": "tool_calls"},
        }
    )


@pytest.fixture
def suite_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "suite.yaml").write_text(SUITE, encoding="utf-8")
    records = [
        _record("damaged", "T-1", "the item arrived damaged, so the customer wants a refund"),
        _record("cancel", "T-2", "customer wants to add another item to the order"),
    ]
    (folder / "records.jsonl").write_text("\n".join(records) + "\n", encoding="utf-8")
    return folder


@needs_model
def test_evaluate_embeds_at_the_edge_and_notes_each_similarity(suite_dir: Path) -> None:
    ev = evaluate(load_suite(suite_dir), [suite_dir / "records.jsonl"])
    verdicts = {v.case_id: v for v in ev.targets["demo"].verdicts}
    assert verdicts["damaged"].passed
    assert not verdicts["cancel"].passed
    (note,) = verdicts["damaged"].notes
    assert note.startswith("semantic similarity 0.") and "≥ 0.70" in note
    (reason,) = [c.detail for c in verdicts["cancel"].checks if c.failure is not None]
    assert "semantic similarity 0." in reason and "< 0.75" in reason
    # the table holds the vectors of the texts compared: two expected, two answered
    assert ev.scorer is not None
    assert len(ev.scorer.embeddings.vectors) == 4


@needs_model
def test_score_shows_the_similarity_beside_the_failure(suite_dir: Path) -> None:
    result = runner.invoke(
        app, ["score", str(suite_dir), str(suite_dir / "records.jsonl"), "--no-store"]
    )
    assert result.exit_code == 0, result.output  # scoring reports; the gate decides
    assert "wrong_arguments" in result.output
    assert "semantic similarity 0." in result.output and "< 0.75" in result.output


def test_without_the_extra_validation_fails_in_one_line_naming_file_line_and_field(
    suite_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(semantic_module, "_missing_packages", lambda: ("onnxruntime",))
    result = runner.invoke(app, ["validate", str(suite_dir)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [ln for ln in result.output.splitlines() if "semantic" in ln]
    assert lines, result.output
    for line in lines:
        assert "suite.yaml:" in line
        assert "needs toolproof's semantic extra" in line
        assert "pip install" in line


@needs_model
def test_the_html_report_shows_each_similarity_beside_its_attempt(suite_dir: Path) -> None:
    from toolproof.report import html_report

    ev = evaluate(load_suite(suite_dir), [suite_dir / "records.jsonl"])
    page = html_report(ev)
    assert page.count('class="note small mut">semantic similarity 0.') == 2
    # model text is escaped like everything else
    assert "&#34;the item arrived damaged, so the customer wants a refund&#34;" in page
