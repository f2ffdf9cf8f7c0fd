"""A run, opened once and kept small: figures, case rows and where each record is.

Opening a run grades every record (the one pipeline). What the pages need
afterwards is kept: the figures, one row per case and target, the verdicts,
and the byte offset of each record in the records file, so a case page reads
only its own records back. Raw exchanges are not held in memory.
"""

from __future__ import annotations

import contextlib
import gc
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from toolproof._shared.safe_io import MAX_LINE_CHARS, open_read
from toolproof.evaluate import Evaluation, TargetEvaluation
from toolproof.gate import GateResult, run_gate
from toolproof.records._steps import expand_requests
from toolproof.report import RunView, run_view
from toolproof.types import RECORD_FORMAT, Record, Verdict
from toolproof.web._source import RunInfo, RunSource

if TYPE_CHECKING:
    from toolproof.types import Case

Key = tuple[str, str, int]
"""(case ID, target, attempt)"""


@dataclass
class RunIndex:
    info: RunInfo
    view: RunView
    gate: GateResult
    light: Evaluation
    """The evaluation with verdicts and summaries, its records reduced to their keys."""
    offsets: dict[Key, int]
    verdicts: dict[Key, Verdict]
    cases: dict[str, Case]
    seconds: float
    """How long opening the run took."""

    def record(self, key: Key) -> Record | None:
        """Read one record back from the records file."""
        offset = self.offsets.get(key)
        if offset is None:
            return None
        with open_read(self.info.records_file) as fh:
            fh.seek(offset)
            line = fh.readline(MAX_LINE_CHARS + 1)
        data = json.loads(line)
        if isinstance(data, dict):  # each request stored as a delta: whole again
            expand_requests(data, data.get("format", RECORD_FORMAT))
        rec = Record.model_validate(data)
        if rec.target is None:
            rec = rec.model_copy(update={"target": self.info.records_file.stem})
        return rec


def _offsets(path: Path) -> dict[Key, int]:
    """Byte offset of the last record of each (case, target, attempt)."""
    out: dict[Key, int] = {}
    stem = path.stem
    offset = 0
    with open_read(path) as fh:
        for line in fh:
            if line.strip():
                try:
                    d = json.loads(line)
                    key = (d["case_id"], d.get("target") or stem, int(d.get("attempt", 0)))
                except (ValueError, KeyError, TypeError, RecursionError):
                    key = None  # evaluate() has already refused malformed records
                if key is not None:
                    out[key] = offset
            offset += len(line)
    return out


def _light(ev: Evaluation) -> Evaluation:
    """Verdicts and summaries kept; of the records, one key per case (its last attempt),
    which is what comparing runs reads of them (the case set and the repeats)."""
    targets = {}
    for name, t in ev.targets.items():
        last: dict[str, int] = {}
        for r in t.records:
            last[r.case_id] = max(r.attempt, last.get(r.case_id, 0))
        stubs = [
            Record.model_construct(case_id=cid, target=name, attempt=attempt)
            for cid, attempt in last.items()
        ]
        targets[name] = TargetEvaluation(name, stubs, t.verdicts, t.summary)
    return Evaluation(
        suite=ev.suite,
        source=ev.source,
        manifest=ev.manifest,
        targets=targets,
        superseded=ev.superseded,
        scorer=ev.scorer,
        judgements=ev.judgements,
        calibrations=ev.calibrations,
    )


def build_index(info: RunInfo, ev: Evaluation) -> RunIndex:
    start = time.perf_counter()
    gate = run_gate(ev)
    view = run_view(ev, gate, details=False)
    verdicts = {
        (v.case_id, name, v.attempt): v for name, t in ev.targets.items() for v in t.verdicts
    }
    return RunIndex(
        info=info,
        view=view,
        gate=gate,
        light=_light(ev),
        offsets=_offsets(info.records_file),
        verdicts=verdicts,
        cases={c.id: c for c in ev.suite.cases},
        seconds=time.perf_counter() - start,
    )


@dataclass
class _Slot:
    lock: threading.Lock = field(default_factory=threading.Lock)
    index: RunIndex | None = None
    error: str | None = None
    version: tuple[int, int] = (0, 0)


class RunCache:
    """Opened runs, by run ID; a run is reopened when its records change."""

    def __init__(self, source: RunSource, *, freeze_gc: bool = False) -> None:
        self.source = source
        self.freeze_gc = freeze_gc
        """After opening a run, move what is alive to the collector's permanent
        generation (a server's choice): a full collection then no longer walks
        the millions of objects of a large run, and pages do not stall on it."""
        self._slots: dict[str, _Slot] = {}
        self._lock = threading.Lock()

    def _slot(self, run_id: str) -> _Slot:
        with self._lock:
            return self._slots.setdefault(run_id, _Slot())

    def peek(self, info: RunInfo) -> RunIndex | str | None:
        """The open run, its error, or None when it has not been opened (yet)."""
        slot = self._slots.get(info.run_id)
        if slot is None or slot.version != info.version:
            return None
        return slot.index if slot.index is not None else slot.error

    def opening(self, run_id: str) -> bool:
        """Whether the run is being opened right now (by a request or the warm-up)."""
        slot = self._slots.get(run_id)
        return slot is not None and slot.lock.locked()

    def get(self, run_id: str) -> RunIndex:
        """Open a run (once; concurrent callers wait for the same opening).

        KeyError: no such run. UserError: its files are not valid.
        """
        from toolproof.errors import UserError

        info = self.source.info(run_id)
        slot = self._slot(run_id)
        with slot.lock:
            if slot.version == info.version:
                if slot.index is not None:
                    return slot.index
                if slot.error is not None:
                    raise UserError(slot.error)
            start = time.perf_counter()
            try:
                index = build_index(info, self.source.evaluation(run_id))
            except UserError as exc:
                slot.index, slot.error, slot.version = None, str(exc), info.version
                raise
            index.seconds = time.perf_counter() - start
            slot.index, slot.error, slot.version = index, None, info.version
            if self.freeze_gc:
                gc.collect()
                gc.freeze()
            return index

    def warm(self) -> Iterator[str]:
        """Open every run, newest first; yields each run ID when done."""
        from toolproof.errors import UserError

        for info in self.source.runs():
            with contextlib.suppress(UserError, KeyError):
                self.get(info.run_id)
            yield info.run_id
