"""An episode is written while its text is encoded: the encoder is asked first, the
transaction writes the episode meanwhile, and the vector joins it in the same transaction.
An encoder that fails by then rolls the whole of it back."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

import numpy as np
import pytest
from psycopg_pool import ConnectionPool

from retrieval.search.encoder import EncoderUnavailable
from store.errors import NotFound
from store.service import MemoryStore

_HELD_BY_A_WRITE = """
SELECT count(*) FROM pg_locks AS l JOIN pg_class AS c ON c.oid = l.relation
WHERE c.relname = 'episodes' AND l.mode = 'RowExclusiveLock' AND l.pid <> pg_backend_pid()
"""


class _Deferred:
    """An embedder whose vectors come later: when they are waited for, it notes whether a
    transaction had already written to ``episodes`` (seen from another connection)."""

    model_id = "deferred"

    def __init__(self, pool: ConnectionPool, *, fail: bool = False) -> None:
        self._pool = pool
        self._fail = fail
        self.asked: list[list[str]] = []
        self.written_before_waiting: list[bool] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray[Any, Any]:
        return self.embed_later(texts).result()

    def embed_later(self, texts: Sequence[str]) -> Future[np.ndarray[Any, Any]]:
        self.asked.append(list(texts))
        outer = self

        class Later(Future[np.ndarray[Any, Any]]):
            def result(self, timeout: float | None = None) -> np.ndarray[Any, Any]:
                with outer._pool.connection() as conn:
                    row = conn.execute(_HELD_BY_A_WRITE).fetchone()
                outer.written_before_waiting.append(row is not None and row[0] > 0)
                if outer._fail:
                    raise EncoderUnavailable("the encoder's process stopped during this call")
                return np.ones((len(texts), 4), dtype=np.float32) / 2

        return Later()


def _vectors(pool: ConnectionPool, tenant: str) -> int:
    with pool.connection() as conn:
        conn.execute("SELECT set_config('sgam.tenant_id', %s, false)", [tenant])
        row = conn.execute("SELECT count(*) FROM episode_vectors").fetchone()
    assert row is not None
    return int(row[0])


def test_the_episode_is_written_while_its_text_is_encoded(
    pool: ConnectionPool, tenant: str
) -> None:
    embedder = _Deferred(pool)
    store = MemoryStore(pool, embedder=embedder)

    recorded = store.episodes.record(
        tenant, {"id": "e-1", "occurred_at": "2026-06-01T00:00:00Z", "text": "moved to Oslo"}
    )

    assert embedder.asked == [["moved to Oslo"]]
    assert embedder.written_before_waiting == [True]
    assert recorded.id == "e-1"
    assert _vectors(pool, tenant) == 1


def test_an_encoder_failing_after_the_episode_was_sent_writes_nothing(
    pool: ConnectionPool, tenant: str
) -> None:
    store = MemoryStore(pool, embedder=_Deferred(pool, fail=True))
    episode = {"id": "e-2", "occurred_at": "2026-06-01T00:00:00Z", "text": "moved to Oslo"}

    with pytest.raises(EncoderUnavailable):
        store.episodes.record(tenant, episode)

    with pytest.raises(NotFound):
        MemoryStore(pool).episodes.get(tenant, "e-2")
    assert _vectors(pool, tenant) == 0
