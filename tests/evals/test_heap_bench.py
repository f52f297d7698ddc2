"""The frozen-heap benchmark (``evals.bench.heap``) times full collections of a started app's
heap in a child process, so the test process's own heap is never frozen."""

from __future__ import annotations

import gc
import json
from pathlib import Path

from evals.bench import heap


def test_a_started_apps_heap_is_measured_as_started_and_frozen(tmp_path: Path) -> None:
    out = tmp_path / "heap.json"
    heap.main(["--calls", "20", "--out", str(out)])
    found = json.loads(out.read_text(encoding="utf-8"))
    assert gc.get_freeze_count() == 0  # measured elsewhere
    assert found["calls"] == 20
    # The app's startup leaves a large heap (about 200,000 tracked objects), nearly all of it
    # frozen; after the calls the collector walks only what they left.
    assert found["tracked_objects"] > 50_000
    assert found["frozen_objects"] > 0.9 * found["tracked_objects"]
    assert found["tracked_objects_after_calls"] < 0.1 * found["tracked_objects"]
    # Model-free timing on a shared machine: only the direction is asserted, by a wide margin.
    assert found["full_collection_ms"] > 10 * found["frozen_full_collection_after_calls_ms"]
    assert found["ratio"] > 10
    assert found["machine"]["cpus"] >= 1
