"""The embedding model: loaded explicitly, batched, usable off an event loop, re-embeddable."""

from __future__ import annotations

import threading

import anyio
import numpy as np
import pytest
from psycopg_pool import ConnectionPool

from retrieval.search.embeddings import DEFAULT_MODEL_ID, Embedder, Vectors, _packaged_model_path
from retrieval.search.reembed import reembed_tenant
from store.db.clock import ManualClock
from store.db.database import connect
from store.episodes.evidence import search_evidence
from store.episodes.hnsw import index_name
from store.service import MemoryStore
from tests.conftest import ts


def test_nothing_is_loaded_until_load_is_called() -> None:
    embedder = Embedder()
    assert (embedder.model_id, embedder.loaded) == (DEFAULT_MODEL_ID, False)
    with pytest.raises(RuntimeError, match=r"call Embedder\.load"):
        embedder.embed(["hello"])


def test_vectors_are_unit_length_batched_and_similar_for_paraphrases(embedder: Embedder) -> None:
    vectors = embedder.embed(
        [
            "Her passport deadline is 2026-07-15.",
            "The passport must be renewed by July 15.",
            "The weather in Paris is sunny.",
        ]
    )
    assert vectors.shape == (3, embedder.dimensions) == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2]) + 0.2
    assert embedder.embed([]).shape == (0, 384)


def test_embedding_runs_off_the_event_loop(embedder: Embedder) -> None:
    async def both() -> tuple[Vectors, Vectors]:
        async with anyio.create_task_group() as group:
            results: list[Vectors] = []

            async def one(text: str) -> None:
                results.append(await embedder.embed_async([text]))

            group.start_soon(one, "first")
            group.start_soon(one, "second")
        return results[0], results[1]

    first, second = anyio.run(both)
    assert first.shape == second.shape == (1, 384)


def test_embedding_later_gives_the_same_vectors_on_the_encoders_own_thread(
    embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = ["Her passport deadline is 2026-07-15.", "The weather in Paris is sunny."]
    direct = embedder.embed(texts)
    threads: list[str] = []
    encode = embedder.encoder._encode

    def recording(batch: list[str]) -> Vectors:
        threads.append(threading.current_thread().name)
        return encode(batch)

    monkeypatch.setattr(embedder.encoder, "_encode", recording)
    vectors = embedder.embed_later(texts).result()
    assert np.allclose(vectors, direct, atol=1e-6)
    [thread] = threads
    assert thread.startswith("sgam-encoder")
    assert thread != threading.current_thread().name
    assert embedder.embed_later([]).result().shape == (0, 384)
    # The encoder's error comes to the caller when it asks for the vectors.
    unloaded = Embedder()
    failing = unloaded.embed_later(["hello"])
    with pytest.raises(RuntimeError, match=r"call Embedder\.load"):
        failing.result()
    unloaded.close()


def test_tokens_are_counted_by_the_model_tokenizer(embedder: Embedder) -> None:
    assert embedder.count_tokens("When is the passport deadline?") == 6
    assert embedder.count_tokens("") == 0


def test_tokens_are_counted_while_a_batch_is_being_embedded(embedder: Embedder) -> None:
    # A context's budget is counted without waiting for another request's batch: the encoder's
    # lock is held here as an embed call holds it.
    counted: list[int] = []
    with embedder._lock:  # the encoder busy, as during a batch
        counting = threading.Thread(
            target=lambda: counted.extend(
                [
                    embedder.count_tokens("When is the passport deadline?"),
                    *map(int, embedder.truncated(["short", "long " * 400])),
                ]
            )
        )
        counting.start()
        counting.join(timeout=30)
        finished = not counting.is_alive()
    counting.join()
    assert finished
    assert counted == [6, 0, 1]


def test_reembedding_after_a_model_change_gives_every_episode_a_vector(
    pool: ConnectionPool, embedder: Embedder, conninfo: str
) -> None:
    clock = ManualClock(ts("2026-06-01T00:00:00Z"))
    store = MemoryStore(pool, clock=clock, embedder=embedder)
    store.admin.create_tenant("reembed")
    store.episodes.record_batch(
        "reembed",
        [
            {"id": f"e{i}", "occurred_at": "2026-06-01T00:00:00Z", "text": f"note number {i}"}
            for i in range(5)
        ],
    )
    # The same weights under another name stand in for a new model.
    other = Embedder(str(_packaged_model_path())).load()
    with connect(conninfo) as conn:
        done = reembed_tenant(conn, "reembed", embedder=other, clock=clock, batch=2)
        again = reembed_tenant(conn, "reembed", embedder=other, clock=clock)
        counts: dict[str, int] = dict(
            conn.execute(
                "SELECT model, count(*) FROM episode_vectors WHERE tenant_id = 'reembed'"
                " GROUP BY model"
            ).fetchall()
        )
        indexes = {row[0] for row in conn.execute("SELECT indexname FROM pg_indexes")}
        hits, _ = search_evidence(
            conn,
            "reembed",
            query=other.embed(["note number 3"])[0],
            model=other.model_id,
            dimensions=other.dimensions,
            k=1,
        )
    assert (done, again) == (5, 0)
    assert counts == {DEFAULT_MODEL_ID: 5, other.model_id: 5}
    assert index_name(other.model_id) in indexes
    assert [hit.episode_id for hit in hits] == ["e3"]
