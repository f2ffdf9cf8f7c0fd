"""Pausing the cyclic garbage collector while a big suite is built.

Loading and checking a suite of 100,000 cases makes millions of objects that
all live on, and few cycles. Each automatic collection walks the objects made
so far again, which costs more than the loading itself; paused, the collector
runs at the usual thresholds again as soon as the work is done.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused"]


@contextmanager
def gc_paused() -> Iterator[None]:
    """No automatic collection inside the block (nests; leaves a disabled collector alone)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
