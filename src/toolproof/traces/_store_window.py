"""Drift windows read from the history store: the last gated run, or the runs in a time range.

``last-gated``: the newest stored run whose latest gate decision passed (of a
suite and a target, when given). Its attempts show what the candidate did when
it was last allowed through: compared with production's decisions, drift says
whether the gated suite still resembles traffic.

``store:SINCE..UNTIL``: every stored run that started in ``[SINCE, UNTIL)``
(ISO 8601; either side may be left empty), of a suite and a target when given.

Each scored attempt (outcome ``ok``) counts as one decision: the distinct tools
it called, or ``(no call)``. The store keeps no tool results, so a store window
has no ``tool_call_error_rate`` of its own. The store keeps no arguments either:
argument drift reads each attempt's raw record from its run folder (only inside
that folder), and counts the attempts whose record is not there. Production's replay targets
(``prod:…``) are never counted as a candidate's.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolproof.errors import UserError
from toolproof.traces._drift import (
    Window,
    count_arguments,
    count_decision,
    record_decision,
    record_schemas,
)

__all__ = ["LAST_GATED", "is_store_window", "read_store_window"]

LAST_GATED = "last-gated"
_PREFIX = "store:"
#: Attempts read from the store per page.
_PAGE = 1000


def is_store_window(spec: str) -> bool:
    """Whether a --baseline / --current value names a store window, not a folder."""
    return spec == LAST_GATED or spec.startswith(_PREFIX)


def _when(text: str, spec: str) -> datetime | None:
    text = text.strip()
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UserError(
            f"{spec}: {text!r} is not an ISO 8601 time (e.g. store:2026-12-01..2026-12-02)"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _open(location: str | None) -> Any:
    from toolproof.store import open_store, resolve_location

    where = resolve_location(location)
    if where is None:
        raise UserError("drift: the history store is off (--store off or TOOLPROOF_STORE=off)")
    if "://" not in where or where.startswith("sqlite:///"):
        path = Path(where.removeprefix("sqlite:///"))
        if not path.is_file():
            raise UserError(
                f"drift: no history store at {path} (give --store, or store runs with "
                "`toolproof run --store` / `toolproof gate --store`)"
            )
    return open_store(where)


def read_store_window(
    spec: str, *, store: str | None, suite: str | None = None, target: str | None = None
) -> Window:
    """The window ``spec`` names (``last-gated`` or ``store:SINCE..UNTIL``) as counts."""
    with _open(store) as db:
        if spec == LAST_GATED:
            return _last_gated(db, suite, target)
        return _range(db, spec, suite, target)


def _runs(db: Any, suite: str | None, target: str | None) -> Any:
    """Every stored run (of the suite and target given), newest first, page by page."""
    offset = 0
    while True:
        page = db.list_runs(suite=suite, target=target, limit=200, offset=offset)
        yield from page.items
        offset += len(page.items)
        if not page.items or offset >= page.total:
            return


def _where(suite: str | None, target: str | None) -> str:
    parts = [f"suite {suite!r}" if suite else "", f"target {target!r}" if target else ""]
    shown = " and ".join(p for p in parts if p)
    return f" for {shown}" if shown else ""


def _last_gated(db: Any, suite: str | None, target: str | None) -> Window:
    for run in _runs(db, suite, target):
        gate = run.gate
        if gate is None or not gate.passed:
            continue
        targets = [target] if target else [t for t, ok in sorted(gate.targets.items()) if ok]
        decided = gate.decided_at.strftime("%Y-%m-%d %H:%M") if gate.decided_at else "?"
        w = Window(f"last gated run {run.run_id} (gate passed {decided} UTC)", "store")
        _attempts(db, run, targets, w)
        return w
    raise UserError(
        f"drift: no run with a passing gate decision in the store{_where(suite, target)}"
    )


def _range(db: Any, spec: str, suite: str | None, target: str | None) -> Window:
    body = spec[len(_PREFIX) :]
    if ".." not in body:
        raise UserError(f"{spec}: give store:SINCE..UNTIL (ISO 8601; either side may be empty)")
    since_text, until_text = body.split("..", 1)
    since, until = _when(since_text, spec), _when(until_text, spec)
    w = Window(spec, "store")
    runs = 0
    for run in _runs(db, suite, target):
        start = run.started_at or run.stored_at
        if start is None:
            continue
        start = start if start.tzinfo else start.replace(tzinfo=UTC)
        if (since is not None and start < since) or (until is not None and start >= until):
            continue
        runs += 1
        _attempts(db, run, [target] if target else list(run.targets), w)
    if not runs:
        raise UserError(f"drift: no stored run started in {spec}{_where(suite, target)}")
    w.source = f"{spec} ({runs} run{'s' if runs != 1 else ''})"
    return w


def _attempts(db: Any, run: Any, targets: list[str], w: Window) -> None:
    for t in targets:
        if t.startswith("prod:"):
            continue
        offset = 0
        while True:
            page = db.attempts(run.id, target=t, outcome="ok", offset=offset, limit=_PAGE)
            for a in page.items:
                count_decision(w, set(a.actual_tools), len(a.actual_tools), [])
                _arguments(w, a)
            offset += len(page.items)
            if not page.items or offset >= page.total:
                break


def _arguments(w: Window, attempt: Any) -> None:
    """The attempt's arguments into the window, read from its raw record in its run folder
    (the store keeps none): counted as unread when that record is not there."""
    from pydantic import ValidationError

    from toolproof.store._read import read_raw
    from toolproof.types import Record

    try:  # the line is untrusted: nested past the parser's depth is a record not found
        raw = read_raw(attempt)
        record = None if raw is None else Record.model_validate(raw)
        if record is not None:  # read whole before any of it is counted
            first, _, _ = record_decision(record)
            calls = [(c.name, c.arguments) for c in first]
            schemas = record_schemas(record.request, record.steps)
    except (ValidationError, ValueError, TypeError, RecursionError, OverflowError):
        record = None
    if record is None:
        w.arguments_unread += 1
        return
    count_arguments(w, calls, schemas)
