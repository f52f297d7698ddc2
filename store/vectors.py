"""Episode vectors: written beside the episode they embed, one row per (episode, model).

The store never loads a model: it takes any object with a ``model_id`` and an ``embed``
method (``retrieval.embeddings.Embedder`` in the server), so the write path stays testable
without one.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

import numpy as np
import psycopg
from pgvector import HalfVector


class EpisodeEmbedder(Protocol):
    """What the write path needs to embed episodes as they are recorded."""

    model_id: str

    def embed(self, texts: Sequence[str]) -> np.ndarray[Any, Any]:
        """One unit-length vector per text."""
        ...


def insert_vectors(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    model: str,
    rows: Sequence[tuple[str, np.ndarray[Any, Any]]],
    now: datetime,
) -> None:
    """Store (episode_id, vector) pairs for ``model``; an existing pair is kept."""
    if not rows:
        return
    with conn.cursor() as cur:
        cur.executemany(
            """
            INSERT INTO episode_vectors (tenant_id, episode_id, model, embedding, created_at)
            VALUES (%(tenant_id)s, %(episode_id)s, %(model)s, %(embedding)s, %(now)s)
            ON CONFLICT DO NOTHING
            """,
            [
                {
                    "tenant_id": tenant_id,
                    "episode_id": episode_id,
                    "model": model,
                    "embedding": HalfVector(vector),
                    "now": now,
                }
                for episode_id, vector in rows
            ],
        )
