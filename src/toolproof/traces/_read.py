"""Read trace files as a stream of spans and log records, each with its file and line.

Accepted: OTLP/JSON Lines (``TracesData`` / ``LogsData`` per line, hex IDs),
protobuf ``MessageToJson`` output (base64 IDs, enum names; one object per
line or pretty-printed), the Python SDK's ``ConsoleSpanExporter`` output
(pretty-printed objects, ``0x`` IDs, flat attributes), and a Langfuse blob
export (JSON Lines of snake_case observations). ``.gz`` is read as it streams;
a folder is read file by file in name order.

Nothing reads a whole file: lines are read up to :data:`MAX_LINE_BYTES`; a
longer line is skipped (and counted) without being held. Every damaged line,
value or span becomes a :class:`Problem` with its file and line, never a
traceback.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson

from toolproof.errors import UserError
from toolproof.traces._values import (
    BadValue,
    any_value,
    attributes,
    clip,
    decode_id,
    kind_of,
    status_of,
    time_ns,
)
from toolproof.trust import TooDeep, check_depth, loads_json

__all__ = [
    "MAX_LINE_BYTES",
    "LogRow",
    "Problem",
    "Problems",
    "SpanRow",
    "iter_rows",
    "source_files",
]

#: The longest line read; a longer one is skipped (and counted), never held whole.
MAX_LINE_BYTES = 32 << 20
#: Nesting allowed in one JSON line (OTLP itself uses about 12 levels).
MAX_JSON_DEPTH = 400


@dataclass(frozen=True, slots=True)
class Problem:
    """Something skipped, with where it was: the report counts them by kind and names them."""

    kind: str
    file: str
    line: int
    message: str
    span: str | None = None

    def render(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file  # 0: the whole file
        span = f" (span {self.span})" if self.span else ""
        return f"{where}{span}: {self.message}"


class Problems(list[Problem]):
    """An import's problems: every one counted by kind, only the first :data:`KEEP` held.

    A file of millions of damaged lines makes millions of problems; the report shows
    200 and counts the rest, so holding them all only grew memory without bound
    (2,000,000 bad lines took 550 MB)."""

    KEEP = 10_000

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()

    def append(self, problem: Problem) -> None:
        self.counts[problem.kind] += 1
        if len(self) < self.KEEP:
            super().append(problem)


@dataclass(slots=True)
class SpanRow:
    trace: str
    span: str
    parent: str | None
    name: str
    kind: int
    start: int | None
    end: int | None
    status: int
    status_message: str | None
    attrs: dict[str, Any]
    events: list[dict[str, Any]]
    file: str
    line: int
    resource: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class LogRow:
    trace: str | None
    span: str | None
    name: str
    body: Any
    attrs: dict[str, Any]
    time: int | None
    file: str
    line: int


def source_files(sources: list[Path], problems: list[Problem] | None = None) -> list[Path]:
    """The files to read: each file named, and every file inside each folder (name order).

    A symbolic link inside a folder (to a file or a folder, inside it or not) is not
    followed: it is counted in ``problems``, so what a folder holds is never read
    from elsewhere unseen."""
    out: list[Path] = []
    for source in sources:
        if source.is_dir():
            for p in sorted(source.rglob("*")):
                if p.is_symlink():
                    if problems is not None:
                        problems.append(
                            Problem("symbolic link", str(p), 0, "a symbolic link: not followed")
                        )
                elif p.is_file():
                    out.append(p)
        elif source.is_file():
            out.append(source)
        else:
            raise UserError(f"{source}: no such file or folder")
    return out


def _open(path: Path) -> IO[bytes]:
    with path.open("rb") as probe:
        magic = probe.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return path.open("rb")


def _lines(path: Path, problems: list[Problem]) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes) for each line; overlong lines are skipped as they stream past."""
    shown = str(path)
    try:
        with _open(path) as f:
            number = 0
            while True:
                try:
                    line = f.readline(MAX_LINE_BYTES + 1)
                except (OSError, EOFError) as exc:  # a cut-off .gz
                    problems.append(Problem("unreadable", shown, number + 1, f"cannot read: {exc}"))
                    return
                if not line:
                    return
                number += 1
                if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                    while line and not line.endswith(b"\n"):
                        line = f.readline(1 << 20)
                    problems.append(
                        Problem(
                            "line too long",
                            shown,
                            number,
                            f"line longer than {MAX_LINE_BYTES >> 20} MiB skipped",
                        )
                    )
                    continue
                yield number, line
    except OSError as exc:
        raise UserError(f"{shown}: cannot read: {exc.strerror or exc}") from None


