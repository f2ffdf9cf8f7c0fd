"""The exit codes of every command, defined once (README.md documents them)."""

from __future__ import annotations

import atexit
import os
import sys
import threading
from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    GATE_FAILED = 1
    """The gate refused the run (thresholds, hard rules or a drop against the baseline)."""
    USAGE = 2
    """Bad input: a suite, records file, option or setting. One located line, no traceback."""
    INFRA = 3
    """More attempts ended without a model answer than --max-infra-errors allows."""
    INCOMPLETE = 4
    """gate: the run is not complete (manifest not 'complete', attempts missing, no manifest)."""
    INTERRUPTED = 130
    """Ctrl-C or SIGTERM; the records so far are kept and --resume finishes the run."""


#: Set by a command once everything it writes is closed (and its files flushed):
#: the process may then end without tearing the interpreter down.
_done_writing = False


def done_writing() -> None:
    """Say that the command's files are all written and closed (see :func:`leave`)."""
    global _done_writing
    _done_writing = True


def leave(code: int | None) -> None:
    """End the process now with ``code``, after the exit handlers, when that is safe.

    A command that has written and closed all its files has nothing left to
    do but exit; the interpreter's teardown after the exit handlers (freeing
    every module and object one by one: tens of milliseconds after a run with numpy
    and scipy loaded) is work the operating system does anyway. Only when the
    command said so (:func:`done_writing`), no other non-daemon thread runs,
    no profiler or tracer is on (its data is written at teardown), and the
    standard streams flush: the output is flushed, the ``atexit`` handlers run
    (they stop helper servers, write coverage...), then ``os._exit``.
    Otherwise it returns, and the caller exits the usual way.
    """

    if not _done_writing or sys.gettrace() is not None or sys.getprofile() is not None:
        return
    main = threading.main_thread()
    if any(t is not main and t.is_alive() and not t.daemon for t in threading.enumerate()):
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed or broken stream: the usual exit reports it
        return
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(code or 0)
