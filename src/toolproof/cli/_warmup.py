"""Importing, while a run waits on the network, what the report after it needs.

A run spends most of its time waiting for answers, its event loop idle
between them. The report after the run imports the statistics (numpy,
scipy), the report and the store: about a second of work in a fresh
process. A background thread imports them from the first record on, when
the runner has imported all it needs itself. The command waits for the
thread before it goes on after the run, so no module is ever imported by
two threads at once.
"""

from __future__ import annotations

import importlib
import sys
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolproof.run import RunObserver
    from toolproof.types import Outcome, Record

__all__ = ["AFTER_RUN", "STORE_MODULE", "WarmingObserver", "Warmup"]

#: The history store's module (not needed with --no-store).
STORE_MODULE = "toolproof.store._store"

#: What the evaluation, the summary, the terminal report and the store import after a run.
AFTER_RUN = (
    "numpy",
    "scipy.stats",  # the statistics' intervals
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
    """Imports ``modules`` in a background thread, once started; :meth:`join` waits for it."""

    def __init__(self, modules: tuple[str, ...] | None = None) -> None:
        self.modules = AFTER_RUN if modules is None else modules
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
        finally:
            sys.setswitchinterval(interval)


class WarmingObserver:
    """Passes the runner's events on, and starts the warm-up at the first record."""

    def __init__(self, inner: RunObserver, warmup: Warmup) -> None:
        self.inner = inner
        self.warmup = warmup

    def started(self, totals: dict[str, int]) -> None:
        self.inner.started(totals)

    def recorded(self, record: Record) -> None:
        self.inner.recorded(record)
        self.warmup.start()

    def retrying(self, target: str, outcome: Outcome, delay_s: float) -> None:
        self.inner.retrying(target, outcome, delay_s)

    def note(self, target: str, text: str) -> None:
        note = getattr(self.inner, "note", None)  # observers written before note() lack it
        if note is not None:
            note(target, text)

    def finished(self) -> None:
        self.inner.finished()
