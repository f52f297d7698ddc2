"""Re-embedding: after a change of model, give a tenant's episodes vectors of the new model.

Vectors are keyed by model, so the old ones stay until dropped and searches use the model
the server runs. Each model gets its own partial HNSW index (``store.episodes.hnsw``), sized to
its dimensions. The SQL is the store's (``store.episodes.vectors``); here the encoder runs in
batches, each committed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg

from retrieval.search.embeddings import Embedder
from store.db.clock import Clock
from store.episodes.vectors import (
    ensure_index,
    episodes_without_vectors,
    insert_vectors,
    truncated_ids,
)


def reembed_tenant(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    embedder: Embedder,
    clock: Clock,
    batch: int = 256,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Embed every episode of the tenant that lacks a vector of ``embedder``'s model.

    Commits after each batch, so an interrupted run resumes where it stopped. Returns how
    many episodes were embedded.
    """
    ensure_index(conn, model=embedder.model_id, dimensions=embedder.dimensions)
    conn.commit()
    done = 0
    while True:
        rows = episodes_without_vectors(conn, tenant_id, model=embedder.model_id, limit=batch)
        if not rows:
            return done
        vectors = embedder.embed([text for _, text in rows])
        insert_vectors(
            conn,
            tenant_id,
            model=embedder.model_id,
            rows=[
                (episode_id, vector) for (episode_id, _), vector in zip(rows, vectors, strict=True)
            ],
            now=clock(),
            truncated=truncated_ids(embedder, rows),
        )
        conn.commit()
        done += len(rows)
        if progress is not None:
            progress(len(rows))
