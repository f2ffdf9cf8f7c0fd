"""A temporary on-disk index of the spans read, so an import holds one trace at a time.

The first pass streams every file into SQLite (spans by trace and span ID,
log records by the span they belong to, trace-level IDs); the second pass
reads it back one trace at a time. Memory stays flat however large the files.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from toolproof.traces._read import SHAPE_ERRORS, LogRow, Problem, SpanRow
from toolproof.traces._shapes import span_role

__all__ = ["Index", "IndexedSpan", "TraceInfo"]

#: The most spans one conversation may bring to the import at once.
MAX_GROUP = 10_000

_SCHEMA = """
CREATE TABLE spans (trace TEXT, span TEXT, parent TEXT, name TEXT, role TEXT, kind INT,
  start INT, end_ INT, status INT, status_message TEXT, attrs BLOB, events BLOB,
  file TEXT, line INT, PRIMARY KEY (trace, span));
CREATE TABLE logs (trace TEXT, span TEXT, name TEXT, body BLOB, time INT, seq INTEGER PRIMARY KEY);
CREATE INDEX logs_span ON logs (trace, span);
CREATE TABLE traces (trace TEXT PRIMARY KEY, session TEXT, user TEXT, conversation TEXT,
  feedback TEXT);
"""

_TRACE_KEYS = {
    "session": ("session.id", "langfuse.session.id", "gen_ai.conversation.id"),
    "user": ("user.id", "enduser.id", "langfuse.user.id"),
    "conversation": ("gen_ai.conversation.id",),
    "feedback": ("feedback.score", "user.feedback", "langfuse.scores", "feedback"),
}


@dataclass(frozen=True, slots=True)
class IndexedSpan:
    trace: str
    span: str
    parent: str | None
    name: str
    role: str
    start: int | None
    end: int | None
    status: int
    status_message: str | None
    attrs: dict[str, Any]
    file: str
    line: int


@dataclass(frozen=True, slots=True)
class TraceInfo:
    session: str | None
    user: str | None
    conversation: str | None
    feedback: Any


class Index:
    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(path)
        self.db.executescript(_SCHEMA)
        self.db.execute("PRAGMA journal_mode=OFF")
        self.db.execute("PRAGMA synchronous=OFF")
        self.spans = 0
        self.logs = 0
        self._pending = 0

    def close(self) -> None:
        self.db.close()

    def add(self, row: SpanRow | LogRow, problems: list[Problem]) -> None:
        try:
            if isinstance(row, LogRow):
                self._add_log(row)
            else:
                self._add_span(row, problems)
        except (*SHAPE_ERRORS, sqlite3.Error) as exc:  # fields of the wrong type
            span = row.span if isinstance(row.span, str) else None
            why = (
                "a number too large for its field"
                if isinstance(exc, OverflowError)
                else f"a field of the wrong type ({type(exc).__name__})"
            )
            problems.append(Problem("malformed span", row.file, row.line, f"skipped: {why}", span))
            return
        self._pending += 1
        if self._pending >= 5000:
            self.db.commit()
            self._pending = 0

    def _add_log(self, row: LogRow) -> None:
        if row.trace is None or row.span is None:
            return
        # util-genai's event_only mode puts the messages in the event's attributes
        body = row.attrs if row.name == "gen_ai.client.inference.operation.details" else row.body
        self.db.execute(
            "INSERT INTO logs (trace, span, name, body, time) VALUES (?,?,?,?,?)",
            (row.trace, row.span, row.name, _dumps(body), row.time),
        )
        self.logs += 1

    def _add_span(self, row: SpanRow, problems: list[Problem]) -> None:
        parent = row.parent
        if parent == row.span:
            problems.append(
                Problem(
                    "self-parent", row.file, row.line, "span names itself as its parent", row.span
                )
            )
            parent = None
        role = span_role(row.attrs)
        keep = row.attrs if role != "other" else {}
        attrs = _dumps(keep)
        cur = self.db.execute(
            "INSERT OR IGNORE INTO spans VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (row.trace, row.span, parent, row.name, role, row.kind, row.start, row.end,
             row.status, row.status_message, attrs, b"[]", row.file, row.line),
        )  # fmt: skip
        if cur.rowcount == 0:
            problems.append(
                Problem(
                    "duplicate span",
                    row.file,
                    row.line,
                    "a span with this ID was read before; this copy skipped",
                    row.span,
                )
            )
            return
        self.spans += 1
        info = {**row.resource, **row.attrs}
        values = {col: _first(info, keys) for col, keys in _TRACE_KEYS.items()}
        if any(v is not None for v in values.values()):
            # the first value read of each wins (one statement: insert, or fill the gaps)
            self.db.execute(
                "INSERT INTO traces (trace, session, user, conversation, feedback) "
                "VALUES (?,?,?,?,?) ON CONFLICT (trace) DO UPDATE SET "
                "session=COALESCE(session, excluded.session), user=COALESCE(user, excluded.user), "
                "conversation=COALESCE(conversation, excluded.conversation), "
                "feedback=COALESCE(feedback, excluded.feedback)",
                (
                    row.trace,
                    _str(values["session"]),
                    _str(values["user"]),
                    _str(values["conversation"]),
                    None if values["feedback"] is None else _feedback_json(values["feedback"]),
                ),
            )

    def finish(self) -> None:
        self.db.commit()

    def parent_start(self, trace: str, span: str | None) -> int | None:
        if span is None:
            return None
        row = self.db.execute(
            "SELECT start FROM spans WHERE trace=? AND span=?", (trace, span)
        ).fetchone()
        return None if row is None else row[0]

    def has_span(self, trace: str, span: str) -> bool:
        return (
            self.db.execute(
                "SELECT 1 FROM spans WHERE trace=? AND span=?", (trace, span)
            ).fetchone()
            is not None
        )

    def traces(self) -> Iterator[tuple[str, list[IndexedSpan]]]:
        """Each conversation's chat and tool spans, in start order, one at a time.

        A conversation is the traces that share a ``gen_ai.conversation.id`` (without
        an agent span, every model call is a trace of its own), else one trace. A
        group stops at :data:`MAX_GROUP` spans, so no input can make one hold more.
        """
        cur = self.db.execute(
            "SELECT s.trace, s.span, s.parent, s.name, s.role, s.start, s.end_, s.status, "
            "s.status_message, s.attrs, s.file, s.line, COALESCE(t.conversation, s.trace) AS g "
            "FROM spans s LEFT JOIN traces t ON t.trace = s.trace WHERE s.role != 'other' "
            "ORDER BY g, s.start, s.trace, s.span"
        )
        current: str | None = None
        group: list[IndexedSpan] = []
        for r in cur:
            span = IndexedSpan(
                r[0],
                r[1],
                r[2],
                r[3],
                r[4],
                r[5],
                r[6],
                r[7],
                r[8],
                _loads(r[9]),
                r[10],
                r[11],
            )
            key = str(r[12])
            if group and (key != current or len(group) >= MAX_GROUP):
                yield group[0].trace, group
                group = []
            current = key
            group.append(span)
        if group:
            yield group[0].trace, group

    def logs_of(self, trace: str, span: str) -> list[tuple[str, Any]]:
        rows = self.db.execute(
            "SELECT name, body FROM logs WHERE trace=? AND span=? ORDER BY time, seq", (trace, span)
        ).fetchall()
        return [(name, _loads(body)) for name, body in rows]

    def info(self, trace: str) -> TraceInfo:
        row = self.db.execute(
            "SELECT session, user, conversation, feedback FROM traces WHERE trace=?", (trace,)
        ).fetchone()
        if row is None:
            return TraceInfo(None, None, None, None)
        # the standard library's reader: an integer beyond 64 bits stays that integer
        return TraceInfo(row[0], row[1], row[2], None if row[3] is None else json.loads(row[3]))

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for role, n in self.db.execute("SELECT role, COUNT(*) FROM spans GROUP BY role"):
            out[role] = n
        return out

    def orphans(self) -> int:
        """Spans whose parent is not in the input (a partial export, or a remote parent)."""
        row = self.db.execute(
            "SELECT COUNT(*) FROM spans s WHERE s.parent IS NOT NULL AND NOT EXISTS "
            "(SELECT 1 FROM spans p WHERE p.trace=s.trace AND p.span=s.parent)"
        ).fetchone()
        return int(row[0])

    def skewed(self) -> int:
        """Spans that start before their parent does (clock skew between hosts)."""
        row = self.db.execute(
            "SELECT COUNT(*) FROM spans s JOIN spans p ON p.trace=s.trace AND p.span=s.parent "
            "WHERE s.start IS NOT NULL AND p.start IS NOT NULL AND s.start < p.start"
        ).fetchone()
        return int(row[0])


def _first(info: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        if info.get(key) is not None:
            return info[key]
    return None


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


def _feedback_json(value: Any) -> str:
    """A trace's feedback as JSON text; an integer beyond 64 bits (which orjson refuses)
    is written by the standard library, so the span is not lost over its feedback."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return json.dumps(value)


def _dumps(value: Any) -> bytes | str:
    """JSON for the index: orjson's bytes, or, for a value orjson refuses (an integer
    beyond 64 bits anywhere in it), the standard library's text. A flat or structured
    attribute holding such a number is kept whole, never dropped with its span's content."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value, ensure_ascii=False)


def _loads(blob: bytes | str) -> Any:
    """What :func:`_dumps` wrote: text is read by the standard library (exact integers)."""
    return json.loads(blob) if isinstance(blob, str) else orjson.loads(blob)
