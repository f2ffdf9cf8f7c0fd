"""Reading records files: one JSON object per line, versioned, streamed."""

from __future__ import annotations

import io
import json
import re
import warnings
from collections.abc import Container, Iterator
from pathlib import Path
from typing import Any

import msgspec
import orjson
from pydantic import ValidationError

from toolproof._shared.json_numbers import (
    DuplicateKey,
    duplicate_key_error,
    no_duplicate_keys,
    too_long_integer,
)
from toolproof._shared.locate import JsonLineLocator, first_error
from toolproof._shared.safe_io import MAX_LINE_CHARS, UnsafePath, open_read
from toolproof.errors import SuiteError
from toolproof.records._steps import BadSteps, expand_requests
from toolproof.types import Record, Response, ToolCall
from toolproof.types._record import RECORD_FORMAT, RECORD_FORMATS

_KNOWN_FORMATS = RECORD_FORMATS
#: Fields a format does not have: a line of that format that carries one is refused.
_NOT_IN = {"toolproof.record/1": ("state_changes", "state_base")}
_FORMAT_NUMBER = re.compile(r"toolproof\.record/([0-9]{1,6})")


def _newer_format(fmt: Any) -> int | None:
    """The version of a ``toolproof.record/N`` newer than this toolproof writes, or None."""
    if not isinstance(fmt, str):
        return None
    match = _FORMAT_NUMBER.fullmatch(fmt)
    latest = _FORMAT_NUMBER.fullmatch(RECORD_FORMAT)
    assert latest is not None
    if match is None or int(match.group(1)) <= int(latest.group(1)):
        return None
    return int(match.group(1))


#: Every ASCII digit to "0", every other byte to "a": a run of 19 digits becomes 19 zeros.
_DIGITS = bytes(0x30 if 0x30 <= i <= 0x39 else 0x61 for i in range(256))
_LONG_RUN = b"0" * 19


def _long_digits(text: str) -> bool:
    """Does the text hold a run of 19 or more ASCII digits? (Much faster than a regex.)"""
    return _LONG_RUN in text.encode("utf-8", "surrogatepass").translate(_DIGITS)


def loads(text: str, *, strict: bool = False) -> Any:
    """Parse JSON text as :func:`json.loads` does, faster.

    orjson parses first; whatever it refuses (NaN, lone surrogates, deep
    nesting, invalid JSON) goes to :func:`json.loads`, so the values and the
    error messages are the standard library's. Text with a run of 19 or more
    digits goes there at once: orjson reads integers beyond 64 bits as floats.
    With ``strict``, NaN and ±Infinity (not JSON) raise ``_NotJson``.
    """
    constant = _refuse_constant if strict else None
    try:
        if _long_digits(text):
            return json.loads(text, parse_constant=constant)
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            return json.loads(text, parse_constant=constant)
    except ValueError as exc:  # an integer beyond the digit limit: located, as a syntax error
        located = too_long_integer(text, exc)
        if located is None:
            raise
        raise located from None


class TornLineWarning(UserWarning):
    """The last line of a records file was cut short (its writer was killed); it was skipped."""


def parse_arguments(raw: str) -> tuple[Any, str | None]:
    """Parse argument text. Returns (value, None) or (None, error). Never raises.

    What toolproof cannot read is the model's invalid output, never an error of
    toolproof's: an integer of more than 4,300 digits, or an object that names
    a key twice (which value would the tool get?), is a parse error.
    """
    try:
        value = loads(raw)
        if _may_repeat_a_key(value, raw):
            _unique_keys(raw)
        return value, None
    except json.JSONDecodeError as exc:
        return None, f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    except RecursionError:
        return None, "nested too deeply to parse"
    except ValueError as exc:  # not JSON's own error: said in one line
        return None, str(exc).split(";")[0][:200]


def _may_repeat_a_key(value: Any, raw: str, ignore: int = 0) -> bool:
    """Could ``raw`` (parsed as ``value``) name a key twice in one object?

    Outside strings, JSON text holds one colon per key; a parser that keeps the
    last of two keys holds one key fewer. So the text's colons, less those
    inside its strings, against the keys of the value: more colons, a key was
    repeated. (Text with ``\\u`` escapes may hide a colon: it is checked in full.)
    ``ignore``: colons of ``raw`` that are not in ``value`` (payloads left out of it).
    """
    if not isinstance(value, dict | list):
        return False
    colons = raw.count(":") - ignore
    if colons < 2:
        return False
    if "\\u" in raw:
        return True
    return colons > _keys_and_string_colons(value)


