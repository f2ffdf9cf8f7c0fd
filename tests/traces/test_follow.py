"""drift --follow: the error-rate alert per window on a growing OTLP/JSON Lines file."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolproof.cli._app import app
from toolproof.traces._follow import follow, parse_window

T0 = 1764400000 * 1_000_000_000 // 60_000_000_000 * 60_000_000_000  # a minute boundary


def _tool_line(n: int, minute: int, failed: bool) -> str:
    span = {
        "traceId": f"{n + 1:032x}", "spanId": f"{n + 1:016x}", "name": "execute_tool refund",
        "startTimeUnixNano": str(T0 + minute * 60_000_000_000 + n),
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
            {"key": "gen_ai.tool.name", "value": {"stringValue": "refund"}},
        ],
        "status": {"code": 2 if failed else 0},
    }  # fmt: skip
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n"


def _minute(start: int, minute: int, calls: int, errors: int) -> str:
    return "".join(_tool_line(start + i, minute, i < errors) for i in range(calls))


def test_each_window_gets_its_rate_and_the_alert_fires_on_the_bad_one(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    path.write_text(_minute(0, 0, 200, 0) + _minute(1000, 1, 200, 20) + _minute(2000, 2, 200, 1))
    results = follow(path, parse_window("1m"), wait=False)
    assert [(r.calls, r.errors, r.alert) for r in results] == [
        (200, 0, False),
        (200, 20, True),  # 10%: lower bound ~6.6% > 1%
        (200, 1, False),  # 0.5%
    ]
    result = CliRunner().invoke(app, ["drift", "--follow", str(path), "--window", "1m", "--once"])
    assert result.exit_code == 1
    assert result.output.count("ALERT") == 2  # the window's flag and the closing line


def test_a_growing_file_is_followed_as_it_grows(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    path.write_text(_minute(0, 0, 50, 0))
    got: list = []
    worker = threading.Thread(
        target=lambda: got.extend(
            follow(path, parse_window("1m"), wait=True, max_windows=2, poll=0.05)
        )
    )
    worker.start()
    time.sleep(0.3)
    assert worker.is_alive() and got == []  # waits: minute 0 is not closed yet
    with path.open("a") as f:
        half = _tool_line(999, 1, True)
        f.write(half[:40])  # a line written in two pieces is read once whole
        f.flush()
        time.sleep(0.2)
        f.write(half[40:] + _minute(100, 2, 10, 0) + _minute(200, 3, 10, 0))
    worker.join(timeout=10)
    assert not worker.is_alive()
    assert [(r.calls, r.errors) for r in got] == [(50, 0), (1, 1)]


def test_damaged_lines_are_located_on_stderr_not_skipped_unseen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolproof.traces import _follow, _read

    monkeypatch.setattr(_follow, "MAX_LINE_BYTES", 4096)
    monkeypatch.setattr(_read, "MAX_LINE_BYTES", 4096)
    path = tmp_path / "live.jsonl"
    path.write_text(
        _minute(0, 0, 5, 0)
        + '{"resourceSpans": [{"scopeSpans": \n'  # line 6: cut off
        + '{"x": "'
        + "A" * 10_000
        + '"}\n'  # line 7: over the line limit
        + "\x1b[31m not json\n"  # line 8
        + _minute(10, 0, 5, 0)
        + '{"resourceSpans": '  # line 14: the file ends inside it
    )
    problems: list = []
    results = follow(path, parse_window("1m"), wait=False, problems=problems)
    assert [(r.calls, r.errors) for r in results] == [(10, 0)]
    assert [(p.kind, p.line) for p in problems] == [
        ("malformed JSON", 6),
        ("line too long", 7),
        ("malformed JSON", 8),
        ("truncated", 14),
    ]
    result = CliRunner().invoke(app, ["drift", "--follow", str(path), "--window", "1m", "--once"])
    assert result.exit_code == 0
    assert "live.jsonl:6: " in result.stderr and "live.jsonl:7: line longer" in result.stderr
    assert "4 line(s) or span(s)" in result.stderr and "\x1b" not in result.stderr


def test_a_device_is_refused_not_read_forever() -> None:
    from toolproof.errors import UserError

    device = Path("/dev/zero")
    if not device.exists():
        pytest.skip("no /dev/zero here")
    with pytest.raises(UserError, match="device"):
        follow(device, parse_window("1m"), wait=False)
