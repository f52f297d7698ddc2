"""A batch of episodes large enough for its vectors to be copied in is recorded whole: the
episodes of a batch without candidates go in one pipelined transaction, where COPY cannot run."""

from __future__ import annotations

from typing import Any

from psycopg_pool import ConnectionPool

from retrieval.search.embeddings import Embedder
from store.episodes.vectors import COPY_FROM
from store.service import MemoryStore


def copy_size_batch() -> list[dict[str, Any]]:
    """Episodes enough for their vectors to be copied in (``COPY_FROM`` and one more)."""
    return [
        {"id": f"b-{n}", "occurred_at": "2026-06-01T00:00:00Z", "text": f"note {n}"}
        for n in range(COPY_FROM + 1)
    ]


def test_a_batch_of_copy_size_is_recorded_with_every_vector(
    pool: ConnectionPool, embedder: Embedder, tenant: str
) -> None:
    store = MemoryStore(pool, embedder=embedder)
    batch = copy_size_batch()

    recorded = store.episodes.record_batch(tenant, batch)

    assert [episode.id for episode in recorded] == [item["id"] for item in batch]
    with pool.connection() as conn:
        conn.execute("SELECT set_config('sgam.tenant_id', %s, false)", [tenant])
        row = conn.execute("SELECT count(*) FROM episode_vectors").fetchone()
    assert row is not None
    assert row[0] == COPY_FROM + 1
