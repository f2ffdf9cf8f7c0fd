"""toolproof._shared.gcpause: the collector is paused, frozen only when asked, and always restored."""

from __future__ import annotations

import gc

from tests.subprocess_support import fresh_python
from toolproof._shared.gcpause import (
    YOUNG_THRESHOLD,
    fewer_young_collections,
    freeze_standing,
    frozen_after_pauses,
    gc_paused,
)


def test_a_pause_restores_the_collector_and_freezes_nothing() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner pause leaves the outer one paused
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_inside_frozen_after_pauses_a_pause_freezes_and_the_block_thaws() -> None:
    built: list[object] = []
    with frozen_after_pauses():
        with gc_paused():
            built.extend({"n": i} for i in range(1000))
        assert gc.isenabled()
        assert gc.get_freeze_count() >= 1000
    assert gc.get_freeze_count() == 0
    with gc_paused():  # outside the block, no freezing again
        built.append({})
    assert gc.get_freeze_count() == 0


def test_freeze_standing_freezes_only_inside_frozen_after_pauses() -> None:
    built = [{"n": i} for i in range(1000)]
    freeze_standing()
    assert gc.get_freeze_count() == 0  # a library caller's objects are never frozen
    with frozen_after_pauses():
        freeze_standing()
        assert gc.get_freeze_count() >= len(built)
    assert gc.get_freeze_count() == 0


def test_frozen_at_exit_freezes_what_stands_when_the_process_ends() -> None:
    code = (
        "import atexit, gc\n"
        "atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count() > 0))\n"
        "from toolproof._shared.gcpause import frozen_at_exit\n"
        "frozen_at_exit(); frozen_at_exit()\n"
        "print('frozen before exit:', gc.get_freeze_count() > 0)\n"
    )
    done = fresh_python(code)
    assert done.splitlines() == ["frozen before exit: False", "frozen at exit: True"]


def test_fewer_young_collections_only_inside_frozen_after_pauses_and_restored() -> None:
    before = gc.get_threshold()
    with fewer_young_collections():
        assert gc.get_threshold() == before  # a library caller's collector is left alone
    with frozen_after_pauses(), fewer_young_collections():
        assert gc.get_threshold() == (max(before[0], YOUNG_THRESHOLD), *before[1:])
    assert gc.get_threshold() == before
