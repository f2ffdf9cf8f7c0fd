"""Hostile windows: drift and traces import give a located error (exit 2) or count what
they could not read, never a traceback (exit 1 of drift means an alert fired)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.cli.cli_support import toolproof
from tests.traces.test_drift import FIXTURES, _run_folder
from toolproof.cli._app import app
from toolproof.errors import UserError
from toolproof.traces import read_window

runner = CliRunner()


def test_a_recorded_schema_whose_required_is_not_a_list_is_not_trusted(tmp_path: Path) -> None:
    """`required: 5` in the tools a run's request offered: the enum values still count, the
    optional parameters are not guessed (the schema does not say which are required)."""
    base = _run_folder(tmp_path / "a", priority_high=20, n=40, notify_given=30, shape="openai")
    cur = _run_folder(tmp_path / "b", priority_high=20, n=40, notify_given=30, shape="openai")
    text = (cur / "records.jsonl").read_text()
    (cur / "records.jsonl").write_text(text.replace('"required": ["order_id"]', '"required": 5'))
    w = read_window(cur)
    assert w.decisions == 40 and w.values[("refund", "priority")] == {"high": 20, "low": 20}
    assert w.optional == {}
    result = runner.invoke(app, ["drift", "--baseline", str(base), "--current", str(cur)])
    assert result.exit_code == 0, result.output
    assert "refund.priority: JS 0.000" in result.output


def test_an_imported_schema_whose_required_is_not_a_list_is_not_trusted(tmp_path: Path) -> None:
    """An OpenInference trace whose tool schema says `"required": 5`: imported, with no
    optional parameters guessed for that tool."""
    text = (FIXTURES / "openinference.spans.jsonl").read_text()
    hostile = text.replace('\\"required\\": [\\"city\\"]', '\\"required\\": 5')
    assert hostile != text
    src = tmp_path / "req5.spans.jsonl"
    src.write_text(hostile)
    out = tmp_path / "imp"
    result = runner.invoke(app, ["traces", "import", str(src), "-o", str(out)])
    assert result.exit_code == 0, result.output
    decisions = [json.loads(x) for x in (out / "decisions.jsonl").read_text().splitlines()]
    weather = [c for d in decisions for c in d["calls"] if c["tool"] == "get_weather"]
    assert weather and all(c.get("optional_given", {}) == {} for c in weather)
    args = ["drift", "--baseline", str(out), "--current", str(out), "--threshold", "0.99"]
    drifted = runner.invoke(app, args)
    assert drifted.exit_code == 0, drifted.output


def test_a_decision_line_nested_too_deeply_is_located(tmp_path: Path) -> None:
    """A decisions.jsonl line of 100,000 [ then ]: exit 2 naming the file and line."""
    folder = tmp_path / "imp_deep"
    folder.mkdir()
    deep = "[" * 100_000 + "]" * 100_000
    (folder / "decisions.jsonl").write_text('{"calls": []}\n' + deep + "\n")
    done = toolproof("drift", "--baseline", str(folder), "--current", str(folder), timeout=60)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"{folder / 'decisions.jsonl'}:2: not a decision line (nested too deeply)" in (
        done.stderr
    )


def test_a_decision_line_that_is_not_utf8_is_located(tmp_path: Path) -> None:
    folder = tmp_path / "imp_bytes"
    folder.mkdir()
    (folder / "decisions.jsonl").write_bytes(b'{"calls": []}\n{"calls": "\xff\xfe"}\n')
    with pytest.raises(UserError, match=r"decisions.jsonl:2: not a decision line"):
        read_window(folder)


def test_drift_markdown_escapes_as_the_reports_do(tmp_path: Path) -> None:
    """Enum values `<script>x</script>` and `@everyone` from a run's records: the markdown
    report shows them through the reports' md_text (no HTML, no mention), and the
    terminal report shows them as they are."""
    from toolproof.report._escape import md_text

    base = _run_folder(tmp_path / "a", priority_high=20, n=40, notify_given=30, shape="openai")
    cur = _run_folder(tmp_path / "b", priority_high=20, n=40, notify_given=30, shape="openai")
    text = (cur / "records.jsonl").read_text()
    text = text.replace('"high"', '"<script>x</script>"').replace('"low"', '"@everyone"')
    (cur / "records.jsonl").write_text(text)
    args = ["drift", "--baseline", str(base), "--current", str(cur), "--format", "markdown"]
    out = runner.invoke(app, args).output
    assert "priority" in out
    assert "<script>" not in out and "@everyone" not in out, out
    assert md_text("<script>x</script>") in out and md_text("@everyone") in out
    terminal = runner.invoke(app, args[:-2]).output
    assert "<script>x</script>" in terminal and "@everyone" in terminal


def test_a_failed_tool_result_nested_too_deeply_is_kept_as_text(tmp_path: Path) -> None:
    """A failed tool span whose result reads `{"error": [[[[…` (100,000 deep): imported,
    its result kept as the error's text, not a RecursionError."""
    src = FIXTURES / "otelv2-latest-content.spans.jsonl"
    lines, hit = [], 0
    for line in src.read_text().splitlines():
        obj = json.loads(line)
        for rs in obj.get("resourceSpans", []):
            for ss in rs.get("scopeSpans", []):
                for sp in ss.get("spans", []):
                    if (sp.get("status") or {}).get("code") not in (2, "STATUS_CODE_ERROR"):
                        continue
                    for a in sp.get("attributes", []):
                        if a["key"] == "gen_ai.tool.call.result":
                            a["value"] = {"stringValue": '{"error": ' + "[" * 100_000}
                            hit += 1
        lines.append(json.dumps(obj))
    assert hit == 1
    hostile = tmp_path / "deep-result.spans.jsonl"
    hostile.write_text("\n".join(lines) + "\n")
    out = tmp_path / "imp"
    result = runner.invoke(app, ["traces", "import", str(hostile), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "decisions.jsonl").is_file() and (out / "cases.jsonl").is_file()
    assert '{\\"error\\": [[[' in (out / "cases.jsonl").read_text()


def test_provenance_and_review_lines_nested_too_deeply(tmp_path: Path) -> None:
    """An import folder's provenance.jsonl and a promote reviews file are untrusted: a line
    nested too deeply is skipped (provenance, as any damaged line) or located (reviews)."""
    from toolproof.traces import provenance_ids
    from toolproof.traces._promote import _reviews

    deep = "[" * 100_000 + "]" * 100_000
    good = '{"case_id": "c1", "trace_id": "t", "span_id": "s"}'
    (tmp_path / "provenance.jsonl").write_text(f"{deep}\n{good}\n")
    assert provenance_ids(tmp_path) == {"c1": ("t", "s")}
    reviews = tmp_path / "reviews.jsonl"
    reviews.write_text(f'{{"case_id": "c1"}}\n{deep}\n')
    with pytest.raises(UserError, match=r"reviews.jsonl:2: not a review line"):
        _reviews(reviews)


@pytest.mark.parametrize("window", ["1e999m", "nanm", "infs", "0s"])
def test_a_follow_window_with_no_finite_duration_is_refused(window: str) -> None:
    from toolproof.traces._follow import parse_window

    with pytest.raises(UserError, match="must be a finite duration above zero"):
        parse_window(window)
