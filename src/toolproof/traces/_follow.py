"""``drift --follow FILE --window 5m``: the tool-call error-rate alert per time window, on a
growing OTLP/JSON Lines file, for teams without a metrics stack.

Every tool span (``execute_tool``, OpenInference TOOL, Langfuse tool) counts as one
call with a known outcome, in the window its start time falls in. A window is
reported once a span two windows later arrives (late spans of the window before
still count), or when the input ends (``--once``). The alert is the one ``drift``
uses: the Wilson interval's lower bound above the threshold.
"""

from __future__ import annotations

import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from toolproof.errors import UserError
from toolproof.stats._rates import wilson_interval
from toolproof.traces._read import MAX_LINE_BYTES, Problem, SpanRow, _rows
from toolproof.traces._shapes import span_role, tool_run_of
from toolproof.trust import TooDeep, loads_json

__all__ = ["WindowResult", "follow", "parse_window"]


def parse_window(text: str) -> int:
    """'5m', '30s', '1h' → nanoseconds."""
    units = {"s": 1, "m": 60, "h": 3600}
    try:
        seconds = float(text[:-1]) * units[text[-1]]
    except (KeyError, ValueError, IndexError):
        raise UserError(f"--window {text!r}: give a duration such as 30s, 5m or 1h") from None
    if not seconds > 0 or seconds == float("inf"):  # nan and inf have no nanoseconds
        raise UserError(f"--window {text!r}: must be a finite duration above zero")
    return int(seconds * 1_000_000_000)


@dataclass(frozen=True)
class WindowResult:
    start_ns: int
    calls: int
    errors: int
    interval: tuple[float, float]
    alert: bool

    def render(self) -> str:
        when = datetime.fromtimestamp(self.start_ns / 1e9, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        rate = self.errors / self.calls
        flag = "  ALERT" if self.alert else ""
        return (
            f"{when}  calls {self.calls:6d}  errors {self.errors:5d}  tool_call_error_rate "
            f"{rate:6.1%} [{self.interval[0]:.1%}–{self.interval[1]:.1%}]{flag}"
        )


def _lines(
    path: Path, wait: bool, poll: float, stop: Callable[[], bool], problems: list[Problem]
) -> Iterator[tuple[int, bytes]]:
    """Complete lines of a growing file; with ``wait``, waits for more at the end. A line
    over the limit is dropped as it streams past, and counted in ``problems``."""
    try:
        mode = path.stat().st_mode
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISSOCK(mode):
            raise UserError(f"{path}: a device or socket, not a file of spans: not read")
        f = path.open("rb")
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror or exc}") from None
    number, pending, overlong = 0, b"", False
    with f:
        while not stop():
            chunk = f.readline(MAX_LINE_BYTES + 1)
            if not chunk:
                if not wait:
                    if pending or overlong:  # --once: the file ends inside a line
                        problems.append(
                            Problem("truncated", str(path), number + 1, "the file ends mid-line")
                        )
                    return
                time.sleep(poll)
                continue
            pending += chunk
            if not pending.endswith(b"\n"):
                if len(pending) > MAX_LINE_BYTES:
                    pending, overlong = b"", True  # an overlong line: dropped, counted below
                continue
            number += 1
            line, pending = pending, b""
            if overlong or len(line) > MAX_LINE_BYTES + 1:
                overlong = False
                problems.append(
                    Problem(
                        "line too long",
                        str(path),
                        number,
                        f"line longer than {MAX_LINE_BYTES >> 20} MiB skipped",
                    )
                )
                continue
            yield number, line


def follow(
    path: Path,
    window_ns: int,
    *,
    threshold: float = 0.01,
    wait: bool = True,
    max_windows: int | None = None,
    poll: float = 1.0,
    emit: Callable[[WindowResult], None] = lambda r: None,
    problems: list[Problem] | None = None,
) -> list[WindowResult]:
    problems = problems if problems is not None else []
    counts: dict[int, list[int]] = {}
    done: list[WindowResult] = []
    closed_before = -1

    def close(upto: int) -> None:
        nonlocal closed_before
        for w in sorted(k for k in counts if k <= upto):
            calls, errors = counts.pop(w)
            low, high = wilson_interval(errors, calls)
            result = WindowResult(w * window_ns, calls, errors, (low, high), low > threshold)
            done.append(result)
            emit(result)
        closed_before = max(closed_before, upto)

    def finished() -> bool:
        return max_windows is not None and len(done) >= max_windows

    for number, line in _lines(path, wait, poll, finished, problems):
        if not line.strip():
            continue
        try:
            obj = loads_json(line, 400)
        except (TooDeep, ValueError, UnicodeDecodeError) as exc:
            problems.append(Problem("malformed JSON", str(path), number, str(exc)[:80]))
            continue
        for row in _rows(obj, str(path), number, problems):
            if not isinstance(row, SpanRow) or row.start is None or span_role(row.attrs) != "tool":
                continue
            run = tool_run_of(row.attrs, row.name, row.status, row.status_message)
            failed = bool(run.status == 2 or run.error_type or (run.http_status or 0) >= 400)
            w = row.start // window_ns
            if w <= closed_before:
                continue  # too late for a window already reported
            slot = counts.setdefault(w, [0, 0])
            slot[0] += 1
            slot[1] += failed
            if counts and max(counts) - 2 >= min(counts):
                close(max(counts) - 2)
    if not finished():
        close(max(counts) if counts else closed_before)
    return done[:max_windows] if max_windows is not None else done