def _keys_and_string_colons(value: Any) -> int:
    """The keys of every object in ``value``, plus the colons inside its strings."""
    count = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            count += len(item)
            for key, child in item.items():
                count += key.count(":")
                if isinstance(child, str):
                    count += child.count(":")
                elif isinstance(child, dict | list):
                    stack.append(child)
        elif isinstance(item, list):
            for child in item:
                if isinstance(child, str):
                    count += child.count(":")
                elif isinstance(child, dict | list):
                    stack.append(child)
    return count


def _unique_keys(raw: str) -> None:
    """Raise the located error of a key given twice in one object of ``raw``."""
    try:
        json.loads(raw, object_pairs_hook=no_duplicate_keys)
    except DuplicateKey as exc:
        raise duplicate_key_error(raw, exc) from None


def tool_call_from_raw(name: str, raw: str, call_id: str | None = None) -> ToolCall:
    """A ToolCall from the model's raw argument text, parsed but never repaired."""
    value, error = parse_arguments(raw)
    return ToolCall(id=call_id, name=name, raw_arguments=raw, arguments=value, parse_error=error)


def _normalise_calls(data: dict[str, Any], *, plain: bool = False) -> None:
    """Parse raw argument text where the record gives only the text.

    ``plain``: the record's line holds no run of 19 digits and no ``\\u`` escape,
    so no argument text does either: orjson reads it as :func:`loads` would.
    """
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
            raw = call["raw_arguments"]
            if plain:
                try:
                    value = orjson.loads(raw)
                    if not _may_repeat_a_key(value, raw):
                        call["arguments"] = value
                        continue
                except orjson.JSONDecodeError:
                    pass  # the standard library's error message (or NaN, which it reads)
            value, error = parse_arguments(raw)
            call["arguments"] = value
            if error is not None and "parse_error" not in call:
                call["parse_error"] = error


def iter_records(
    path: str | Path,
    *,
    only: Container[int] | None = None,
    check_skipped: bool = False,
    raw: bool = True,
) -> Iterator[tuple[int, Record]]:
    """Yield (line number, record). A torn last line (a killed writer) is skipped with a warning.

    With ``only``, lines whose number it does not hold are skipped unparsed
    (``check_skipped``: the lines a later record of the same attempt replaces,
    parsed as JSON only, so that a broken line is refused even when a later
    record replaces it, and refused when it holds a model's answer: only a
    record without one may be replaced). With ``raw=False`` the records come
    without their raw payloads (``request`` and the response's ``raw`` are
    None): those are checked as JSON but not read into objects, which is most
    of the cost of reading a line that holds a whole provider request.
    """
    file = str(path)
    parse = _parse_line if raw else _parse_lean
    for number, line, last in _lines(path):
        if only is not None and number not in only:
            if check_skipped and not last:
                _check_replaced(file, number, _check_json(file, number, line))
            continue
        if not last:
            yield number, parse(file, number, line)
            continue
        try:
            yield number, parse(file, number, line)
        except SuiteError as exc:
            if "not valid JSON" not in exc.detail:
                raise
            _warn_torn(file, number)


#: The identity at the start of a line, as toolproof (compact) and ``json.dumps`` write
#: records: format (any this toolproof reads), case_id, target and attempt first, plain
#: strings (no escapes), a small attempt.
_IDENTITY = re.compile(
    r'\{[ \t]*"format"[ \t]*:[ \t]*"(?:'
    + "|".join(re.escape(f) for f in RECORD_FORMATS)
    + r')"[ \t]*,'
    r'[ \t]*"case_id"[ \t]*:[ \t]*"([^"\\\x00-\x1f]*)"[ \t]*,'
    r'[ \t]*"target"[ \t]*:[ \t]*(?:"([^"\\\x00-\x1f]*)"|null)[ \t]*,'
    r'[ \t]*"attempt"[ \t]*:[ \t]*(0|[1-9][0-9]{0,8})[ \t]*[,}]'
)


def iter_keys(path: str | Path) -> Iterator[tuple[int, str, str | None, int]]:
    """Yield (line number, case_id, target, attempt) of each record, cheaply.

    Only the identity of each record is read: enough to know which record of
    an attempt is the latest before any is graded. A line that starts the way
    toolproof writes records gives its identity without being parsed; the
    caller parses it later (``iter_records``, with ``check_skipped`` for the
    lines it skips) and should check that the record says the same. A line
    whose identity cannot be read is parsed in full, so that its error is the
    reader's usual located one.
    """
    file = str(path)
    match = _IDENTITY.match
    for number, line, last in _lines(path):
        found = match(line) if not last else None
        if found is not None:
            yield number, found[1], found[2], int(found[3])
            continue
        try:
            data = loads(line)
            key = (data["case_id"], data.get("target"), data.get("attempt", 0))
        except (ValueError, TypeError, KeyError, RecursionError):
            key = None
        if key is None or not (
            isinstance(key[0], str) and isinstance(key[1], str | None) and type(key[2]) is int
        ):
            try:
                record = _parse_line(file, number, line)
            except SuiteError as exc:
                if last and "not valid JSON" in exc.detail:
                    _warn_torn(file, number)
                    continue
                raise
            key = (record.case_id, record.target, record.attempt)
        yield number, key[0], key[1], key[2]


