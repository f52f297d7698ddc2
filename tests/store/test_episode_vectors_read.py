"""An episode's vector as the read path loads it (in binary): the floats stored, each episode
its own, another model's and another tenant's left out."""

from __future__ import annotations

import numpy as np
import pytest
from psycopg_pool import ConnectionPool

from retrieval.search.embeddings import Embedder
from store.db.clock import ManualClock
from store.db.tenants import enter_tenant
from tests.read_helpers import ReadPath, read_path


@pytest.fixture
def reader(pool: ConnectionPool, clock: ManualClock, embedder: Embedder) -> ReadPath:
    return read_path(pool, clock, embedder)


def test_vectors_load_as_the_floats_stored(reader: ReadPath, pool: ConnectionPool) -> None:
    reader.at("2026-05-02T00:00:00Z")
    texts = {"a": "Dana moved to Porto.", "b": "The order left Osaka.", "c": "Rain in Lisbon."}
    for episode_id, text in texts.items():
        reader.record(episode_id, "2026-05-01T10:00:00Z", text)
    other = read_path(pool, reader.clock, reader.embedder)
    other.record("a", "2026-05-01T10:00:00Z", "Someone else's episode a.")
    model = reader.embedder.model_id

    loaded = reader.store.snapshots.read(
        reader.tenant,
        lambda snapshot: snapshot.episode_vectors(model=model, episode_ids=["a", "b", "missing"]),
    )
    elsewhere = reader.store.snapshots.read(
        reader.tenant,
        lambda snapshot: snapshot.episode_vectors(model="another-model", episode_ids=["a", "b"]),
    )

    assert set(loaded) == {"a", "b"}
    assert elsewhere == {}
    with pool.connection() as conn, conn.transaction():
        enter_tenant(conn, reader.tenant)
        stored: dict[str, list[float]] = dict(
            conn.execute(
                "SELECT episode_id, embedding::real[] FROM episode_vectors"
                " WHERE tenant_id = %s AND model = %s AND episode_id = ANY(%s)",
                (reader.tenant, model, ["a", "b"]),
            ).fetchall()
        )
    for episode_id, vector in loaded.items():
        assert vector.dtype == np.float32
        assert vector.shape == (reader.embedder.dimensions,)
        assert np.array_equal(vector, np.asarray(stored[episode_id], dtype=np.float32))
    expected = reader.embedder.embed([texts["a"]])[0]
    assert float(np.dot(loaded["a"], expected)) > 0.999  # its own text's vector, at half precision
