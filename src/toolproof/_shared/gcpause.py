"""Pausing the cyclic garbage collector while a big suite is built.

Loading and checking a suite of 100,000 cases makes millions of objects that
all live on, and few cycles. Each automatic collection walks the objects made
so far again, which costs more than the loading itself; paused, the collector
runs at the usual thresholds again as soon as the work is done.

The first collection after a pause still walks everything the pause built,
and later full collections walk it again. A short-lived process (the command
line) runs inside :func:`frozen_after_pauses`: the objects standing when a
pause ends are then moved out of the collector's sight (``gc.freeze``),
where reference counting still frees them; only cycles among them would
outlive their use, which a command that ends soon can afford. When the
block ends, they are handed back to the collector (``gc.unfreeze``). A
library caller's objects are never frozen unless it asks.
"""

from __future__ import annotations

import atexit
import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = [
    "fewer_young_collections",
    "freeze_standing",
    "frozen_after_pauses",
    "frozen_at_exit",
    "gc_paused",
]

_freeze = False
_at_exit = False


def frozen_at_exit() -> None:
    """When the process ends, freeze what stands instead of collecting it.

    The interpreter's shutdown collects the garbage again and again while it
    tears the modules down: after a run of a few thousand records, that is
    up to half a second of the command's time, to free memory the operating
    system frees anyway. Reference counting still frees what it can, and
    files are closed explicitly; only cycles are left to the OS. Registered
    once, for the command line (a library caller's process is left alone).
    """
    global _at_exit
    if not _at_exit:
        _at_exit = True
        atexit.register(gc.freeze)


@contextmanager
def frozen_after_pauses() -> Iterator[None]:
    """Inside the block, what stands when a pause ends is frozen (for a short-lived command)."""
    global _freeze
    before, _freeze = _freeze, True
    frozen_already = gc.get_freeze_count()
    try:
        yield
    finally:
        _freeze = before
        if not before and not frozen_already:  # never thaw what someone else froze
            gc.unfreeze()


def freeze_standing() -> None:
    """Inside :func:`frozen_after_pauses`, freeze what stands now (else do nothing).

    The command line calls it where a phase ends whose objects live on (the
    modules and the suite before a run, the run's records after it), so that
    the collections of the next phase walk only what that phase makes.
    """
    if _freeze:
        gc.freeze()


#: The youngest generation's threshold in :func:`fewer_young_collections` (Python's: 700).
YOUNG_THRESHOLD = 10_000


@contextmanager
def fewer_young_collections() -> Iterator[None]:
    """Inside :func:`frozen_after_pauses`, collect the youngest objects less often.

    A run makes objects that live on (records, verdicts) at a steady pace;
    at Python's default threshold each batch of 700 is walked, then walked
    again as the older generation fills up: for a run of 2,000 requests,
    a few hundred collections, 0.2 to 0.3 s of the event loop's time. With
    a higher threshold, about half of that. The garbage that cycles leave
    waits a little longer, a few thousand objects at most. Outside the
    command line, nothing changes.
    """
    if not _freeze:
        yield
        return
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], YOUNG_THRESHOLD), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


@contextmanager
def gc_paused() -> Iterator[None]:
    """No automatic collection inside the block (nests; leaves a disabled collector alone)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if _freeze:
                gc.freeze()
            gc.enable()
