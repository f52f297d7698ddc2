"""``server.runtime.heap``: a started server's heap, frozen out of the garbage collector's walks."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from prometheus_client import REGISTRY

from server.runtime.heap import freeze_started_heap


@pytest.fixture
def thawed() -> Iterator[None]:
    """The test process's heap given back to the collector afterwards."""
    try:
        yield
    finally:
        gc.unfreeze()


@pytest.mark.usefixtures("thawed")
def test_the_heap_alive_is_frozen_and_collections_walk_only_what_comes_after() -> None:
    before = len(gc.get_objects())
    garbage: list[object] = []
    garbage.append(garbage)  # a cycle only the collector frees
    del garbage
    frozen = freeze_started_heap()
    assert frozen.objects == gc.get_freeze_count()
    assert frozen.objects > 10_000  # pytest's own heap, at least
    assert frozen.collected_ms >= 0
    # What the collector still walks is what was made since; the cycle was collected first.
    assert len(gc.get_objects()) < before / 10
    assert REGISTRY.get_sample_value("sgam_heap_frozen_objects") == frozen.objects
    made = [[index] for index in range(10)]
    assert any(tracked is made for tracked in gc.get_objects())  # the new are walked