def _lines(path: str | Path) -> Iterator[tuple[int, str, bool]]:
    """(line number, text, maybe torn) of every non-blank line."""
    file = str(path)
    try:  # a regular file in its own folder (not a link out, a FIFO or /dev/zero), capped
        raw = open_read(path)
    except FileNotFoundError:
        raise SuiteError(file, "file not found") from None
    except UnsafePath as exc:
        raise SuiteError(file, str(exc)) from None
    except OSError as exc:
        raise SuiteError(file, exc.strerror or "cannot read file") from None
    with io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape") as handle:
        number = 0
        while line := handle.readline(MAX_LINE_CHARS + 1):
            number += 1
            if len(line) > MAX_LINE_CHARS:
                raise SuiteError(
                    file, f"a line longer than {MAX_LINE_CHARS:,} characters", line=number
                )
            if line.isspace():  # blank (what strip() would empty), without copying the line
                continue
            # only the last line can lack its newline: its writer may have been killed
            yield number, line, not line.endswith("\n")


def _warn_torn(file: str, number: int) -> None:
    warnings.warn(
        f"{file}:{number}: ignoring an incomplete last line (the writer was interrupted)",
        TornLineWarning,
        stacklevel=3,
    )


class _NotJson(ValueError):
    """A NaN or Infinity literal: Python reads it, JSON does not have it."""


def _refuse_constant(name: str) -> Any:
    raise _NotJson(name)


def _check_json(file: str, number: int, line: str) -> Any:
    """Refuse a line that is not JSON, with its location (as :func:`_parse_line` would);
    its value."""
    try:
        return orjson.loads(line)  # stricter than json.loads: refuses NaN too
    except orjson.JSONDecodeError:
        return _json_data(file, number, line)  # raises the reader's usual error, or passes


def _check_replaced(file: str, number: int, data: Any) -> None:
    """Refuse a record a later one replaces when it holds the model's answer."""
    if not isinstance(data, dict) or data.get("outcome", "ok") != "ok":
        return
    raise SuiteError(
        file,
        f"a later record of the same attempt (case {data.get('case_id')!r}, target "
        f"{data.get('target')!r}, attempt {data.get('attempt', 0)!r}) would replace this one, "
        "which holds the model's answer; a record may only replace one without a model "
        "answer (run --resume --retry-failed writes those)",
        line=number,
        path=("outcome",),
    )


def _json_data(file: str, number: int, line: str, long_digits: bool | None = None) -> Any:
    """The line's JSON value; ``long_digits``: whether it holds a run of 19 digits, if known."""
    try:
        if long_digits is False:
            try:
                return orjson.loads(line)
            except orjson.JSONDecodeError:
                return json.loads(line, parse_constant=_refuse_constant)
        return loads(line, strict=True)
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


def _parse_line(file: str, number: int, line: str) -> Record:
    long_digits = _long_digits(line)
    data = _json_data(file, number, line, long_digits)
    if not isinstance(data, dict):
        raise SuiteError(
            file, "expected a JSON object (one record per line)", line=number, column=1
        )
    if _may_repeat_a_key(data, line):
        _refuse_repeated_key(file, number, line)
    return _record(file, number, line, data, plain=not long_digits and "\\u" not in line)


def _refuse_repeated_key(file: str, number: int, line: str) -> None:
    """Refuse, located, a line whose objects name a key twice (a reader would keep the
    last value, silently: a planted line could hide a failing answer so)."""
    try:
        _unique_keys(line)
    except json.JSONDecodeError as exc:
        raise SuiteError(
            file,
            f"{exc.msg}: a record names each field once (which value would be scored?)",
            line=number,
            column=exc.colno,
        ) from None


