"""Failures kept out of memory, and records and verdicts read again on demand.

An evaluation of a million records can have hundreds of thousands of
failures: :class:`FailureLog` writes each one to a temporary file as it is
found and reads them back in order when asked. :class:`FileRecords` and
:class:`FileVerdicts` stand in for a target's records and verdicts: they
know only where each record is (its file and line) and read (and grade) the
records again each time they are iterated.
"""

from __future__ import annotations

import codecs
import os
import tempfile
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import orjson

from toolproof._shared.json_text import dumps
from toolproof.records import iter_records
from toolproof.records._read import loads
from toolproof.stats import FailureItem
from toolproof.types import FailureClass, Record, Risk, Verdict

_CHUNK = 1 << 20
_FIELDS = tuple(FailureItem.model_fields)
#: What ends each failure in a failure log's file (JSON text never holds it raw).
_SEPARATOR = b"\x1e"
#: A failure's fields, JSON-ready: case, attempt, risk, failure class, reasons and diff.
FailureRow = tuple[str, int, str, str, list[str], str]


class FailureLog(Sequence[FailureItem]):
    """The failures of one target, in a temporary file.

    Each failure is kept as the JSON object that ``dumps(..., indent=2)`` writes
    of it (orjson's text; the standard library's for a lone surrogate, escaped),
    followed by an ASCII record separator (0x1E), which JSON text never holds
    raw. The report's failure list is then this file with its layout indented
    (:meth:`indented`): no failure is parsed or encoded again to write it.
    """

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()  # noqa: SIM115 - closed with the log
        self._size = 0
        self._count = 0

    def append(self, item: FailureItem) -> None:
        self.add_failure(
            item.case_id, item.attempt, item.risk, item.failure, item.reasons, item.diff
        )

    def add_failure(
        self,
        case_id: str,
        attempt: int,
        risk: Risk,
        failure: FailureClass,
        reasons: list[str],
        diff: str,
        /,
    ) -> None:
        """Add a failure from its fields (what a summary builder gives: no item is built)."""
        data = {
            "case_id": case_id,
            "attempt": attempt,
            "risk": risk.value,
            "failure": failure.value,
            "reasons": reasons,
            "diff": diff,
        }
        try:
            text = orjson.dumps(data, option=orjson.OPT_INDENT_2) + _SEPARATOR
        except TypeError:  # a lone surrogate: orjson refuses it
            text = dumps(data, indent=2).encode("utf-8") + _SEPARATOR
        self._file.write(text)
        self._size += len(text)
        self._count += 1

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[FailureItem]:
        for row in self.rows():
            yield FailureItem.model_validate(dict(zip(_FIELDS, row, strict=True)))

    def iter_data(self) -> Iterator[dict[str, Any]]:
        """Each failure as JSON-ready data, in the order they were found."""
        for row in self.rows():
            yield dict(zip(_FIELDS, row, strict=True))

    def _chunks(self, size: int) -> Iterator[bytes]:
        """The first ``size`` bytes of the file, a chunk at a time."""
        self._file.flush()
        fd = self._file.fileno()
        offset = 0
        while offset < size:
            chunk = os.pread(fd, min(_CHUNK, size - offset), offset)
            if not chunk:
                break
            offset += len(chunk)
            yield chunk

    def rows(self) -> Iterator[FailureRow]:
        """Each failure's fields as JSON-ready values (in :class:`FailureItem`'s order)."""
        rest = b""
        for chunk in self._chunks(self._size):
            texts = (rest + chunk).split(_SEPARATOR)
            rest = texts.pop()
            for text in texts:
                try:  # orjson reads what it wrote, but for an escaped lone surrogate
                    data = orjson.loads(text)
                except orjson.JSONDecodeError:
                    data = loads(text.decode("utf-8"))
                yield tuple(data.values())

    def indented(self, indent: int) -> Iterator[str]:
        """The failure list as ``dumps(..., indent=2)`` writes it with its first line at
        this indentation, a piece at a time."""
        if not self._count:
            yield "[]"
            return
        newline = ("\n" + " " * indent).encode()
        item = newline + b"  "  # each line of a failure, one step further in
        between = b"," + item
        decode = codecs.getincrementaldecoder("utf-8")().decode
        yield "[" + item.decode()
        # (the last separator is left out: nothing follows it)
        for chunk in self._chunks(self._size - 1):
            yield decode(chunk.replace(b"\n", item).replace(_SEPARATOR, between))
        yield decode(b"", True) + newline.decode() + "]"

    @overload
    def __getitem__(self, index: int) -> FailureItem: ...
    @overload
    def __getitem__(self, index: slice) -> list[FailureItem]: ...
    def __getitem__(self, index: int | slice) -> FailureItem | list[FailureItem]:
        items = list(self)
        return items[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def close(self) -> None:
        self._file.close()

    def __del__(self) -> None:
        self._file.close()


class _Lines:
    """A sorted array of line numbers that answers ``in`` (for ``iter_records(only=)``)."""

    def __init__(self, lines: array[int]) -> None:
        self._lines = lines

    def __contains__(self, number: object) -> bool:
        i = bisect_left(self._lines, number)  # type: ignore[call-overload]
        return bool(i < len(self._lines) and self._lines[i] == number)


#: Where a target's records are: a file and the numbers of its lines, or records in memory.
Segment = tuple[Path, "array[int]"] | list[Record]


class FileRecords(Sequence[Record]):
    """A target's records, read again from their files each time they are iterated."""

    def __init__(
        self,
        segments: list[Segment],
        count: int,
        prepare: Callable[[Record, Path | None], Record],
        *,
        raw: bool = True,
    ) -> None:
        self._segments = segments
        self._raw = raw  # False: read without raw payloads (``prepare`` drops them anyway)
        self._count = count
        self._prepare = prepare

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Record]:
        for segment in self._segments:
            if isinstance(segment, list):
                for record in segment:
                    yield self._prepare(record, None)
                continue
            path, lines = segment
            for _, record in iter_records(path, only=_Lines(lines), raw=self._raw):
                yield self._prepare(record, path)

    def graded(
        self, grade: Callable[[Record], Verdict | None]
    ) -> Iterator[tuple[Record, Verdict | None]]:
        """Each record graded as read, raw parts and all (a multi-step end state is
        rebuilt from them), then prepared as iterating gives it."""
        for segment in self._segments:
            if isinstance(segment, list):
                for record in segment:
                    verdict = grade(record)
                    yield self._prepare(record, None), verdict
                continue
            path, lines = segment
            for _, record in iter_records(path, only=_Lines(lines), raw=self._raw):
                if not record.target:
                    record = record.model_copy(update={"target": path.stem})
                verdict = grade(record)
                yield self._prepare(record, path), verdict

    @overload
    def __getitem__(self, index: int) -> Record: ...
    @overload
    def __getitem__(self, index: slice) -> list[Record]: ...
    def __getitem__(self, index: int | slice) -> Record | list[Record]:
        return list(self)[index]


class FileVerdicts(Sequence[Verdict]):
    """A target's verdicts, graded again from :class:`FileRecords` each time they are iterated."""

    def __init__(
        self, records: FileRecords, count: int, grade: Callable[[Record], Verdict | None]
    ) -> None:
        self._records = records
        self._count = count
        self._grade = grade

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Verdict]:
        for _, verdict in self.pairs():
            if verdict is not None:
                yield verdict

    def pairs(self) -> Iterator[tuple[Record, Verdict | None]]:
        """Each record with its verdict, reading and grading each record once."""
        yield from self._records.graded(self._grade)

    @overload
    def __getitem__(self, index: int) -> Verdict: ...
    @overload
    def __getitem__(self, index: slice) -> list[Verdict]: ...
    def __getitem__(self, index: int | slice) -> Verdict | list[Verdict]:
        return list(self)[index]
