"""drift: selection distribution (chi-square, Jensen-Shannon) and the error-rate alert."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolproof.cli._app import app
from toolproof.errors import UserError
from toolproof.traces import Redactor, drift, import_traces, read_window, render_drift

FIXTURES = Path(__file__).parent / "fixtures"


def _window(folder: Path, mix: dict[str, int], errors: int = 0, calls_ok: int = 0) -> Path:
    folder.mkdir(parents=True)
    lines = []
    for tool, n in mix.items():
        for _ in range(n):
            calls = [] if tool == "(no call)" else [{"tool": tool, "outcome": "unknown"}]
            lines.append({"trace_id": "t", "span_id": "s", "calls": calls})
    for i in range(errors + calls_ok):
        outcome = "error" if i < errors else "ok"
        lines.append({"calls": [{"tool": "lookup", "outcome": outcome}]})
    (folder / "decisions.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return folder


def test_a_shift_in_selection_and_a_new_tool_raise_the_alert(tmp_path: Path) -> None:
    base = _window(tmp_path / "a", {"lookup": 500, "refund": 300, "(no call)": 200})
    cur = _window(tmp_path / "b", {"lookup": 300, "refund": 300, "(no call)": 300, "cancel|x": 100})
    d = drift(read_window(base), read_window(cur))
    assert d.p_value is not None and d.p_value < 1e-6
    assert d.js_distance is not None and 0.1 < d.js_distance < 1
    assert d.moved[0][0] == "lookup"
    assert d.new == ["cancel|x"] and d.vanished == []
    assert any("tool selection drifted" in a for a in d.alerts)
    md = render_drift(d, "markdown")
    assert "cancel\\|x" in md and "| lookup | 50.0% | 30.0% | -20.0% |" in md


def test_the_same_mix_raises_nothing(tmp_path: Path) -> None:
    base = _window(tmp_path / "a", {"lookup": 500, "(no call)": 500})
    cur = _window(tmp_path / "b", {"lookup": 51, "(no call)": 49})
    d = drift(read_window(base), read_window(cur))
    assert d.alerts == [] and d.p_value is not None and d.p_value > 0.5
    result = CliRunner().invoke(app, ["drift", "--baseline", str(base), "--current", str(cur)])
    assert result.exit_code == 0, result.output
    assert "no alert" in result.output


def test_error_rate_alerts_only_when_confidently_above_the_threshold(tmp_path: Path) -> None:
    base = _window(tmp_path / "a", {}, errors=0, calls_ok=1000)
    noisy = _window(tmp_path / "b", {}, errors=1, calls_ok=60)  # 1.6%, lower bound < 1%
    high = _window(tmp_path / "c", {}, errors=40, calls_ok=960)  # 4%, lower bound ~2.9%
    assert drift(read_window(base), read_window(noisy)).alerts == []
    d = drift(read_window(base), read_window(high))
    assert d.alerts == [d.alerts[0]] and "tool_call_error_rate 4.0%" in d.alerts[0]
    result = CliRunner().invoke(
        app, ["drift", "--baseline", str(base), "--current", str(high), "-f", "json"]
    )
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert data["current"]["call_errors"] == 40 and data["alerts"]
    result = CliRunner().invoke(
        app, ["drift", "--baseline", str(base), "--current", str(high), "--threshold", "0.2"]
    )
    assert result.exit_code == 0


def test_windows_from_an_import_without_content(tmp_path: Path) -> None:
    a = tmp_path / "a"
    import_traces(
        [FIXTURES / "otelv2-latest-nocontent.spans.jsonl"], a, label="a", redactor=Redactor()
    )
    w = read_window(a)
    assert w.decisions == 7 and w.calls == 4 and w.call_errors == 1
    assert w.selection == {"(no call)": 4, "get_weather": 2, "send_email": 1}


def test_a_damaged_decision_line_is_located(tmp_path: Path) -> None:
    folder = tmp_path / "x"
    folder.mkdir()
    (folder / "decisions.jsonl").write_text('{"calls": []}\n{oops\n')
    with pytest.raises(UserError, match=r"decisions.jsonl:2"):
        read_window(folder)


def _args_window(folder: Path, priority_high: int, n: int, notify_given: int) -> Path:
    """n refund calls: 'priority' (enum) high in priority_high of them, 'notify' given in
    notify_given of them, through a real import (the schema comes from the trace)."""
    schema = {"type": "object", "required": ["order_id"], "properties": {
        "order_id": {"type": "string"}, "priority": {"type": "string", "enum": ["low", "high"]},
        "notify": {"type": "boolean"}}}  # fmt: skip
    lines = []
    for i in range(n):
        args: dict = {"order_id": f"A-{i}", "priority": "high" if i < priority_high else "low"}
        if i < notify_given:
            args["notify"] = True
        out = [{"role": "assistant", "parts": [{"type": "tool_call", "id": "c", "name": "refund",
                                                "arguments": args}]}]  # fmt: skip
        attrs = [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(out)}},
            {"key": "gen_ai.tool.definitions", "value": {"stringValue": json.dumps(
                [{"type": "function", "name": "refund", "parameters": schema}])}},
        ]  # fmt: skip
        span = {"traceId": f"{i + 1:032x}", "spanId": f"{i + 1:016x}", "name": "chat",
                "attributes": attrs}  # fmt: skip
        lines.append(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}))
    src = folder.with_suffix(".jsonl")
    src.write_text("\n".join(lines) + "\n")
    import_traces([src], folder, label="w", redactor=Redactor())
    return folder


def test_argument_drift_for_enums_booleans_and_left_out_optionals(tmp_path: Path) -> None:
    base = _args_window(tmp_path / "a", priority_high=20, n=200, notify_given=180)
    cur = _args_window(tmp_path / "b", priority_high=120, n=200, notify_given=60)
    d = drift(read_window(base), read_window(cur))
    (priority,) = [a for a in d.arguments if a[0] == "refund.priority"]
    assert priority[3] == {"high": 0.1, "low": 0.9} and priority[4] == {"high": 0.6, "low": 0.4}
    assert priority[2] is not None and priority[2] < 1e-6
    assert any("argument refund.priority drifted" in a for a in d.alerts)
    assert ("refund.notify", 0.1, 0.7) in [(n, round(b, 3), round(c, 3)) for n, b, c in d.absent]
    text = render_drift(d)
    assert "refund.priority: JS" in text and "refund.notify: 10% → 70%" in text
    same = drift(read_window(base), read_window(base))
    assert same.alerts == []


def _run_folder(folder: Path, priority_high: int, n: int, notify_given: int, shape: str) -> Path:
    """A run folder whose n attempts each called refund: 'priority' (enum) high in
    priority_high of them, 'notify' (optional boolean) given in notify_given. The tools
    are those the recorded request offered, in toolproof's own shape or, in a multi-step
    attempt's first step, OpenAI's or Anthropic's."""
    schema = {"type": "object", "required": ["order_id"], "properties": {
        "order_id": {"type": "string"}, "priority": {"type": "string", "enum": ["low", "high"]},
        "notify": {"type": "boolean"}}}  # fmt: skip
    tools = {
        "toolproof": [{"name": "refund", "parameters": schema}],
        "openai": [{"type": "function", "function": {"name": "refund", "parameters": schema}}],
        "anthropic": [{"name": "refund", "input_schema": schema}],
    }[shape]
    folder.mkdir(parents=True)
    lines = []
    for i in range(n):
        args: dict = {"order_id": f"A-{i}", "priority": "high" if i < priority_high else "low"}
        if i < notify_given:
            args["notify"] = True
        record: dict = {"format": "toolproof.record/2", "case_id": f"c{i}", "target": "m",
                        "outcome": "ok",
                        "response": {"tool_calls": [{"name": "refund", "arguments": args}]}}  # fmt: skip
        if shape == "toolproof":
            record["request"] = {"messages": [], "tools": tools}
        else:
            record["steps"] = [{"request": {"messages": [], "tools": tools}}]
        lines.append(json.dumps(record))
    (folder / "records.jsonl").write_text("\n".join(lines) + "\n")
    return folder


