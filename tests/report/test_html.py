"""The self-contained HTML report, read as text (the browser tests drive it in Chromium)."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

from tests.web.runs import (
    ARG_XSS,
    CASE_XSS,
    REPLY_XSS,
    TOOL_XSS,
    TRUST,
    write_xss_suite,
    xss_records,
)
from toolproof.evaluate import evaluate, load_run
from toolproof.gate import run_gate
from toolproof.report import html_report, run_view
from toolproof.report._htmlview import SharedParts, histogram, readable_diff
from toolproof.suite import load_suite

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = ROOT / "examples" / "support"


def _example() -> str:
    ev = load_run(SUPPORT / "records.jsonl", suite=SUPPORT, trust=TRUST)
    return html_report(ev, run_gate(ev))


def test_report_is_self_contained_and_small() -> None:
    html = _example()
    assert len(html.encode()) < 2_000_000
    # nothing from elsewhere: no URL to fetch, no external script, style, font or image
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "@import" not in html and "url(" not in html
    assert html.count("<script") == 1 and html.count("<style") == 1


def test_csp_allows_only_the_inlined_script_and_style_by_hash() -> None:
    html = _example()
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert csp is not None
    policy = dict(part.partition(" ")[::2] for part in csp[1].replace("&#39;", "'").split("; "))
    assert policy["default-src"] == "'none'"
    script = re.search(r"<script>(.*?)</script>", html, re.S)
    style = re.search(r"<style>(.*?)</style>", html, re.S)
    assert script is not None and style is not None

    def sha(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    assert policy["script-src"] == sha(script[1])
    assert policy["style-src"] == sha(style[1])
    assert "unsafe-inline" not in csp[1]


def test_report_holds_every_section() -> None:
    html = _example()
    for part in (
        "Headline",
        "Failure classes",
        "Tool confusion matrix",
        "(none)",
        "Per tool",
        "By risk",
        "By tag",
        "pass^k per case",
        "Latency distribution",
        'id="filters"',
        "raw request and response",
    ):
        assert part in html, part
    # every case of the run, with its contract and reason
    ev = load_run(SUPPORT / "records.jsonl", suite=SUPPORT, trust=TRUST)
    assert html.count('class="entry"') == len(ev.records)
    case = next(c for c in ev.suite.cases if c.id == "lookup-not-search")
    assert case.reason is not None
    assert case.reason.replace("'", "&#39;") in html


def test_model_output_is_escaped(tmp_path: Path) -> None:
    suite = load_suite(write_xss_suite(tmp_path))
    ev = evaluate(suite, [xss_records(tmp_path / "xss.jsonl")])
    html = html_report(ev, run_gate(ev))
    body = html.split("<body>", 1)[1]
    for payload in (CASE_XSS, REPLY_XSS, ARG_XSS, TOOL_XSS, "<b>bold</b>", "<i>markup</i>"):
        assert payload not in body, payload
    assert "&lt;script&gt;alert(&#39;reply&#39;)&lt;/script&gt;" in body
    assert body.count("<script") == 1


def test_readable_diff_marks_the_differing_words() -> None:
    lines = readable_diff(
        'expected: lookup_order(order_id="ORD-481520")\nactual:   lookup_order(order_id="481520")'
    )
    assert [ln.label for ln in lines] == ["expected", "actual"]
    changed = [p.text for p in lines[0].parts if p.changed]
    assert changed == ["ORD-"]
    assert "".join(p.text for p in lines[1].parts) == 'lookup_order(order_id="481520")'
    assert not any(p.changed for p in lines[1].parts)
    other = readable_diff("wrong tools: something")
    assert other[0].parts[0].text == "wrong tools: something"


def test_shared_request_parts_are_shown_once_and_named() -> None:
    from toolproof.types import Record

    tools = [{"name": "t", "description": "x" * 500}]
    recs = [
        Record(case_id=f"c{i}", request={"messages": [{"role": "user", "content": str(i)}],
                                          "tools": tools})
        for i in range(3)
    ]
    shared = SharedParts.of(recs)
    assert list(shared.blocks.values()) == ["R1"]
    shown = shared.render(recs[0].request)
    assert "x" * 500 not in shown and "shared request part R1" in shown
    assert '"content": "0"' in shown
    assert SharedParts.of(recs[:1]).blocks == {}


def test_latency_histogram_counts_every_attempt() -> None:
    h = histogram([100.0, 120.0, 5000.0, 90000.0])
    assert h is not None and sum(b.count for b in h.bars) == 4 == h.n
    assert histogram([]) is None


def test_run_view_entries_follow_the_suite_order() -> None:
    suite = load_suite(SUPPORT, TRUST)
    ev = evaluate(suite, [SUPPORT / "records.jsonl"], trust=TRUST)
    view = run_view(ev, details=False)
    order = [c.id for c in suite.cases]
    ids = [e.case_id for e in view.entries]
    assert ids == sorted(ids, key=order.index)
    assert all(e.details == [] for e in view.entries)
    flaky = [e for e in view.entries if e.status == "flaky"]
    assert flaky == []  # one attempt per case
    failing = {e.case_id for e in view.entries if e.status == "fail"}
    assert failing == {v.case_id for v in ev.targets["recorded:demo-model"].verdicts
                       if not v.passed}
