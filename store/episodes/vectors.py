"""Episode vectors: written beside the episode they embed, one row per (episode, model).

The store never loads a model: it takes any object with a ``model_id`` and an ``embed``
method (``retrieval.search.embeddings.Embedder`` in the server), so the write path stays testable
without one.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

import numpy as np
import psycopg
from pgvector import HalfVector
from psycopg import pq

from store.db import tenants
from store.episodes import record as episodes
from store.episodes.hnsw import hnsw_index


class EpisodeEmbedder(Protocol):
    """What the write path needs to embed episodes as they are recorded."""

    model_id: str

    def embed(self, texts: Sequence[str]) -> np.ndarray[Any, Any]:
        """One unit-length vector per text."""
        ...


@runtime_checkable
class Deferred(Protocol):
    """An embedder that queues texts and answers later (``retrieval.search.embeddings``): its
    own queue encodes concurrent callers' texts together."""

    def embed_later(self, texts: Sequence[str]) -> Future[np.ndarray[Any, Any]]:
        """The texts' vectors in a future; a caller that no longer wants them cancels it."""
        ...


@runtime_checkable
class InputLimited(Protocol):
    """An embedder that reads only a bounded prefix of a long text and says which it cut."""

    def truncated(self, texts: Sequence[str]) -> list[bool]:
        """Whether each text runs past the model's input and is embedded from its start only."""
        ...


def truncated_ids(embedder: object, rows: Sequence[tuple[str, str]]) -> frozenset[str]:
    """The ids among (id, text) ``rows`` whose text ``embedder`` embeds truncated.

    Empty for an embedder without an input limit (the stand-ins of tests).
    """
    if not isinstance(embedder, InputLimited) or not rows:
        return frozenset()
    flags = embedder.truncated([text for _, text in rows])
    return frozenset(row_id for (row_id, _), cut in zip(rows, flags, strict=True) if cut)


COPY_FROM = 32
"""From this many pairs on, ``insert_vectors`` copies them in (a bulk import's batches), except
in pipeline mode, where COPY cannot run (a batch of episodes alone is pipelined)."""


def insert_vectors(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    model: str,
    rows: Sequence[tuple[str, np.ndarray[Any, Any]]],
    now: datetime,
    truncated: Collection[str] = frozenset(),
) -> None:
    """Store (episode_id, vector) pairs for ``model``; an existing pair is kept.

    ``truncated`` names the episodes whose text was cut to fit the model (``truncated_ids``).
    """
    if not rows:
        return
    params = {"tenant_id": tenant_id, "model": model, "now": now}
    if len(rows) < COPY_FROM or conn.pgconn.pipeline_status != pq.PipelineStatus.OFF:
        with conn.cursor() as cur:
            cur.executemany(
                """
                INSERT INTO episode_vectors (
                    tenant_id, episode_id, model, embedding, embedding_truncated, created_at
                ) VALUES (
                    %(tenant_id)s, %(episode_id)s, %(model)s, %(embedding)s,
                    %(embedding_truncated)s, %(now)s
                )
                ON CONFLICT DO NOTHING
                """,
                [
                    params
                    | {
                        "episode_id": episode_id,
                        "embedding": HalfVector(vector),
                        "embedding_truncated": episode_id in truncated,
                    }
                    for episode_id, vector in rows
                ],
            )
        return
    # COPY cannot skip a pair that exists: copy into a scratch table, then insert from it.
    conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS copied_vectors (episode_id text, embedding halfvec)"
        " ON COMMIT DELETE ROWS"
    )
    with conn.cursor() as cur, cur.copy("COPY copied_vectors FROM STDIN") as copy:
        for episode_id, vector in rows:
            copy.write_row((episode_id, HalfVector(vector)))
    conn.execute(
        """
        INSERT INTO episode_vectors (
            tenant_id, episode_id, model, embedding, embedding_truncated, created_at
        )
        SELECT %(tenant_id)s, episode_id, %(model)s, embedding,
               episode_id = ANY(%(truncated)s), %(now)s
        FROM copied_vectors
        ON CONFLICT DO NOTHING
        """,
        params | {"truncated": sorted(truncated)},
    )
    # Emptied now, not at the commit: the next tenant of this transaction must not see them.
    conn.execute("TRUNCATE copied_vectors")


@dataclass
class _Waiting:
    texts: list[str]
    vectors: np.ndarray[Any, Any] | None = None
    error: BaseException | None = None

    @property
    def done(self) -> bool:
        return self.vectors is not None or self.error is not None


