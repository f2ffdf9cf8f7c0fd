"""Failures kept out of memory, and records and verdicts read again on demand.

An evaluation of a million records can have hundreds of thousands of
failures: :class:`FailureLog` writes each one to a temporary file as it is
found and reads them back in order when asked. :class:`FileRecords` and
:class:`FileVerdicts` stand in for a target's records and verdicts: they
know only where each record is (its file and line) and read (and grade) the
records again each time they are iterated.
"""

from __future__ import annotations

import os
import tempfile
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import orjson

from toolproof._jsontext import dumps
from toolproof.records import iter_records
from toolproof.records._read import loads
from toolproof.stats import FailureItem
from toolproof.types import FailureClass, Record, Risk, Verdict

_CHUNK = 1 << 20
_FIELDS = tuple(FailureItem.model_fields)
#: A failure's fields, JSON-ready: case, attempt, risk, failure class, reasons and diff.
FailureRow = tuple[str, int, str, str, list[str], str]


class FailureLog(Sequence[FailureItem]):
    """The failures of one target, in a temporary file (one JSON line each)."""

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
        data = (case_id, attempt, risk.value, failure.value, reasons, diff)
        try:
            line = orjson.dumps(data) + b"\n"
        except TypeError:  # a lone surrogate: orjson refuses it
            line = dumps(data).encode("utf-8") + b"\n"
        self._file.write(line)
        self._size += len(line)
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

    def rows(self) -> Iterator[FailureRow]:
        """Each failure's fields as JSON-ready values (in :class:`FailureItem`'s order)."""
        self._file.flush()
        fd = self._file.fileno()
        offset, rest = 0, b""
        while offset < self._size:
            chunk = os.pread(fd, min(_CHUNK, self._size - offset), offset)
            if not chunk:
                break
            offset += len(chunk)
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            for line in lines:
                try:  # orjson wrote it, but for a lone surrogate (escaped: orjson refuses it)
                    row = orjson.loads(line)
                except orjson.JSONDecodeError:
                    row = loads(line.decode("utf-8"))
                yield tuple(row)

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