#: The bytes of a line seen as "may precede a digit of a number" (x), digits (0) and
#: anything else (space): a run of 19 or more digits right after an x may be a JSON
#: number, which orjson would read as a float past 64 bits. Every digit run inside a
#: number starts after one of ``: , [``, JSON whitespace, ``+ - . e E`` (or at the start
#: of the text); a run right after a '"' is the start of a string, never a number.
_NUMBER_VIEW = bytes(
    0x30 if 0x30 <= b <= 0x39 else (0x78 if b in b":,[ \t\n\r+-.eE" else 0x20) for b in range(256)
)
_NUMBER_START = b"x" + b"0" * 19


def has_long_number(blob: bytes) -> bool:
    """Whether ``blob`` may hold an integer of 19 or more digits (a translate and a find:
    far cheaper than a regular expression over a line of many nanosecond times)."""
    return blob[:19].isdigit() or _NUMBER_START in blob.translate(_NUMBER_VIEW)


def _parse(blob: bytes) -> Any:
    """One JSON value, as :func:`loads_json` reads it (same values, same errors).

    orjson reads it where it reads the same values as the standard library: OTLP's
    nanosecond times are 19-digit strings, which ``loads_json`` cannot tell from
    numbers and sends to the slower parser. Anything orjson refuses goes to
    ``loads_json`` for its values and its error message.
    """
    if not has_long_number(blob):
        try:
            value = orjson.loads(blob)
        except orjson.JSONDecodeError:
            return loads_json(blob, MAX_JSON_DEPTH)
        if blob.count(b"{") + blob.count(b"[") > MAX_JSON_DEPTH:
            check_depth(value, MAX_JSON_DEPTH)
        return value
    return loads_json(blob, MAX_JSON_DEPTH)


def _objects(path: Path, problems: list[Problem]) -> Iterator[tuple[int, Any]]:
    """Each JSON object of a file: one per line, or pretty-printed objects one after another."""
    shown = str(path)
    pending: list[bytes] = []
    start = 0
    size = 0
    for number, line in _lines(path, problems):
        stripped = line.strip()
        if not pending:
            if not stripped:
                continue
            if stripped in (b"[", b"]", b","):
                continue
            try:
                value = _parse(stripped.rstrip(b","))
            except TooDeep as exc:
                problems.append(Problem("too deep", shown, number, str(exc)))
                continue
            except (ValueError, UnicodeDecodeError) as exc:
                if stripped == b"{":
                    pending, start, size = [line], number, len(line)  # a pretty-printed object
                    continue
                problems.append(Problem("malformed JSON", shown, number, _why(exc)))
                continue
            yield number, value
            continue
        pending.append(line)
        size += len(line)
        if size > MAX_LINE_BYTES:
            problems.append(Problem("object too long", shown, start, "object over the size limit"))
            pending = []
            continue
        if line.rstrip(b"\r\n").rstrip(b",") == b"}":
            blob = b"".join(pending).strip().rstrip(b",")
            pending = []
            try:
                yield start, _parse(blob)
            except TooDeep as exc:
                problems.append(Problem("too deep", shown, start, str(exc)))
            except (ValueError, UnicodeDecodeError) as exc:
                problems.append(Problem("malformed JSON", shown, start, _why(exc)))
    if pending:
        problems.append(Problem("truncated", shown, start, "the file ends inside a JSON object"))


