"""Importing, while a run waits on the network, what the report after it needs.

A run spends most of its time waiting for answers, its event loop idle
between them. The report after the run imports the statistics (numpy),
the report and the store: about a second of work in a fresh
process. A background thread imports them from the first record on, when
the runner has imported all it needs itself. The command waits for the
thread before it goes on after the run, so no module is ever imported by
two threads at once.

Once the thread is done, a new run's records can be graded as they are
written (:class:`StreamedEvaluation`), in the event loop, between answers:
after the last answer only the summaries are left to build.
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolproof.evaluate import Evaluation, EvaluationStream
    from toolproof.run import RunObserver, RunResult
    from toolproof.store._write import AttemptLog
    from toolproof.trust import Trust
    from toolproof.types import Outcome, Record, Suite, Verdict

__all__ = ["AFTER_RUN", "STORE_MODULE", "StreamedEvaluation", "WarmingObserver", "Warmup"]

#: The history store's module (not needed with --no-store).
STORE_MODULE = "toolproof.store._store"

#: What the evaluation, the summary, the terminal report and the store import after a run.
AFTER_RUN = (
    "numpy",
    "rich.console",
    "rich.table",
    "toolproof.evaluate",
    "toolproof.report",
    "toolproof.gate",
    STORE_MODULE,
)

#: While the thread imports, the event loop gets the interpreter back this soon (seconds).
SWITCH_INTERVAL_S = 0.001


class Warmup:
    """Imports ``modules`` in a background thread, once started, then calls ``then``
    there; :meth:`join` waits for it."""

    def __init__(
        self, modules: tuple[str, ...] | None = None, then: Callable[[], None] | None = None
    ) -> None:
        self.modules = AFTER_RUN if modules is None else modules
        self.then = then
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="toolproof-warmup", daemon=True)
            self._thread.start()

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        interval = sys.getswitchinterval()
        sys.setswitchinterval(min(interval, SWITCH_INTERVAL_S))
        try:
            for name in self.modules:
                try:
                    importlib.import_module(name)
                except Exception:  # only a head start: the real import, later, reports it
                    continue
            if self.then is not None:
                self.then()
        finally:
            sys.setswitchinterval(interval)


class WarmingObserver:
    """Passes the runner's events on, and starts the warm-up at the first record."""

    def __init__(
        self, inner: RunObserver, warmup: Warmup, grading: StreamedEvaluation | None = None
    ) -> None:
        self.inner = inner
        self.warmup = warmup
        self.grading = grading
        self._grading_soon = False

    def started(self, totals: dict[str, int]) -> None:
        self.inner.started(totals)

    def recorded(self, record: Record) -> None:
        self.inner.recorded(record)
        self.warmup.start()
        if self.grading is not None:
            self.grading.keep(record)
            self._grade_soon(self.grading)

    def _grade_soon(self, grading: StreamedEvaluation) -> None:
        """Grade once the event loop's current step is done: the worker that wrote the
        record sends its next request first, and the other answers that came in with
        it are taken in before any grading (outside an event loop: at once)."""
        if self._grading_soon:
            return
        import asyncio  # loaded already: the runner's

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            grading.catch_up()
            return
        self._grading_soon = True
        loop.call_soon(self._catch_up, grading)

    def _catch_up(self, grading: StreamedEvaluation) -> None:
        self._grading_soon = False
        grading.catch_up()

    def retrying(self, target: str, outcome: Outcome, delay_s: float) -> None:
        self.inner.retrying(target, outcome, delay_s)

    def note(self, target: str, text: str) -> None:
        note = getattr(self.inner, "note", None)  # observers written before note() lack it
        if note is not None:
            note(target, text)

    def replanned(self, target: str, total: int) -> None:
        replanned = getattr(self.inner, "replanned", None)  # optional: adaptive schedules
        if replanned is not None:
            replanned(target, total)

    def finished(self) -> None:
        self.inner.finished()


