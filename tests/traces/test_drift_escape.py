"""Text from traces is escaped in every drift line, the alerts included."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from tests.traces.test_drift import FIXTURES
from toolproof.traces import Redactor, import_traces
from toolproof.traces._drift import drift, read_window, render_drift


def test_an_alert_naming_a_hostile_tool_is_escaped(tmp_path: Path) -> None:
    a = tmp_path / "a"
    import_traces(
        [FIXTURES / "otelv2-latest-nocontent.spans.jsonl"], a, label="a", redactor=Redactor()
    )
    d = drift(read_window(a), read_window(a))
    hostile = dataclasses.replace(d, alerts=["argument get\x1b]0;PWNED\x07red.unit drifted"])
    for fmt in ("terminal", "markdown"):
        out = render_drift(hostile, fmt)
        assert "ALERT" in out
        assert "\x1b" not in out and "\x07" not in out, out
