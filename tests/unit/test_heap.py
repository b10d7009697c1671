"""rpc.heap: a ready worker's heap frozen out of the collector's walks,
and the collections it makes counted with their longest pause."""

import gc

import pytest

from rpc import heap


@pytest.fixture
def thawed():
    yield
    heap.unfreeze()


def _walked(obj):
    """Whether the collector's generations hold ``obj``."""
    return any(o is obj for o in gc.get_objects())


def test_a_frozen_object_is_out_of_the_collectors_walks(thawed):
    loaded = [["host state"]]
    assert _walked(loaded)
    frozen = heap.freeze()
    # Other threads of the test process may free frozen objects meanwhile
    # (reference counts still apply): the count can only fall.
    assert 0 < gc.get_freeze_count() <= frozen
    assert not _walked(loaded)
    # Allocated later: walked as usual.
    later = [["a call's garbage"]]
    assert _walked(later)
    heap.unfreeze()
    assert gc.get_freeze_count() == 0
    assert _walked(loaded)


def test_frozen_objects_are_still_freed_by_reference_count(thawed):
    import weakref

    class Loaded:
        pass

    obj = Loaded()
    gone = weakref.ref(obj)
    heap.freeze()
    del obj
    assert gone() is None


def test_pauses_count_collections_by_generation():
    ticks = iter([10.0, 10.004, 20.0, 20.0005])
    # Only these two collections: none of the collector's own between.
    was_enabled = gc.isenabled()
    gc.disable()
    pauses = heap.Pauses(clock=lambda: next(ticks)).install()
    try:
        gc.collect()
        gc.collect(0)
    finally:
        pauses.uninstall()
        if was_enabled:
            gc.enable()
    assert pauses.report() == {
        "0": {"collections": 1, "max_pause_ms": 0.5},
        "2": {"collections": 1, "max_pause_ms": 4.0}}
    # Uninstalled: no more counted.
    gc.collect()
    assert pauses.report()["2"]["collections"] == 1
