"""What every store call stands on: the pool, the clock, the id factory, and ``run``.

Every call names the tenant it works for, and the database hears it with the call's first
statement (``sgam.tenant_id``): pooled connections work as the role ``sgam_app``, which
row-level security shows that tenant's rows only (migration 0012). ``None`` names no tenant:
such a call sees no tenant's rows, only what the key functions answer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import psycopg
from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool

from store.clock import Clock
from store.errors import translate
from store.locks import with_retries
from store.tenants import enter_tenant
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
        tenant_id: str | None,
        snapshot: bool = False,
    ) -> T:
        """Run ``work`` in one transaction at one system time, retried when that is safe.

        A write to a key reads the clock again once the key's lock is held (``hold_key``).
        With ``snapshot``, every statement of ``work`` sees the database as of its first one
        (REPEATABLE READ) rather than each its own (READ COMMITTED), and the transaction runs in
        pipeline mode: ``work`` reads each answer as it needs it, and opens no transaction
        block of its own (in pipeline mode the driver cannot tell it is inside one).
        """

        def body(conn: psycopg.Connection[Any], now: datetime) -> T:
            if not snapshot:
                with conn.transaction():
                    enter_tenant(conn, tenant_id)
                    return work(conn, now)
            # In pipeline mode BEGIN and the tenant travel with the first statement, and the
            # last statements (a read's receipts) with the COMMIT: a round trip saved at each.
            with _pipelined_transaction(conn, tenant_id, snapshot=True):
                return work(conn, now)

        return self._call(body)

    def read(
        self, work: Callable[[psycopg.Connection[Any], datetime], T], *, tenant_id: str | None
    ) -> T:
        """Run ``work``, a single statement, on its own: it is its own snapshot at one time.

        No BEGIN and no COMMIT: one round trip instead of three on the hot read paths. Only
        for work of one statement that writes nothing (several would each see their own).
        The tenant goes in the same round trip as the statement: a pipeline's statements up to
        its sync are one implicit transaction, which the tenant setting lasts for.
        """

        def body(conn: psycopg.Connection[Any], now: datetime) -> T:
            conn.autocommit = True
            try:
                with conn.pipeline():
                    enter_tenant(conn, tenant_id)
                    return work(conn, now)
            finally:
                restore_session(conn, autocommit=False)

        return self._call(body)

    def pipelined(
        self,
        work: Callable[[psycopg.Connection[Any], datetime], Callable[[], T]],
        *,
        tenant_id: str | None,
    ) -> T:
        """Run ``work`` in one transaction in pipeline mode, retried and translated as ``run``.

        ``work`` sends its statements and returns what reads their answers: that is called
        once the transaction committed, on the same connection. A statement's answer is awaited
        only when the work reads it, and the last statements travel with the COMMIT. Any error
        rolls the whole of it back.
        """

        def body(conn: psycopg.Connection[Any], now: datetime) -> T:
            with _pipelined_transaction(conn, tenant_id):
                answers = work(conn, now)
            return answers()

        return self._call(body)

    def _call(self, body: Callable[[psycopg.Connection[Any], datetime], T]) -> T:
        """``body`` on a pooled connection at one system time: retried when safe, its
        database errors translated into the store's."""
        now = self.clock()

        @with_retries
        def attempt() -> T:
            with self.pool.connection() as conn:
                return body(conn, now)

        try:
            return attempt()
        except psycopg.Error as error:
            raise translate(error) from error


@contextmanager
def _pipelined_transaction(
    conn: psycopg.Connection[Any], tenant_id: str | None, *, snapshot: bool = False
) -> Iterator[None]:
    """A transaction in pipeline mode for the tenant, committed when the block ends (REPEATABLE
    READ with ``snapshot``); any error rolls it back.

    BEGIN and COMMIT go as statements: psycopg's ``transaction()`` would sync the pipeline at
    each, a round trip apiece. A statement's answer is awaited only when it is read.
    """
    conn.autocommit = True
    try:
        with conn.pipeline():
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ" if snapshot else "BEGIN")
            enter_tenant(conn, tenant_id)
            yield
            conn.execute("COMMIT")
    except BaseException:
        if not conn.broken:
            conn.rollback()
        raise
    finally:
        restore_session(conn, autocommit=False)


def restore_session(conn: psycopg.Connection[Any], **settings: Any) -> None:
    """Hand a pooled connection back with the session settings the pool lent it with.

    One in an unknown state (lost, or still in a transaction after a failed rollback) cannot
    take them: it is closed instead, so the pool replaces it, and the call's own error is the
    one reported.
    """
    if conn.pgconn.transaction_status == TransactionStatus.IDLE:
        for name, value in settings.items():
            setattr(conn, name, value)
    elif not conn.closed:
        conn.close()
