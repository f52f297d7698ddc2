"""What every store call stands on: the pool, the clock, the id factory, and ``run``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import psycopg
from psycopg_pool import ConnectionPool

from store.clock import Clock
from store.errors import translate
from store.locks import with_retries
from store.versions import IdFactory

T = TypeVar("T")


@dataclass(frozen=True)
class Transactions:
    """One connection pool, one clock: each call a transaction at one system time."""

    pool: ConnectionPool
    clock: Clock
    new_id: IdFactory

    def run(
        self,
        work: Callable[[psycopg.Connection[Any], datetime], T],
        *,
        snapshot: bool = False,
    ) -> T:
        """Run ``work`` in one transaction at one system time, retried when that is safe.

        A write to a key reads the clock again once the key's lock is held (``hold_key``).
        With ``snapshot``, every statement of ``work`` sees the database as of its first one
        (REPEATABLE READ) rather than each its own (READ COMMITTED).
        """
        now = self.clock()

        @with_retries
        def attempt() -> T:
            with self.pool.connection() as conn, conn.transaction():
                if snapshot:
                    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                return work(conn, now)

        try:
            return attempt()
        except psycopg.Error as error:
            raise translate(error) from error