class StreamedEvaluation:
    """A new run's records, graded in the event loop as they are written.

    What :func:`toolproof.evaluate.evaluate` would make of the run's records
    after the run, made while the run waits for answers: each record is
    graded and counted when it is written, and its history-store row noted
    (with its line in the records file). Only suites whose grading is cheap
    and self-contained are graded so (single-step cases, no environment, no
    Python checks of their own); a record that needs sentence embeddings
    stops it. Whatever goes wrong here only stops the streaming: the run then
    evaluates its records afterwards, as it always did, and reports any
    error there.
    """

    #: Records graded, per record written, to catch up with those written before the
    #: grading was ready: the event loop is never held up long.
    CATCH_UP = 4

    def __init__(
        self,
        suite: Suite,
        targets: Sequence[str],
        records_file: Path,
        trust: Trust,
        *,
        store: bool,
    ) -> None:
        self.suite = suite
        self.targets = list(targets)
        self.records_file = records_file
        self.trust = trust
        self.store = store
        self.log: AttemptLog | None = None
        self._stream: EvaluationStream | None = None
        self._ready = threading.Event()
        self._failed = False
        self._records: list[Record] = []
        self._graded = 0
        self._upto = 0  # what the next catch_up() grades up to

    @staticmethod
    def suits(suite: Suite) -> bool:
        """Whether the suite's records are cheap to grade while the run goes on."""
        return (
            suite.environment is None
            and not suite.checks
            and not any(c.multistep for c in suite.cases)
        )

    def prepare(self) -> None:
        """Make the evaluation to feed (in the warm-up thread, once its imports are done)."""
        try:
            from toolproof.evaluate import EvaluationStream

            log = None
            if self.store:
                from toolproof.store._write import AttemptLog

                log = AttemptLog()
            self._stream = EvaluationStream(
                self.suite,
                source=self.records_file,
                targets=self.targets,
                trust=self.trust,
                on_attempt=self._noted if log is not None else None,
                load_embeddings=False,
            )
            self.log = log
        except Exception:
            self._failed = True
        finally:
            self._ready.set()

    def add(self, record: Record) -> None:
        """One record written (in the event loop): graded now, or soon."""
        self.keep(record)
        self.catch_up()

    def keep(self, record: Record) -> None:
        """One record written (in the event loop), graded by the next :meth:`catch_up`
        (or, while the grading is not ready, later with the rest)."""
        if self._failed:
            return
        self._records.append(record)
        if self._ready.is_set():  # each record lets 1 + CATCH_UP be graded
            upto = max(self._upto, self._graded) + 1 + self.CATCH_UP
            self._upto = min(len(self._records), upto)

    def catch_up(self) -> None:
        """Grade the records :meth:`keep` let through (in the event loop)."""
        if self._upto > self._graded:
            self._grade(self._upto)

    def result(self, run: RunResult) -> tuple[Evaluation, AttemptLog | None] | None:
        """After the run: its evaluation and noted store rows, or None (evaluate it then)."""
        from toolproof.judges import JUDGEMENTS_FILE

        usable = (
            not self._failed
            and self._ready.is_set()
            and self._stream is not None
            and len(run.records) == len(self._records)
            and all(a is b for a, b in zip(run.records, self._records, strict=True))
            and not (run.run_dir / JUDGEMENTS_FILE).exists()
            and self._one_per_attempt()
        )
        if usable:
            self._grade(len(self._records))
        if not usable or self._failed or self._stream is None:
            self._drop()
            return None
        try:
            ev = self._stream.finish()
        except Exception:
            self._drop()
            return None
        ev.manifest = run.manifest
        return ev, self.log

    def _one_per_attempt(self) -> bool:
        """No two records for one attempt: where a later one would supersede an earlier,
        the evaluation after the run picks the latest, which a stream cannot."""
        keys = {(r.case_id, r.target, r.attempt) for r in self._records}
        return len(keys) == len(self._records)

    def _grade(self, upto: int) -> None:
        stream = self._stream
        if stream is None:  # its making failed (in the warm-up thread), or grading did
            return
        try:
            while self._graded < upto:
                record = self._records[self._graded]
                self._graded += 1  # the record's line in the new records file
                stream.add(record)
        except Exception:
            self._drop()

    def _noted(self, record: Record, verdict: Verdict | None, _: tuple[str, int] | None) -> None:
        assert self.log is not None
        self.log(record, verdict, (str(self.records_file), self._graded))

    def _drop(self) -> None:
        self._failed = True
        self._stream = None
        if self.log is not None:
            self.log.close()
            self.log = None