def _record(file: str, number: int, line: str, data: dict[str, Any], *, plain: bool) -> Record:
    """The record a line's data makes, its format checked (see :func:`_normalise_calls`)."""
    fmt = data.get("format", RECORD_FORMAT)
    newer = _newer_format(fmt)
    if newer is not None:
        raise SuiteError(
            file,
            f"records format {fmt!r} is newer than this toolproof reads (up to "
            f"{RECORD_FORMAT}): read it with the toolproof that wrote it, or upgrade",
            line=number,
            column=1,
            path=("format",),
        )
    if fmt not in _KNOWN_FORMATS:
        raise SuiteError(
            file,
            f"unknown records format {fmt!r} (this toolproof reads {', '.join(_KNOWN_FORMATS)})",
            line=number,
            column=1,
            path=("format",),
        )
    for name in _NOT_IN.get(fmt, ()):
        if name in data:
            raise SuiteError(
                file,
                f"'{name}' is not a field of records format {fmt}",
                line=number,
                column=1,
                path=(name,),
            )
    _normalise_calls(data, plain=plain)
    try:  # each request stored as a delta: whole again, byte for byte
        expand_requests(data, fmt)
    except BadSteps as exc:
        # the path names the place (exchanges[0], not exchanges.0); the message says what
        raise SuiteError(file, str(exc), line=number, column=1, path=exc.path) from None
    try:
        return Record.model_validate(data)
    except ValidationError as exc:
        raise first_error(exc, data, Record, JsonLineLocator(file, number, line)) from None


#: A record's line as msgspec reads it without its raw payloads: every field of Record and of
#: Response, as given (UNSET when absent), but the raw request and response, which are checked
#: as JSON and skipped. A line this refuses (unknown field, a response that is not an object,
#: NaN, a lone surrogate, a number beyond a double...) is read the usual way instead.
_SKIPPED = {"request", "raw"}
#: The fields that can hold a large value (a transcript, a state): taken as decoded, not copied.
_LARGE = ("transcript", "steps", "end_state", "state_changes", "mcp_calls")
_Unset = msgspec.UnsetType
_RESPONSE_FIELDS = tuple(Response.model_fields)
_RECORD_FIELDS = tuple(Record.model_fields)
_LeanResponse = msgspec.defstruct(
    "_LeanResponse",
    [
        (name, msgspec.Raw | _Unset, msgspec.UNSET)
        if name in _SKIPPED
        else (name, Any, msgspec.UNSET)
        for name in _RESPONSE_FIELDS
    ],
    forbid_unknown_fields=True,
)
_LeanRecord = msgspec.defstruct(
    "_LeanRecord",
    [
        (name, msgspec.Raw | _Unset, msgspec.UNSET)
        if name in _SKIPPED
        else (name, _LeanResponse | None | _Unset, msgspec.UNSET)
        if name == "response"
        else (name, Any, msgspec.UNSET)
        for name in _RECORD_FIELDS
    ],
    forbid_unknown_fields=True,
)
_lean_decode = msgspec.json.Decoder(_LeanRecord).decode
_to_builtins = msgspec.to_builtins
_UNSET = msgspec.UNSET


def _parse_lean(file: str, number: int, line: str) -> Record:
    """:func:`_parse_line` without the raw payloads (see :func:`iter_records`)."""
    try:
        lean: Any = _lean_decode(line)
    except (msgspec.DecodeError, RecursionError):  # ValidationError is a DecodeError
        # read the usual way: its error, located, or a value msgspec refuses (a lone surrogate)
        record = _parse_line(file, number, line)
        record.request = None
        if record.response is not None:
            record.response.raw = None
        return record
    # the raw payloads are left out of the value; their colons too, for the check of keys
    skipped = [lean.request]
    lean.request = _UNSET
    response = lean.response
    if response:  # (neither None nor UNSET)
        skipped.append(response.raw)
        response.raw = _UNSET
    large = [(name, value) for name in _LARGE if (value := getattr(lean, name)) is not _UNSET]
    for name, _ in large:
        setattr(lean, name, _UNSET)
    data = _to_builtins(lean)
    data.update(large)
    # the raw payloads are not scored: what they hold is checked only when they are read
    # (each given payload: its colons, and the one after its own key)
    ignore = sum(bytes(p).count(b":") + 1 for p in skipped if p is not _UNSET)
    if _may_repeat_a_key(data, line, ignore=ignore):
        _refuse_repeated_key(file, number, line)
    return _record(file, number, line, data, plain=False)


def duplicate_record(
    file: str, number: int, earlier: int, key: tuple[str, str | None, int]
) -> SuiteError:
    """The error for a record that would replace an earlier answered record of its attempt.

    A later record of the same (case, target, attempt) replaces one that got no
    model answer (``run --resume --retry-failed`` writes such records); it never
    replaces a model's answer, which would hide a failure.
    """
    case_id, target, attempt = key
    return SuiteError(
        file,
        f"a second record of case '{case_id}', target {target!r}, attempt {attempt}: the "
        f"record at line {earlier} holds the model's answer, and a later record may only "
        "replace one without a model answer",
        line=number,
        path=("case_id",),
    )


def read_records(path: str | Path) -> list[Record]:
    return [r for _, r in iter_records(path)]
