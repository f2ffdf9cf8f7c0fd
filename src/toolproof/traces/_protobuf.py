"""OTLP/protobuf bodies (``ExportTraceServiceRequest`` and ``ExportLogsServiceRequest``, as an
OTLP/HTTP exporter posts them) decoded by hand into the OTLP/JSON shape the reader takes.

Only the fields toolproof reads are decoded; the rest are skipped by their wire
type. IDs come out in hex, enums and 64-bit integers as OTLP/JSON writes them.
A malformed body raises :class:`ProtobufError` (the reader reports it with the
file). Nesting is bounded, so a hostile body cannot exhaust the stack.
"""

from __future__ import annotations

import struct
from typing import Any

__all__ = ["ProtobufError", "decode_logs_request", "decode_request", "decode_traces_request"]

_MAX_DEPTH = 64


class ProtobufError(ValueError):
    """The bytes are not a well-formed protobuf message of the expected kind."""


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) for each field of one message."""
    out: list[tuple[int, int, Any]] = []
    pos, end = 0, len(data)
    while pos < end:
        tag, pos = _varint(data, pos)
        number, wire = tag >> 3, tag & 7
        value: int | bytes
        if number == 0:
            raise ProtobufError("field number 0")
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            if pos + 8 > end:
                raise ProtobufError("cut-off 64-bit field")
            value, pos = data[pos : pos + 8], pos + 8
        elif wire == 2:
            size, pos = _varint(data, pos)
            if pos + size > end:
                raise ProtobufError("cut-off length-delimited field")
            value, pos = data[pos : pos + size], pos + size
        elif wire == 5:
            if pos + 4 > end:
                raise ProtobufError("cut-off 32-bit field")
            value, pos = data[pos : pos + 4], pos + 4
        else:
            raise ProtobufError(f"unsupported wire type {wire}")
        out.append((number, wire, value))
    return out


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ProtobufError("cut-off varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ProtobufError("varint longer than 64 bits")


def _text(value: Any) -> str:
    if not isinstance(value, bytes):
        raise ProtobufError("a string field with the wrong wire type")
    return value.decode("utf-8", "replace")


def _any(data: bytes, depth: int) -> dict[str, Any]:
    if depth > _MAX_DEPTH:
        raise ProtobufError(f"values nested deeper than {_MAX_DEPTH} levels")
    for number, wire, value in _fields(data):
        if number == 1 and wire == 2:
            return {"stringValue": _text(value)}
        if number == 2 and wire == 0:
            return {"boolValue": bool(value)}
        if number == 3 and wire == 0:
            signed = value - (1 << 64) if value >= 1 << 63 else value
            return {"intValue": str(signed)}
        if number == 4 and wire == 1:
            return {"doubleValue": struct.unpack("<d", value)[0]}
        if number == 5 and wire == 2:
            return {
                "arrayValue": {
                    "values": [
                        _any(v, depth + 1) for n, w, v in _fields(value) if n == 1 and w == 2
                    ]
                }
            }
        if number == 6 and wire == 2:
            return {
                "kvlistValue": {
                    "values": [_kv(v, depth + 1) for n, w, v in _fields(value) if n == 1 and w == 2]
                }
            }
        if number == 7 and wire == 2:
            import base64

            return {"bytesValue": base64.b64encode(value).decode()}
    return {}


def _kv(data: bytes, depth: int = 0) -> dict[str, Any]:
    key, value = "", {}
    for number, wire, raw in _fields(data):
        if number == 1 and wire == 2:
            key = _text(raw)
        elif number == 2 and wire == 2:
            value = _any(raw, depth + 1)
    return {"key": key, "value": value}


def _u64(raw: bytes) -> str:
    return str(struct.unpack("<Q", raw)[0])


def _span(data: bytes) -> dict[str, Any]:
    span: dict[str, Any] = {"attributes": [], "events": []}
    for number, wire, v in _fields(data):
        if number == 1 and wire == 2:
            span["traceId"] = v.hex()
        elif number == 2 and wire == 2:
            span["spanId"] = v.hex()
        elif number == 4 and wire == 2:
            span["parentSpanId"] = v.hex()
        elif number == 5 and wire == 2:
            span["name"] = _text(v)
        elif number == 6 and wire == 0:
            span["kind"] = v
        elif number == 7 and wire == 1:
            span["startTimeUnixNano"] = _u64(v)
        elif number == 8 and wire == 1:
            span["endTimeUnixNano"] = _u64(v)
        elif number == 9 and wire == 2:
            span["attributes"].append(_kv(v))
        elif number == 11 and wire == 2:
            event: dict[str, Any] = {"attributes": []}
            for n, w, ev in _fields(v):
                if n == 2 and w == 2:
                    event["name"] = _text(ev)
                elif n == 3 and w == 2:
                    event["attributes"].append(_kv(ev))
            span["events"].append(event)
        elif number == 15 and wire == 2:
            status: dict[str, Any] = {}
            for n, w, sv in _fields(v):
                if n == 2 and w == 2:
                    status["message"] = _text(sv)
                elif n == 3 and w == 0:
                    status["code"] = sv
            span["status"] = status
    return span


def decode_traces_request(data: bytes) -> dict[str, Any]:
    """An ``ExportTraceServiceRequest`` body as an OTLP/JSON ``TracesData`` object."""
    resource_spans = []
    for number, wire, rs in _fields(data):
        if number != 1 or wire != 2:
            continue
        entry: dict[str, Any] = {"resource": {"attributes": []}, "scopeSpans": []}
        for n, w, v in _fields(rs):
            if n == 1 and w == 2:
                entry["resource"]["attributes"] = [
                    _kv(a) for k, ww, a in _fields(v) if k == 1 and ww == 2
                ]
            elif n == 2 and w == 2:
                scope: dict[str, Any] = {}
                spans = []
                for sn, sw, sv in _fields(v):
                    if sn == 1 and sw == 2:
                        scope = {
                            "name": next(
                                (_text(x) for k, ww, x in _fields(sv) if k == 1 and ww == 2), ""
                            )
                        }
                    elif sn == 2 and sw == 2:
                        spans.append(_span(sv))
                entry["scopeSpans"].append({"scope": scope, "spans": spans})
        resource_spans.append(entry)
    return {"resourceSpans": resource_spans}


def _log_record(data: bytes) -> dict[str, Any]:
    record: dict[str, Any] = {"attributes": []}
    for number, wire, v in _fields(data):
        if number == 1 and wire == 1:
            record["timeUnixNano"] = _u64(v)
        elif number == 11 and wire == 1:
            record["observedTimeUnixNano"] = _u64(v)
        elif number == 2 and wire == 0:
            record["severityNumber"] = v
        elif number == 3 and wire == 2:
            record["severityText"] = _text(v)
        elif number == 5 and wire == 2:
            record["body"] = _any(v, 0)
        elif number == 6 and wire == 2:
            record["attributes"].append(_kv(v))
        elif number == 9 and wire == 2:
            record["traceId"] = v.hex()
        elif number == 10 and wire == 2:
            record["spanId"] = v.hex()
        elif number == 12 and wire == 2:
            record["eventName"] = _text(v)
    return record


def decode_logs_request(data: bytes) -> dict[str, Any]:
    """An ``ExportLogsServiceRequest`` body as an OTLP/JSON ``LogsData`` object."""
    resource_logs = []
    for number, wire, rl in _fields(data):
        if number != 1 or wire != 2:
            continue
        entry: dict[str, Any] = {"resource": {"attributes": []}, "scopeLogs": []}
        for n, w, v in _fields(rl):
            if n == 1 and w == 2:
                entry["resource"]["attributes"] = [
                    _kv(a) for k, ww, a in _fields(v) if k == 1 and ww == 2
                ]
            elif n == 2 and w == 2:
                records = [_log_record(x) for k, ww, x in _fields(v) if k == 2 and ww == 2]
                entry["scopeLogs"].append({"logRecords": records})
        resource_logs.append(entry)
    return {"resourceLogs": resource_logs}


def _holds_logs(data: bytes) -> bool | None:
    """Whether a request body holds log records (True), spans (False), or neither (None).

    The first record of the first scope tells: a span starts with its IDs (fields 1
    and 2, bytes); a log record with its times (fixed64) and severity (varint), or
    carries IDs as fields 9 and 10 and its event name as field 12.
    """
    for number, wire, resource in _fields(data):
        if number != 1 or wire != 2:
            continue
        for n, w, scope in _fields(resource):
            if n != 2 or w != 2:
                continue
            for k, ww, item in _fields(scope):
                if k != 2 or ww != 2:
                    continue
                shape = {(f, t) for f, t, _ in _fields(item)}
                if shape & {(1, 1), (11, 1), (2, 0), (9, 2), (10, 2), (12, 2), (5, 2)} and not (
                    (1, 2) in shape or (2, 2) in shape
                ):
                    return True
                if (1, 2) in shape or (2, 2) in shape:
                    return False
    return None


def decode_request(data: bytes) -> dict[str, Any]:
    """A trace or logs request body (told apart by its first record) as OTLP/JSON."""
    if _holds_logs(data):
        return decode_logs_request(data)
    return decode_traces_request(data)