def _why(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON ({exc.msg}, column {exc.colno})"
    return f"not JSON ({str(exc)[:80]})"


#: File name endings read as OTLP/protobuf request bodies.
PROTOBUF_SUFFIXES = (".pb", ".binpb", ".pb.gz", ".binpb.gz")


def iter_rows(paths: list[Path], problems: list[Problem]) -> Iterator[SpanRow | LogRow]:
    """Every span and log record in ``paths``, in file order; damage goes to ``problems``."""
    for path in paths:
        if path.name.endswith(PROTOBUF_SUFFIXES):
            obj = _protobuf(path, problems)
            if obj is not None:
                yield from _rows(obj, str(path), 1, problems)
            continue
        for number, obj in _objects(path, problems):
            yield from _rows(obj, str(path), number, problems)


def _protobuf(path: Path, problems: list[Problem]) -> Any:
    """One OTLP/protobuf ExportTraceServiceRequest or ExportLogsServiceRequest body (gzip or
    not), up to the line limit."""
    from toolproof.traces._protobuf import ProtobufError, decode_request

    try:
        with _open(path) as f:
            data = f.read(MAX_LINE_BYTES + 1)
    except (OSError, EOFError) as exc:
        problems.append(Problem("unreadable", str(path), 1, f"cannot read: {exc}"))
        return None
    if len(data) > MAX_LINE_BYTES:
        problems.append(
            Problem("line too long", str(path), 1, f"protobuf body over {MAX_LINE_BYTES >> 20} MiB")
        )
        return None
    try:
        return decode_request(data)
    except ProtobufError as exc:
        problems.append(Problem("malformed protobuf", str(path), 1, str(exc)))
        return None


#: What a span of the wrong shape raises while it is read (its fields are untrusted).
SHAPE_ERRORS = (ValueError, TypeError, AttributeError, KeyError, IndexError, OverflowError)


def _rows(obj: Any, file: str, line: int, problems: list[Problem]) -> Iterator[SpanRow | LogRow]:
    """The spans and log records of one object; one of the wrong shape is skipped, located."""
    try:
        yield from _rows_of(obj, file, line, problems)
    except SHAPE_ERRORS as exc:
        problems.append(
            Problem("malformed span", file, line, f"not readable as OTLP ({type(exc).__name__})")
        )


def _rows_of(obj: Any, file: str, line: int, problems: list[Problem]) -> Iterator[SpanRow | LogRow]:
    if not isinstance(obj, dict):
        problems.append(Problem("not a trace", file, line, "a JSON value that is not an object"))
        return
    if "resourceSpans" in obj or "resource_spans" in obj:
        listed = _listed(file, line, problems)
        for rs in listed(obj.get("resourceSpans", obj.get("resource_spans")), "resourceSpans"):
            resource, _ = attributes(_dict(_dict(rs).get("resource")).get("attributes"))
            scopes = _dict(rs).get("scopeSpans", _dict(rs).get("scope_spans"))
            for ss in listed(scopes, "scopeSpans"):
                for raw in listed(_dict(ss).get("spans"), "spans"):
                    row = _span(raw, file, line, problems)
                    if row is not None:
                        row.resource = resource
                        yield row
    elif "resourceLogs" in obj:
        listed = _listed(file, line, problems)
        for rl in listed(obj.get("resourceLogs"), "resourceLogs"):
            for sl in listed(_dict(rl).get("scopeLogs"), "scopeLogs"):
                for raw in listed(_dict(sl).get("logRecords"), "logRecords"):
                    log = _log(raw, file, line, problems)
                    if log is not None:
                        yield log
    elif "context" in obj and isinstance(obj.get("context"), dict):
        row = _console_span(obj, file, line, problems)
        if row is not None:
            yield row
    elif "trace_id" in obj and ("type" in obj or "input" in obj):
        row = _langfuse_observation(obj, file, line, problems)
        if row is not None:
            yield row
    else:
        problems.append(
            Problem("not a trace", file, line, "no resourceSpans, resourceLogs or span here")
        )


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _listed(file: str, line: int, problems: list[Problem]) -> Any:
    """``_list``, counting a container of the wrong type (``"spans": {...}``): what it
    holds is skipped, never silently."""

    def listed(value: Any, what: str) -> list[Any]:
        if isinstance(value, list):
            return value
        if value is not None:
            problems.append(
                Problem("malformed span", file, line, f"{what} is not a list: its content skipped")
            )
        return []

    return listed


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _ids(
    raw: dict[str, Any], tkey: str, skey: str, file: str, line: int, problems: list[Problem]
) -> tuple[str, str] | None:
    trace = decode_id(raw.get(tkey), 16)
    span = decode_id(raw.get(skey), 8)
    if trace is None or span is None:
        which = "trace ID" if trace is None else "span ID"
        shown = clip(str(raw.get(skey) or "?"), 32)
        problems.append(
            Problem(
                "missing ID",
                file,
                line,
                f"span '{raw.get('name', '?')}' has no valid {which}",
                shown,
            )
        )
        return None
    return trace, span


def _events(raw: Any) -> list[dict[str, Any]]:
    out = []
    for event in _list(raw):
        ev = _dict(event)
        attrs, _ = attributes(ev.get("attributes"))
        out.append({"name": str(ev.get("name", "")), "attrs": attrs})
    return out


def _span(raw: Any, file: str, line: int, problems: list[Problem]) -> SpanRow | None:
    raw = _dict(raw)
    ids = _ids(raw, "traceId", "spanId", file, line, problems)
    if ids is None:
        return None
    attrs, dropped = attributes(raw.get("attributes"))
    for why in dropped:
        problems.append(Problem("attribute dropped", file, line, why, ids[1]))
    code, message = status_of(raw.get("status"))
    return SpanRow(
        trace=ids[0],
        span=ids[1],
        parent=decode_id(raw.get("parentSpanId"), 8),
        name=str(raw.get("name", "")),
        kind=kind_of(raw.get("kind", 0)),
        start=time_ns(raw.get("startTimeUnixNano")),
        end=time_ns(raw.get("endTimeUnixNano")),
        status=code,
        status_message=message,
        attrs=attrs,
        events=_events(raw.get("events")),
        file=file,
        line=line,
    )


def _console_span(
    raw: dict[str, Any], file: str, line: int, problems: list[Problem]
) -> SpanRow | None:
    ids = _ids(raw["context"], "trace_id", "span_id", file, line, problems)
    if ids is None:
        return None
    attrs, dropped = attributes(_dict(raw.get("attributes")))
    for why in dropped:
        problems.append(Problem("attribute dropped", file, line, why, ids[1]))
    code, message = status_of(raw.get("status"))
    events = [
        {
            "name": str(_dict(e).get("name", "")),
            "attrs": attributes(_dict(_dict(e).get("attributes")))[0],
        }
        for e in _list(raw.get("events"))
    ]
    return SpanRow(
        trace=ids[0],
        span=ids[1],
        parent=decode_id(raw.get("parent_id"), 8),
        name=str(raw.get("name", "")),
        kind=kind_of(raw.get("kind", 0)),
        start=time_ns(raw.get("start_time")),
        end=time_ns(raw.get("end_time")),
        status=code,
        status_message=message,
        attrs=attrs,
        events=events,
        file=file,
        line=line,
        resource=_dict(_dict(raw.get("resource")).get("attributes")),
    )


def _log(raw: Any, file: str, line: int, problems: list[Problem]) -> LogRow | None:
    raw = _dict(raw)
    attrs, _ = attributes(raw.get("attributes"))
    name = raw.get("eventName") or attrs.get("event.name") or ""
    try:
        body = any_value(raw.get("body"))
    except BadValue as exc:
        problems.append(Problem("attribute dropped", file, line, f"log body: {exc}"))
        body = None
    return LogRow(
        trace=decode_id(raw.get("traceId"), 16),
        span=decode_id(raw.get("spanId"), 8),
        name=str(name),
        body=body,
        attrs=attrs,
        time=time_ns(raw.get("timeUnixNano") or raw.get("observedTimeUnixNano")),
        file=file,
        line=line,
    )


def _langfuse_observation(
    raw: dict[str, Any], file: str, line: int, problems: list[Problem]
) -> SpanRow | None:
    """A Langfuse blob-export observation (snake_case), as a span with Langfuse's OTLP keys."""
    trace, span = raw.get("trace_id"), raw.get("id")
    if not isinstance(trace, str) or not trace or not isinstance(span, str) or not span:
        problems.append(Problem("missing ID", file, line, "observation without trace_id or id"))
        return None
    kind = str(raw.get("type") or "").lower()
    attrs: dict[str, Any] = {"langfuse.observation.type": kind}
    for key in ("input", "output", "level", "status_message", "metadata"):
        if raw.get(key) is not None:
            attrs[f"langfuse.observation.{key}"] = raw[key]
    model = raw.get("provided_model_name") or raw.get("model")
    if model:
        attrs["langfuse.observation.model.name"] = model
    for src, dst in (("session_id", "session.id"), ("user_id", "user.id")):
        if raw.get(src):
            attrs[dst] = raw[src]
    for key in ("tool_definitions", "tool_calls"):
        if raw.get(key) is not None:
            attrs[f"langfuse.{key}"] = raw[key]
    if raw.get("scores") is not None:
        attrs["langfuse.scores"] = raw["scores"]
    attrs, dropped = attributes(attrs)
    for why in dropped:
        problems.append(Problem("attribute dropped", file, line, why, clip(str(span), 40)))
    level = str(raw.get("level") or "")
    return SpanRow(
        trace=str(trace),
        span=str(span),
        parent=raw["parent_observation_id"]
        if isinstance(raw.get("parent_observation_id"), str) and raw["parent_observation_id"]
        else None,
        name=str(raw.get("name") or kind),
        kind=1,
        start=time_ns(raw.get("start_time")),
        end=time_ns(raw.get("end_time")),
        status=2 if level == "ERROR" else 0,
        status_message=raw.get("status_message")
        if isinstance(raw.get("status_message"), str)
        else None,
        attrs=attrs,
        events=[],
        file=file,
        line=line,
    )
