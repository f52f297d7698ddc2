"""What every store call stands on: the pool, the clock, the id factory, and ``run``.

Every call names the tenant it works for, and the database hears it with the call's first
statement (``sgam.tenant_id``): pooled connections work as the role ``sgam_app``, which
row-level security shows that tenant's rows only (migration 0012). ``None`` names no tenant:
such a call sees no tenant's rows, only what the key functions answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import psycopg
from psycopg.pq import TransactionStatus
from psycopg.rows import AsyncRowFactory
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from store.db.clock import Clock
from store.db.distribution import on_citus
from store.db.locks import async_retries, with_retries
from store.db.snapshot import ReadSnapshot
from store.db.tenants import begin_snapshot, enter_tenant, tenant_statement
from store.errors import translate
from store.facts.versions import IdFactory
from store.tracing import TENANT, span

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Transactions:
    """One connection pool, one clock: each call a transaction at one system time.

    ``async_pool`` (a server's: ``server.runtime.resources``) serves the exact reads of one
    statement on the caller's event loop itself (``aread``).
    """

    pool: ConnectionPool
    clock: Clock
    new_id: IdFactory
    async_pool: AsyncConnectionPool | None = None

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
        (REPEATABLE READ) rather than each its own (READ COMMITTED).
        """

        def body(conn: psycopg.Connection[Any], now: datetime) -> T:
            if not snapshot:
                with conn.transaction():
                    enter_tenant(conn, tenant_id)
                    return work(conn, now)
            # BEGIN at the snapshot's level and the tenant go as one simple query: one round
            # trip, where the driver's transaction() sends BEGIN on its own. (In pipeline mode
            # COMMIT would travel with the last statement too, but the pipeline's own cost in
            # the driver took back what the round trips saved: measured alike.)
            conn.autocommit = True
            try:
                conn.execute(begin_snapshot(tenant_id), prepare=False)
                answer = work(conn, now)
                conn.commit()
                return answer
            except BaseException:
                if not conn.broken:
                    conn.rollback()
                raise
            finally:
                restore_session(conn, autocommit=False)

        return self._call(body, "store snapshot" if snapshot else "store transaction", tenant_id)

    def read(
        self, work: Callable[[psycopg.Connection[Any], datetime], T], *, tenant_id: str | None
    ) -> T:
        """Run ``work``, a single statement, on its own: it is its own snapshot at one time.

        One round trip instead of three on the hot read paths. Only for work of one statement
        that writes nothing (several would each see their own). On one node, the tenant and
        the statement go in an autocommit pipeline, whose statements up to its sync are one
        implicit transaction, which the tenant's setting lasts for. On a Citus coordinator,
        which passes a tenant on to its workers only from a transaction block, BEGIN and
        COMMIT go around them in the same pipeline (``pipelined``).
        """

        def body(conn: psycopg.Connection[Any], now: datetime) -> T:
            if on_citus(conn):
                return self._pipelined_on(conn, now, lambda c, n: answered(work(c, n)), tenant_id)
            conn.autocommit = True
            try:
                with conn.pipeline():
                    conn.execute(*tenant_statement(tenant_id, block=False))
                    return work(conn, now)
            finally:
                restore_session(conn, autocommit=False)

        return self._call(body, "store read", tenant_id)

    async def aread(
        self,
        statement: Callable[[datetime], tuple[str | bytes, dict[str, Any]]],
        *,
        row_factory: AsyncRowFactory[R],
        tenant_id: str | None,
    ) -> list[R]:
        """``read`` on the event loop (``async_pool``, whose connections are in autocommit):
        the rows of one statement, made by ``statement`` from the call's system time, in one
        round trip; retried and translated as every call.
        """
        pool = self.async_pool
        if pool is None:
            raise RuntimeError("this store has no asyncio pool: call read()")
        now = self.clock()
        query, params = statement(now)

        async def attempt() -> list[R]:
            with span("store read", {TENANT: tenant_id}):
                return await attempt_on_loop()

        async def attempt_on_loop() -> list[R]:
            async with pool.connection() as conn:
                block = on_citus(conn)
                try:
                    async with conn.pipeline():
                        if block:
                            await conn.execute("BEGIN")
                        await conn.execute(*tenant_statement(tenant_id, block=block))
                        cur = conn.cursor(row_factory=row_factory)
                        await cur.execute(query, params)
                        if block:
                            await conn.execute("COMMIT")
                    return await cur.fetchall()
                except BaseException:
                    if block and not conn.broken:
                        await conn.rollback()
                    raise

        try:
            return await async_retries(attempt)
        except psycopg.Error as error:
            raise translate(error) from error

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

        return self._call(
            lambda conn, now: self._pipelined_on(conn, now, work, tenant_id),
            "store pipelined",
            tenant_id,
        )

    @staticmethod
    def _pipelined_on(
        conn: psycopg.Connection[Any],
        now: datetime,
        work: Callable[[psycopg.Connection[Any], datetime], Callable[[], T]],
        tenant_id: str | None,
    ) -> T:
        # BEGIN and COMMIT go as statements: psycopg's transaction() would sync the pipeline
        # at each, a round trip apiece.
        conn.autocommit = True
        try:
            with conn.pipeline():
                conn.execute("BEGIN")
                enter_tenant(conn, tenant_id)
                answers = work(conn, now)
                conn.execute("COMMIT")
            return answers()
        except BaseException:
            if not conn.broken:
                conn.rollback()
            raise
        finally:
            restore_session(conn, autocommit=False)

    def _call(
        self,
        body: Callable[[psycopg.Connection[Any], datetime], T],
        name: str,
        tenant_id: str | None,
    ) -> T:
        """``body`` on a pooled connection at one system time: retried when safe, its
        database errors translated into the store's; each attempt a span named ``name``
        (``store.tracing``), the wait for a connection in it."""
        now = self.clock()

        @with_retries
        def attempt() -> T:
            with span(name, {TENANT: tenant_id}), self.pool.connection() as conn:
                return body(conn, now)

        try:
            return attempt()
        except psycopg.Error as error:
            raise translate(error) from error


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


class SnapshotCalls:
    """Run a request's reads in one snapshot, retried and translated like every store call."""

    def __init__(self, transactions: Transactions) -> None:
        self._transactions = transactions

    def read(self, tenant_id: str, work: Callable[[ReadSnapshot], T]) -> T:
        """``work``'s reads in one REPEATABLE READ transaction at one ``now``.

        ``work`` may run again when the transaction is retried, so it must not have effects
        outside the database.
        """
        return self._transactions.run(
            lambda conn, now: work(ReadSnapshot(conn, tenant_id, now)),
            tenant_id=tenant_id,
            snapshot=True,
        )


def answered(answer: T) -> Callable[[], T]:
    """What ``pipelined`` reads after the commit, for work that read its answers itself."""
    return lambda: answer
