"""The vector-insert benchmark: one episode's vector stored and committed, as the API's role."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evals.bench.vector_insert import measure


def test_each_size_times_its_inserts_under_the_tenant(tmp_path: Path) -> None:
    found = measure([300], 20, buffers=[None, "160MB"], cache_dir=tmp_path)

    assert set(found["sizes"]) == {"300/128MB", "300/160MB"}
    for size in found["sizes"].values():
        _check(size)
    assert found["machine"]["cpus"]


def _check(size: dict[str, Any]) -> None:
    assert size["episodes"] == 300
    assert size["calls"] == 20
    assert size["insert_and_commit_p50_ms"] > 0
    # Every vector taken out was stored again, each by the API's role under the tenant.
    assert size["vectors_after"] == 300
    assert size["prewarmed"] is True  # the embedded build has pg_prewarm
