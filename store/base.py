"""What every ``MemoryStore`` call stands on: the pool, the clock, the id factory, and ``_run``."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar
from uuid import uuid4

import psycopg
from psycopg_pool import ConnectionPool

from store.clock import Clock, wall_clock
from store.errors import translate
from store.locks import with_retries
from store.vectors import EpisodeEmbedder
from store.versions import IdFactory

T = TypeVar("T")


class StoreBase:
    """One connection pool, one clock: each call a transaction at one system time."""

    def __init__(
        self,
        pool: ConnectionPool,
        *,
        clock: Clock = wall_clock,
        new_id: IdFactory = uuid4,
        embedder: EpisodeEmbedder | None = None,
    ) -> None:
        self.pool = pool
        self.clock = clock
        self.new_id = new_id
        self.embedder = embedder

    def _run(self, work: Callable[[psycopg.Connection[Any], datetime], T]) -> T:
        """Run ``work`` in one transaction at one system time, retried when that is safe."""
        now = self.clock()

        @with_retries
        def attempt() -> T:
            with self.pool.connection() as conn, conn.transaction():
                return work(conn, now)

        try:
            return attempt()
        except psycopg.Error as error:
            raise translate(error) from error