class SharedBatches:
    """An embedder whose concurrent callers share calls to the model.

    A caller that finds the model idle embeds the texts of every caller waiting, its own
    included, in one call; the others wait for their vectors. Requests that arrive together
    thus cost one forward pass of the model instead of one each, and callers never run the
    model side by side (it already uses every core for one batch).
    """

    def __init__(self, embedder: EpisodeEmbedder) -> None:
        self.model_id = embedder.model_id
        self._embedder = embedder
        self._turn = threading.Condition()
        self._waiting: list[_Waiting] = []
        self._busy = False

    def truncated(self, texts: Sequence[str]) -> list[bool]:
        """The wrapped embedder's answer; none cut when it has no input limit."""
        if isinstance(self._embedder, InputLimited):
            return self._embedder.truncated(texts)
        return [False] * len(texts)

    def embed_later(self, texts: Sequence[str]) -> Future[np.ndarray[Any, Any]]:
        """The texts' vectors in a future: the wrapped embedder's own (``Deferred``), which
        its encoder fills while the caller goes on; else one already filled by ``embed``."""
        if isinstance(self._embedder, Deferred):
            return self._embedder.embed_later(texts)
        done: Future[np.ndarray[Any, Any]] = Future()
        try:
            done.set_result(self.embed(texts))
        except Exception as error:  # noqa: BLE001 - raised by result(), as the deferred one
            done.set_exception(error)
        return done

    def embed(self, texts: Sequence[str]) -> np.ndarray[Any, Any]:
        """One unit-length vector per text, as the wrapped embedder gives them."""
        mine = _Waiting(list(texts))
        batch: list[_Waiting] = []
        with self._turn:
            self._waiting.append(mine)
            while self._busy and not mine.done:
                self._turn.wait()
            if not mine.done:  # the model is idle: embed everyone waiting
                self._busy = True
                batch, self._waiting = self._waiting, []
        if batch:
            self._embed(batch)
        if mine.error is not None:
            raise mine.error
        assert mine.vectors is not None
        return mine.vectors

    def _embed(self, batch: list[_Waiting]) -> None:
        # Every request taken from the queue is answered before the model is free again.
        try:
            vectors = self._embedder.embed([text for item in batch for text in item.texts])
            start = 0
            for item in batch:
                item.vectors = vectors[start : start + len(item.texts)]
                start += len(item.texts)
        except BaseException as error:
            for item in batch:
                item.error = error
            raise
        finally:
            with self._turn:
                self._busy = False
                self._turn.notify_all()


def ensure_index(conn: psycopg.Connection[Any], *, model: str, dimensions: int) -> None:
    """Create the model's partial HNSW index unless it exists (``store.episodes.hnsw``)."""
    conn.execute(hnsw_index(model, dimensions).create)


def episodes_without_vectors(
    conn: psycopg.Connection[Any], tenant_id: str, *, model: str, limit: int
) -> list[tuple[str, str]]:
    """Up to ``limit`` of the tenant's episodes with text and no vector of ``model``, as
    (id, text), by id."""
    rows = conn.execute(
        """
        SELECT e.id, e.text FROM episodes AS e
        WHERE e.tenant_id = %(tenant_id)s AND e.text IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM episode_vectors AS v
                          WHERE v.tenant_id = %(tenant_id)s AND v.tenant_id = e.tenant_id
                            AND v.episode_id = e.id AND v.model = %(model)s)
        ORDER BY e.id
        LIMIT %(limit)s
        """,
        {"tenant_id": tenant_id, "model": model, "limit": limit},
    ).fetchall()
    return [(str(episode_id), str(text)) for episode_id, text in rows]


def texts_of(
    chunk: Sequence[tuple[str, str]], conn: psycopg.Connection[Any], _: datetime
) -> list[tuple[str, str, str]]:
    """The (tenant, id, text) of each of ``chunk``'s episodes that has a text, each read as
    its tenant (erased episodes have none)."""
    by_tenant: dict[str, list[str]] = {}
    for tenant_id, episode_id in chunk:
        by_tenant.setdefault(tenant_id, []).append(episode_id)
    found: list[tuple[str, str, str]] = []
    for tenant_id, ids in by_tenant.items():
        tenants.enter_tenant(conn, tenant_id)
        stored = episodes.get_episodes(conn, tenant_id, ids)
        found.extend((tenant_id, e.id, e.text) for e in stored.values() if e.text is not None)
    return found


def store_vectors(
    conn: psycopg.Connection[Any],
    now: datetime,
    *,
    model: str,
    texts: Sequence[tuple[str, str, str]],
    vectors: np.ndarray[Any, Any],
    truncated: set[tuple[str, str]],
) -> None:
    """Insert each text's vector of ``model``, as its tenant; ``truncated`` names the
    (tenant, id) whose text was cut to the model's input."""
    by_tenant: dict[str, list[tuple[str, np.ndarray[Any, Any]]]] = {}
    for (tenant_id, episode_id, _), vector in zip(texts, vectors, strict=True):
        by_tenant.setdefault(tenant_id, []).append((episode_id, vector))
    for tenant_id, rows in by_tenant.items():
        tenants.enter_tenant(conn, tenant_id)
        cut = {episode_id for episode_id, _ in rows if (tenant_id, episode_id) in truncated}
        insert_vectors(conn, tenant_id, model=model, rows=rows, now=now, truncated=cut)
