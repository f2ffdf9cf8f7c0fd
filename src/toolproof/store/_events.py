"""``events.jsonl`` in a run folder: what the store knows that records and manifest do not.

A run's exit code and its gate decisions are appended here when they are
stored, so that ``toolproof history import`` rebuilds them from the folder.
One JSON object per line::

    {"format": "toolproof.event/1", "event": "run", "at": "...", "exit_code": 0}
    {"format": "toolproof.event/1", "event": "gate", "at": "...", "exit_code": 1,
     "baseline": {"key": "...", "folder": "..."}, "result": {...GateResult...}}

The file is untrusted input: a bad line is an error naming file, line and field.
A gate event is free text as far as the run goes: before it is stored, the
store decides the gate again from the run's records (:func:`check_gate_event`),
and refuses an event that says the gate passed when the records fail it.
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from toolproof._shared.safe_io import UnsafePath, open_read, open_write, refused
from toolproof.errors import SuiteError

EVENTS_FILE = "events.jsonl"
EVENT_FORMAT = "toolproof.event/1"
#: A run's events are a few lines; a bigger file is not one toolproof wrote.
MAX_EVENTS_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Event:
    kind: str
    at: datetime
    exit_code: int
    result: Any = None
    """For a gate event: the :class:`toolproof.gate.GateResult`."""
    baseline_key: str | None = None
    baseline_folder: str | None = None
    line: int = 0
    """Where the event is in its file."""


def append_event(folder: Path, data: dict[str, Any]) -> None:
    """Append one event line (one write, so concurrent appends do not interleave)."""
    line = json.dumps({"format": EVENT_FORMAT, **data}, ensure_ascii=False, default=str) + "\n"
    try:  # never through a link planted in the run folder
        with open_write(folder / EVENTS_FILE, append=True) as fh:
            fh.write(line.encode("utf-8"))
    except UnsafePath as exc:
        raise refused(folder / EVENTS_FILE, exc) from None


def read_events(folder: Path) -> list[Event]:
    path = folder / EVENTS_FILE
    if not os.path.lexists(path):
        return []
    from toolproof.gate import GateResult

    out = []
    try:
        handle = open_read(path, limit=MAX_EVENTS_BYTES)
    except UnsafePath as exc:
        raise SuiteError(str(path), str(exc)) from None
    with io.TextIOWrapper(handle, encoding="utf-8", errors="surrogateescape") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            if not line.endswith("\n"):
                break  # a torn last line: its writer was killed before it finished
            out.append(_event(str(path), number, line, GateResult))
    return out


def _event(file: str, number: int, line: str, gate_result: Any) -> Event:
    def fail(message: str, *field: str) -> SuiteError:
        return SuiteError(file, message, line=number, path=field)

    try:
        data = json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        raise fail("not valid JSON") from None
    if not isinstance(data, dict):
        raise fail("expected a JSON object")
    if data.get("format") != EVENT_FORMAT:
        raise fail(f"unknown events format {data.get('format')!r}", "format")
    kind = data.get("event")
    if kind not in ("run", "gate"):
        raise fail(f"unknown event {kind!r} (run or gate)", "event")
    try:
        at = datetime.fromisoformat(str(data.get("at")))
    except ValueError:
        raise fail("not an ISO 8601 time", "at") from None
    at = at if at.tzinfo is not None else at.replace(tzinfo=UTC)
    code = data.get("exit_code")
    if not isinstance(code, int) or isinstance(code, bool):
        raise fail("expected an integer", "exit_code")
    if kind == "run":
        return Event("run", at, code, line=number)
    baseline = data.get("baseline") or {}
    if not isinstance(baseline, dict):
        raise fail("expected an object", "baseline")
    try:
        result = gate_result.model_validate(data.get("result"))
    except ValidationError as exc:
        err = exc.errors()[0]
        raise fail(err["msg"], "result", *(str(p) for p in err["loc"])) from None
    key, where = baseline.get("key"), baseline.get("folder")
    return Event(
        "gate",
        at,
        code,
        result,
        key if isinstance(key, str) else None,
        where if isinstance(where, str) else None,
        number,
    )


def check_gate_event(file: str, event: Event, evaluation: Any) -> None:
    """Refuse a gate event that passes a run its records fail.

    The gate is decided again from the records, with the event's options (and
    every infrastructure error allowed: the allowance given then is not known
    for certain). A baseline only adds reasons to fail, so a run that fails
    without one failed with one too. An event that says the run failed is kept
    as it is.
    """
    from toolproof.gate import GateOptions, InfraAllowance, run_gate

    claimed = event.result
    if claimed is None or (not claimed.passed and event.exit_code != 0):
        return
    options = claimed.options
    opts = GateOptions(
        margin=float(options.get("margin", 0.02)),
        require_significance=bool(options.get("require_significance", False)),
        alpha=float(options.get("alpha", 0.05)),
        max_infra=InfraAllowance(1.0),
        allow_partial=bool(options.get("allow_partial", False)),
        allow_cached=bool(options.get("allow_cached", True)),
        repaired=bool(options.get("repaired", False)),
    )
    decided = run_gate(evaluation, None, opts)
    if decided.passed and decided.exit_code == 0:
        return
    reasons = [f.message for t in decided.targets for f in t.findings if f.blocking]
    why = reasons[0] if reasons else f"exit code {decided.exit_code}"
    raise SuiteError(
        file,
        f"this gate event says the gate passed, but the run's records fail it ({why}); "
        "it was not written by toolproof for these records",
        line=event.line,
        path=("result", "passed"),
    )
