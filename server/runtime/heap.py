"""A serving process's heap, frozen once it has started.

A started server holds about 200,000 objects the cyclic garbage collector tracks (the modules of
the web stack, the driver, pydantic's schemas, the routes) and keeps nearly all of them for its
life. A full collection walks every one: 100-150 ms on 2 cores, during which no request thread
and not the event loop runs. Python runs one whenever the objects that survived since
the last grow by a quarter of those, so a busy server stops every so often for that long.

``freeze_started_heap`` collects once, then moves every object alive to the collector's
permanent generation (``gc.freeze``), which no collection walks again: a full collection then
walks only what was made since, well under a millisecond (``python -m evals.bench.heap``).
Cycles among the frozen objects are never collected; they were alive at startup, and reference
counting still frees the rest.

Only ``sgam serve``'s processes freeze (``server.asgi``): an app made in a test or an embedding
program shares its process with objects that are not the server's.
"""

from __future__ import annotations

import gc
import logging
import time
from dataclasses import dataclass

from server.http.metrics import FROZEN_OBJECTS

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class FrozenHeap:
    """What one freeze did."""

    objects: int
    """Objects moved to the permanent generation (``gc.get_freeze_count``)."""
    collected_ms: float
    """How long the collection before it took."""


def freeze_started_heap() -> FrozenHeap:
    """Collect the startup's garbage, then freeze what is left (see the module)."""
    began = time.perf_counter()
    gc.collect()
    collected_ms = (time.perf_counter() - began) * 1e3
    gc.freeze()
    frozen = FrozenHeap(objects=gc.get_freeze_count(), collected_ms=round(collected_ms, 1))
    FROZEN_OBJECTS.set(frozen.objects)
    log.info(
        "heap frozen",
        extra={"frozen_objects": frozen.objects, "collected_ms": frozen.collected_ms},
    )
    return frozen
