"""Reading records files: one JSON object per line, versioned, streamed."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from toolproof._locate import JsonLineLocator, first_error
from toolproof.errors import SuiteError
from toolproof.types import Record, ToolCall
from toolproof.types._record import RECORD_FORMAT

_KNOWN_FORMATS = (RECORD_FORMAT,)


class TornLineWarning(UserWarning):
    """The last line of a records file was cut short (its writer was killed); it was skipped."""


def parse_arguments(raw: str) -> tuple[Any, str | None]:
    """Parse argument text. Returns (value, None) or (None, error). Never raises."""
    try:
        return json.loads(raw), None
    except json.JSONDecodeError as exc:
        return None, f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    except RecursionError:
        return None, "nested too deeply to parse"


def tool_call_from_raw(name: str, raw: str, call_id: str | None = None) -> ToolCall:
    """A ToolCall from the model's raw argument text, parsed but never repaired."""
    value, error = parse_arguments(raw)
    return ToolCall(id=call_id, name=name, raw_arguments=raw, arguments=value, parse_error=error)


def _normalise_calls(data: dict[str, Any]) -> None:
    """Parse raw argument text where the record gives only the text."""
    response = data.get("response")
    if not isinstance(response, dict):
        return
    calls = response.get("tool_calls")
    if not isinstance(calls, list):
        return
    for call in calls:
        if (
            isinstance(call, dict)
            and isinstance(call.get("raw_arguments"), str)
            and "arguments" not in call
        ):
            value, error = parse_arguments(call["raw_arguments"])
            call["arguments"] = value
            if error is not None and "parse_error" not in call:
                call["parse_error"] = error


def iter_records(path: str | Path) -> Iterator[tuple[int, Record]]:
    """Yield (line number, record). A torn last line (a killed writer) is skipped with a warning."""
    file = str(path)
    try:
        handle = open(path, encoding="utf-8", errors="surrogateescape")  # noqa: SIM115
    except FileNotFoundError:
        raise SuiteError(file, "file not found") from None
    except OSError as exc:
        raise SuiteError(file, exc.strerror or "cannot read file") from None
    with handle:
        pending: tuple[int, str] | None = None
        for number, line in enumerate(handle, start=1):
            if pending is not None:
                yield pending[0], _parse_line(file, *pending)
                pending = None
            if not line.strip():
                continue
            if not line.endswith("\n"):
                pending = (number, line)  # maybe torn: decide at the end
                continue
            yield number, _parse_line(file, number, line)
        if pending is not None:
            try:
                yield pending[0], _parse_line(file, *pending)
            except SuiteError as exc:
                if "not valid JSON" not in exc.detail:
                    raise
                warnings.warn(
                    f"{file}:{pending[0]}: ignoring an incomplete last line "
                    "(the writer was interrupted)",
                    TornLineWarning,
                    stacklevel=2,
                )


class _NotJson(ValueError):
    """A NaN or Infinity literal: Python reads it, JSON does not have it."""


def _refuse_constant(name: str) -> Any:
    raise _NotJson(name)


def _parse_line(file: str, number: int, line: str) -> Record:
    try:
        data = json.loads(line, parse_constant=_refuse_constant)
    except _NotJson as exc:
        raise SuiteError(
            file,
            f"{exc} is not a JSON number (toolproof writes null for a number that is not finite)",
            line=number,
            column=line.find(str(exc)) + 1 or None,
        ) from None
    except json.JSONDecodeError as exc:
        raise SuiteError(
            file, f"not valid JSON: {exc.msg}", line=number, column=exc.colno
        ) from None
    except RecursionError:
        raise SuiteError(file, "nested too deeply to read", line=number, column=1) from None
    if not isinstance(data, dict):
        raise SuiteError(
            file, "expected a JSON object (one record per line)", line=number, column=1
        )
    fmt = data.get("format", _KNOWN_FORMATS[0])
    if fmt not in _KNOWN_FORMATS:
        raise SuiteError(
            file,
            f"unknown records format {fmt!r} (this toolproof reads {', '.join(_KNOWN_FORMATS)})",
            line=number,
            column=1,
            path=("format",),
        )
    _normalise_calls(data)
    try:
        return Record.model_validate(data)
    except ValidationError as exc:
        raise first_error(exc, data, Record, JsonLineLocator(file, number, line)) from None


def read_records(path: str | Path) -> list[Record]:
    return [r for _, r in iter_records(path)]
