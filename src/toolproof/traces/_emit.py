"""A run's verdicts as OpenTelemetry ``gen_ai.evaluation.result`` events (semconv v1.38).

One log record per graded attempt, as OTLP/JSON (one ``LogsData`` object on
one line, the file exporter's format). For a case imported from production,
the record carries the production span's trace and span IDs (from the import's
``provenance.jsonl``), so a tracing backend shows toolproof's verdict beside
the span whose decision was replayed.

Attributes: ``gen_ai.evaluation.name`` (``toolproof.<check>``),
``gen_ai.evaluation.score.value`` (1.0 pass, 0.0 fail),
``gen_ai.evaluation.score.label`` (``pass`` / ``fail``),
``gen_ai.evaluation.explanation`` (the failure class), plus ``toolproof.*``
attributes naming the case, the target and the attempt.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from toolproof.trust import UnsafePath, resolve_inside
from toolproof.types import Verdict

__all__ = ["evaluation_logs", "provenance_ids"]


def provenance_ids(folder: Path) -> dict[str, tuple[str, str]]:
    """case ID → (trace ID, span ID), from an import's provenance.jsonl (none: empty)."""
    out: dict[str, tuple[str, str]] = {}
    if not (folder / "provenance.jsonl").is_file():
        return out
    try:  # the suite's folder may come from a pull request: no link may lead out of it
        path = resolve_inside(folder, "provenance.jsonl")
    except UnsafePath:
        return out
    with path.open("rb") as f:
        for line in f:
            try:
                p = json.loads(line)
                out[str(p["case_id"])] = (str(p["trace_id"]), str(p["span_id"]))
            except (ValueError, KeyError, TypeError, RecursionError):  # nested too deeply too
                continue
    return out


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": str(value)}}


def _hex(value: str, size: int) -> str | None:
    try:
        return value if len(bytes.fromhex(value)) == size else None
    except ValueError:
        return None


def evaluation_logs(
    verdicts: Iterable[Verdict], ids: dict[str, tuple[str, str]], *, now_ns: int | None = None
) -> dict[str, Any]:
    """OTLP/JSON ``LogsData`` with one ``gen_ai.evaluation.result`` event per verdict."""
    stamp = str(now_ns if now_ns is not None else time.time_ns())
    records = []
    for v in verdicts:
        explanation = v.failure.value if v.failure is not None else "passed"
        rec: dict[str, Any] = {
            "timeUnixNano": stamp,
            "observedTimeUnixNano": stamp,
            "eventName": "gen_ai.evaluation.result",
            "severityNumber": 9,
            "attributes": [
                _attr("gen_ai.evaluation.name", "toolproof.strict_pass"),
                _attr("gen_ai.evaluation.score.value", 1.0 if v.passed else 0.0),
                _attr("gen_ai.evaluation.score.label", "pass" if v.passed else "fail"),
                _attr("gen_ai.evaluation.explanation", explanation),
                _attr("toolproof.case.id", v.case_id),
                _attr("toolproof.target", v.target or ""),
                _attr("toolproof.attempt", v.attempt),
            ],
        }
        linked = ids.get(v.case_id)
        if linked is not None:
            trace, span = _hex(linked[0], 16), _hex(linked[1], 8)
            if trace and span:
                rec["traceId"], rec["spanId"] = trace, span
        records.append(rec)
    return {
        "resourceLogs": [
            {
                "resource": {"attributes": [_attr("service.name", "toolproof")]},
                "scopeLogs": [{"scope": {"name": "toolproof"}, "logRecords": records}],
            }
        ]
    }