@pytest.mark.parametrize("shape", ["toolproof", "openai", "anthropic"])
def test_argument_drift_from_run_folders(tmp_path: Path, shape: str) -> None:
    base = _run_folder(tmp_path / "a", priority_high=20, n=200, notify_given=180, shape=shape)
    cur = _run_folder(tmp_path / "b", priority_high=120, n=200, notify_given=60, shape=shape)
    d = drift(read_window(base), read_window(cur))
    (priority,) = [a for a in d.arguments if a[0] == "refund.priority"]
    assert priority[3] == {"high": 0.1, "low": 0.9} and priority[4] == {"high": 0.6, "low": 0.4}
    assert any("argument refund.priority drifted" in a for a in d.alerts)
    assert ("refund.notify", 0.1, 0.7) in [(n, round(b, 3), round(c, 3)) for n, b, c in d.absent]


def test_argument_drift_between_an_import_and_a_run_folder(tmp_path: Path) -> None:
    """The import's decisions and a run's records count arguments the same way."""
    prod = _args_window(tmp_path / "prod", priority_high=20, n=200, notify_given=180)
    run = _run_folder(tmp_path / "run", priority_high=20, n=200, notify_given=180, shape="openai")
    a, b = read_window(prod), read_window(run)
    assert a.values == b.values and a.optional == b.optional
    assert drift(a, b).arguments[0][1] == 0.0


def test_a_run_folder_without_offered_tools_counts_no_arguments(tmp_path: Path) -> None:
    run = _run_folder(tmp_path / "run", priority_high=20, n=10, notify_given=5, shape="openai")
    text = (run / "records.jsonl").read_text().replace('"tools"', '"other"')
    (run / "records.jsonl").write_text(text)
    w = read_window(run)
    assert w.decisions == 10 and w.values == {} and w.optional == {}
