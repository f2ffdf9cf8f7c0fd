"""Append-only records files: one JSON line per attempt, written durably.

A writer thread appends whole lines with one unbuffered write per batch (so
a killed process loses nothing it handed over) and fsyncs them in groups,
at most every 50 ms and at the end, so the event loop never waits on the
disk. A reader ignores a torn last line (what a
``kill -9`` in the middle of a write leaves) with a warning, and refuses
corruption anywhere else with a precise error.
"""

from __future__ import annotations

import os
import queue
import threading
import time
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

from toolproof._shared.json_text import dump_model
from toolproof._shared.loaded_keys import redactor
from toolproof._shared.safe_io import UnsafePath, open_write, refused
from toolproof.records._read import TornLineWarning
from toolproof.records._steps import compact_user_turns
from toolproof.types import Record

__all__ = ["RecordWriter", "RecordsWriteError", "latest_records"]


class RecordsWriteError(OSError):
    """The records file could not be written (disk full, read-only folder...)."""


_STOP = b""
#: Lines reach the OS at once; they are fsynced (against power loss) at most this often.
SYNC_INTERVAL_S = 0.05


class RecordWriter:
    """Appends records to a JSONL file from a background thread (group commit)."""

    def __init__(self, path: str | Path, *, fsync: bool = True) -> None:
        self.path = Path(path)
        try:  # never through a link planted in the run folder, never a FIFO
            self._fh = open_write(self.path, append=True)
        except UnsafePath as exc:
            raise refused(self.path, exc) from None
        try:
            _repair_tail(self.path, self._fh.fileno())
        except BaseException:
            self._fh.close()
            raise
        self._fsync = fsync
        self._queue: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._drain, name="toolproof-records", daemon=True)
        self._thread.start()

    def write(self, record: Record) -> Record:
        """Queue one record; it reaches the file in order, as one whole line.

        Returns the record as written: with every loaded API key redacted.
        """
        if self._error is not None:
            raise self._failure()
        record, line = record_line(record)
        self._queue.put(line)
        return record

    def close(self) -> None:
        """Write everything queued, fsync, and stop the thread."""
        if self._thread.is_alive():
            self._queue.put(_STOP)
            self._thread.join()
        if self._error is not None:
            raise self._failure()

    def _failure(self) -> RecordsWriteError:
        error = self._error
        reason = (error.strerror or str(error)) if isinstance(error, OSError) else str(error)
        failure = RecordsWriteError(f"cannot write {self.path}: {reason}")
        failure.__cause__ = error
        return failure

    def _drain(self) -> None:
        try:
            with self._fh as fh:
                self._loop(fh)
        except BaseException as exc:  # reported to the event loop by write()/close()
            self._error = exc

    def _loop(self, fh: BinaryIO) -> None:
        """Write each batch at once; fsync at most every ``SYNC_INTERVAL_S`` and at the end."""
        unsynced = False
        last_sync = time.monotonic()
        while True:
            wait = max(0.0, last_sync + SYNC_INTERVAL_S - time.monotonic()) if unsynced else None
            try:
                lines = [self._queue.get(timeout=wait)]
            except queue.Empty:
                unsynced, last_sync = self._sync(fh), time.monotonic()
                continue
            lines.extend(self._take_all())
            data = b"".join(line for line in lines if line)
            if data:
                fh.write(data)  # whole lines, straight to the OS: a killed process loses none
                unsynced = True
            if _STOP in lines:
                self._sync(fh)
                return
            if unsynced and time.monotonic() - last_sync >= SYNC_INTERVAL_S:
                unsynced, last_sync = self._sync(fh), time.monotonic()

    def _take_all(self) -> list[bytes]:
        out: list[bytes] = []
        while True:
            try:
                out.append(self._queue.get_nowait())
            except queue.Empty:
                return out

    def _sync(self, fh: BinaryIO) -> bool:
        if self._fsync:
            os.fsync(fh.fileno())
        return False

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def record_line(record: Record) -> tuple[Record, bytes]:
    """A record as a JSON line, and the record that line holds.

    Every loaded API key is redacted, lone surrogates are escaped, and NaN and
    Infinity are written as null. A conversation's user-model requests after the first
    are written as what each adds to the one before (the record returned holds them whole,
    as a reader rebuilds them).
    """
    text = _text(record)
    secrets = redactor()
    if secrets and secrets.found_in(text):
        redacted = secrets.model(record)
        if redacted is not record:
            record, text = redacted, _text(redacted)
    return record, text.encode() + b"\n"


def _text(record: Record) -> str:
    if record.user_turns:
        compact = compact_user_turns(record.user_turns)
        return dump_model(record.model_copy(update={"user_turns": compact}), exclude_none=True)
    return dump_model(record, exclude_none=True)


def _repair_tail(path: Path, fd: int) -> None:
    """Cut a torn last line off before appending, so new lines start clean."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    start = size
    keep = 0
    while start > 0:  # find the last newline, reading backwards in blocks
        step = min(start, 1 << 16)
        start -= step
        found = os.pread(fd, step, start).rfind(b"\n")
        if found >= 0:
            keep = start + found + 1
            break
    warnings.warn(
        f"{path}: the last line was cut short ({size - keep} bytes); it was dropped",
        TornLineWarning,
        stacklevel=3,
    )
    os.ftruncate(fd, keep)


def latest_records(records: Iterable[Record]) -> list[Record]:
    """One record per (case, target, attempt): the last one written wins."""
    by_key: dict[tuple[str, str | None, int], Record] = {}
    for rec in records:
        by_key[(rec.case_id, rec.target, rec.attempt)] = rec
    return list(by_key.values())
