"""Every report says how many answers came from the response cache."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET

from rich.console import Console

from tests.gate import builders as b
from toolproof.evaluate import evaluate
from toolproof.gate import run_gate
from toolproof.report import gate_json, render_gate, render_junit, render_markdown, summary_json


def _result_with_cached(n: int):  # type: ignore[no-untyped-def]
    s = b.suite()
    recs = b.records(s)
    for i in range(n):
        recs[i] = recs[i].model_copy(update={"cached": True})
    return run_gate(evaluate(s, recs, source="m.jsonl", manifest=b.manifest(s)))


def test_every_report_counts_cached_answers() -> None:
    result = _result_with_cached(3)
    total = result.targets[0].summary.attempts
    out = io.StringIO()
    render_gate(result, Console(file=out, width=200, color_system=None))
    assert re.search(rf"answers from the cache \(no model call\) +│ 3 of {total} ", out.getvalue())
    assert f"Answers from the cache (no model call): 3 of {total}" in render_markdown(result)
    props = {
        p.get("name"): p.get("value")
        for p in ET.fromstring(render_junit(result)).find("testsuite").find("properties")  # type: ignore[union-attr]
    }
    assert props["cached"] == f"3/{total}"
    assert gate_json(result)["targets"][0]["summary"]["cached"] == 3
    summaries = {t.target: t.summary for t in result.targets}
    assert summary_json(summaries)["targets"]["m"]["cached"] == 3


def test_zero_cached_answers_are_said_too() -> None:
    result = _result_with_cached(0)
    assert "Answers from the cache (no model call): 0 of" in render_markdown(result)
