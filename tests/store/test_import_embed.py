"""The bulk import's vectors: embedded after the facts are committed, batch by batch."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from psycopg_pool import ConnectionPool

from retrieval.search.embeddings import Embedder
from store.db.clock import ManualClock
from store.service import MemoryStore
from tests.conftest import ts
from tests.helpers import owner_connection
from tests.store.test_import import HISTORY, episode_line, import_text, new_tenant


@pytest.fixture
def clock() -> ManualClock:
    """One system time for the import."""
    return ManualClock(ts("2026-06-10T00:00:00Z"))


def test_embedding_after_the_import_gives_each_new_episode_one_vector(
    pool: ConnectionPool, clock: ManualClock, embedder: Embedder
) -> None:
    store = MemoryStore(pool, clock=clock, embedder=embedder)
    tenant = new_tenant(store, "vectors")
    outcome = store.episodes.import_lines(import_text(tenant, HISTORY))
    assert store.episodes.embed(outcome.recorded, batch=4) == 6
    assert store.episodes.embed(outcome.recorded) == 6  # again: each keeps its one vector
    with owner_connection(pool) as conn:
        rows = conn.execute(
            "SELECT episode_id, model FROM episode_vectors WHERE tenant_id = %s ORDER BY 1",
            [tenant],
        ).fetchall()
    assert rows == [(e, embedder.model_id) for e in ("e0", "e1", "e2", "e3", "e4", "e5")]


class _LengthModel:
    """A stand-in model (vectors only move around here): a text's vector is its length."""

    model_id = "text-length"

    def embed(self, texts: Sequence[str]) -> np.ndarray[Any, Any]:
        return np.array([[len(text), 1.0, 0.0] for text in texts], dtype=np.float32)


def test_large_embedding_batches_are_copied_in_and_keep_existing_vectors(
    pool: ConnectionPool, clock: ManualClock
) -> None:
    store = MemoryStore(pool, clock=clock, embedder=_LengthModel())
    tenant = new_tenant(store, "copied")
    history = [episode_line(f"e{n}", "2026-06-01T09:00:00Z", text="x" * n) for n in range(1, 81)]
    outcome = store.episodes.import_lines(import_text(tenant, history))
    assert store.episodes.embed(outcome.recorded[:40], batch=64) == 40
    assert store.episodes.embed(outcome.recorded, batch=80) == 80
    with owner_connection(pool) as conn:
        rows = conn.execute(
            "SELECT episode_id, embedding::text FROM episode_vectors WHERE tenant_id = %s",
            [tenant],
        ).fetchall()
    assert sorted(rows) == sorted((f"e{n}", f"[{n},1,0]") for n in range(1, 81))


def test_one_batch_of_two_tenants_gives_each_episode_its_own_text_s_vector(
    pool: ConnectionPool, clock: ManualClock
) -> None:
    # The same episode ids in two tenants, embedded in one batch large enough to be copied in:
    # the second tenant's rows must not pick up what the first one's left in the scratch table.
    store = MemoryStore(pool, clock=clock, embedder=_LengthModel())
    lengths = {new_tenant(store, "first"): 1, new_tenant(store, "second"): 100}
    recorded = []
    for tenant, offset in lengths.items():
        history = [
            episode_line(f"e{n}", "2026-06-01T09:00:00Z", text="x" * (offset + n))
            for n in range(40)
        ]
        recorded += store.episodes.import_lines(import_text(tenant, history)).recorded
    assert store.episodes.embed(recorded, batch=80) == 80
    with owner_connection(pool) as conn:
        for tenant, offset in lengths.items():
            rows = conn.execute(
                "SELECT episode_id, embedding::text FROM episode_vectors WHERE tenant_id = %s",
                [tenant],
            ).fetchall()
            assert sorted(rows) == sorted((f"e{n}", f"[{offset + n},1,0]") for n in range(40))
