"""Every figure a judge decided carries ⚖ and a legend in words; what a judge wrote stays escaped.

The judge's model spec comes from a judgements file and its reasoning from the
judge: both are untrusted. Here both hold HTML tags, Markdown pipes, a
terminal escape sequence and a right-to-left override.
"""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET

from rich.console import Console

from tests.gate.judged_runs import JUDGE, calibration, gate, runs, suite
from toolproof.report import gate_json, render_gate, render_html, render_junit, render_markdown
from toolproof.report._htmlview import run_view

HOSTILE = "<script>alert(1)</script> | cell | \x1b[31mred\x1b[0m \u202eevil\u202c ![x](http://e.x)"
HOSTILE_JUDGE = "openai:" + HOSTILE
LEGEND = (
    "⚖ = decided by a judge (argument_meaning.same_meaning: model openai:judge-model, "
    "uncalibrated: no calibration record for rubric 'argument_meaning')"
)


def hostile_result():  # type: ignore[no-untyped-def]
    base, cur = runs(suite(), judge=HOSTILE_JUDGE, reasoning=HOSTILE)
    return base, cur, gate(base, cur)


def terminal(result) -> str:  # type: ignore[no-untyped-def]
    out = io.StringIO()
    render_gate(result, Console(file=out, width=400, color_system=None))
    return out.getvalue()


def test_the_gate_terminal_marks_judge_figures_and_says_what_the_mark_means() -> None:
    base, cur = runs(suite())
    text = terminal(gate(base, cur))
    assert "⚖ strict pass" in text and "⚖ argument accuracy" in text
    assert "│ tool selection" in text  # a figure no judge decided is not marked
    assert LEGEND in text
    assert "⚖ 75.0% (3/4)" in text  # the report table's judged cells


def test_a_calibrated_judge_is_named_calibrated_in_the_legend() -> None:
    base, cur = runs(suite())
    text = terminal(gate(base, cur, calibration(0.8), calibration(0.8, "fp-base")))
    assert "model openai:judge-model, calibrated: κ 0.80 ≥ 0.60 on n=60" in text


def test_markdown_marks_the_headline_and_the_comparison() -> None:
    base, cur = runs(suite())
    md = render_markdown(gate(base, cur))
    row = next(line for line in md.splitlines() if line.startswith("| m |"))
    cells = [c.strip() for c in row.split("|")]
    assert cells[3].startswith("⚖ 75.0%")  # strict pass
    assert not cells[4].startswith("⚖")  # tool selection
    assert cells[5].startswith("⚖ 75.0%") and cells[6] == "⚖ 75.0%"  # arguments, pass^k
    assert "| ⚖ strict pass | 100.0% | 75.0% | -25.0 | 1 |" in md
    assert "| tool selection | 100.0% | 100.0% |" in md
    assert "⚖ = decided by a judge (argument\\_meaning.same\\_meaning\\: model openai\\:" in md


def test_junit_says_a_failure_was_decided_by_a_judge() -> None:
    base, cur = runs(suite())
    root = ET.fromstring(render_junit(gate(base, cur)))
    c0 = next(c for c in root.iter("testcase") if c.get("name") == "c0")
    failure = c0.find("failure")
    assert failure is not None
    message = failure.get("message", "")
    assert message.startswith("⚖ decided by a judge (argument_meaning.same_meaning: model ")
    assert "uncalibrated: no calibration record" in message
    props = {p.get("name"): p.get("value") for p in c0.iter("property")}
    assert props["judge"] is not None and "openai:judge-model" in props["judge"]
    gate_case = next(c for c in root.iter("testcase") if c.get("name") == "(release gate)")
    assert gate_case.find("failure") is None  # the judge's drop is advisory
    out = gate_case.find("system-out")
    assert out is not None and out.text is not None and "⚖ judge-derived" in out.text


def test_hostile_judge_text_is_escaped_in_the_terminal() -> None:
    _, _, result = hostile_result()
    text = terminal(result)
    assert "\x1b" not in text and "\u202e" not in text
    assert "\\x1b[31mred" in text and "\\u202eevil" in text
    assert "<script>alert(1)</script>" in text  # shown as text: a terminal runs no HTML


def test_hostile_judge_text_is_escaped_in_markdown() -> None:
    _, _, result = hostile_result()
    md = render_markdown(result)
    assert "<script>" not in md and "&lt;script&gt;" in md
    assert "\x1b" not in md and "\u202e" not in md and "\\u202eevil" in md
    assert "| cell |" not in md and "\\| cell \\|" in md  # no extra table cells
    assert "![x](" not in md


def test_hostile_judge_text_is_escaped_in_junit() -> None:
    _, _, result = hostile_result()
    xml = render_junit(result)
    assert "\x1b" not in xml and "\u202e" not in xml and "<script>" not in xml
    root = ET.fromstring(xml)  # well formed
    c0 = next(c for c in root.iter("testcase") if c.get("name") == "c0")
    failure = c0.find("failure")
    assert failure is not None and "<script>alert(1)</script>" in failure.get("message", "")


def test_hostile_judge_text_is_data_in_json() -> None:
    _, _, result = hostile_result()
    text = json.dumps(gate_json(result), ensure_ascii=False)
    data = json.loads(text)
    [t] = data["targets"]
    assert t["judges"][0]["model"] == HOSTILE_JUDGE  # kept as written, as a JSON string
    assert any(f["judge"] for f in t["findings"])


def test_the_html_report_marks_judged_figures_and_escapes_the_judges_reasoning() -> None:
    _, cur, result = hostile_result()
    html = render_html(run_view(cur, result))
    mark = '<span class="judge" role="img" aria-label="decided by a judge"'
    assert html.count(mark) >= 4  # headline cells, the judged figures, the attempt
    assert "decided by a judge (argument_meaning.same_meaning: model openai:" in html
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "\x1b" not in html and "\u202e" not in html
    assert "\\x1b[31mred" in html and "\\u202eevil" in html
    assert 'class="reasoning"' in html  # the judge's reasoning is shown, as text
    assert "Judged figures" in html and "argument_meaning" in html


def test_the_html_report_without_a_judge_has_no_mark() -> None:
    from tests.gate.judged_runs import close
    from toolproof.evaluate import evaluate
    from toolproof.gate import GateOptions, run_gate

    s = suite()
    ev = evaluate(s, [close("c2"), close("c3")])
    html = render_html(run_view(ev, run_gate(ev, None, GateOptions(allow_partial=True))))
    assert 'aria-label="decided by a judge"' not in html and JUDGE not in html
