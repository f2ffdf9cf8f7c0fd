"""The exit codes of every command, defined once (README.md documents them)."""

from __future__ import annotations

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
