"""The bench-only database interface: what evaluations and benchmarks may do below the public API.

A benchmark measures the product beside its floor, the least the database itself can do for the
same answer: a raw statement, a ``COPY``, an ``EXPLAIN``, the vector index read directly. An
evaluation needs a database of its own for each arm. Neither belongs in ``MemoryStore``, so they
are offered here, in one place, and the import contracts (``pyproject.toml``) let only
``evals`` import this module: nothing in the product may depend on it.

Everything here is the store's own: the same pool settings, roles, migrations, index names and
search statement the product uses, so a floor measured through it is the product's floor.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeAlias
from unittest import mock

import psycopg
from psycopg import Error, sql
from psycopg.errors import Diagnostic
from psycopg.rows import class_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from store.contract.facts import Fact
from store.db import snapshot as _snapshot
from store.db.clock import wall_clock
from store.db.database import (
    APP_ROLE,
    make_pool,
    scratch_database,
    temporary_database,
)
from store.db.migrate import migrate, migrate_database
from store.db.roles import bootstrap_embedded_roles, login_as, pool_login
from store.db.tenants import enter_tenant, tenant_statement
from store.db.tuning import EMBEDDED_SHARED_BUFFERS, check_size
from store.db.watch import DatabaseWatch
from store.episodes.evidence import (
    EXACT_SCAN_LIMIT,
    HNSW_EF_SEARCH,
    EvidenceHit,
    SearchScope,
    search_evidence,
)
from store.episodes.hnsw import halfvec, index_name
from store.episodes.record import content_hash
from store.facts.reads import read_at_query
from store.governance import receipts as _receipts
from store.governance.receipts import Trace
from store.service import make_async_pool
from store.subjects.names import AskedKeys, find_by_keys, find_similar

__all__ = [
    "APP_ROLE",
    "EMBEDDED_SHARED_BUFFERS",
    "EXACT_SCAN_LIMIT",
    "HNSW_EF_SEARCH",
    "AskedKeys",
    "BareReads",
    "Connection",
    "ConnectionPool",
    "Diagnostic",
    "Error",
    "EvidenceHit",
    "SearchScope",
    "Trace",
    "app_login",
    "bare_reads",
    "bootstrap_embedded_roles",
    "check_size",
    "content_hash",
    "enter_tenant",
    "find_by_keys",
    "find_similar",
    "halfvec",
    "index_name",
    "login_as",
    "make_pool",
    "migrate",
    "migrate_database",
    "raw_connection",
    "receipts_left_out",
    "scratch_database",
    "search_evidence",
    "sql",
    "temporary_database",
    "wall_clock",
]


Connection: TypeAlias = psycopg.Connection[Any]
"""A connection to a benchmark's database, for its floors: raw statements, ``COPY``, plans."""


def app_login(conninfo: str) -> dict[str, Any]:
    """The settings that make a server's pool log in as ``sgam_app`` on ``conninfo``'s
    database when that role can log in (the embedded cluster's bootstrap makes it so), else
    the one-URL setup, where the pool sets the role itself (``docs/operations/roles.md``)."""
    with psycopg.connect(conninfo) as conn:
        row = conn.execute(
            "SELECT rolcanlogin FROM pg_roles WHERE rolname = %s", [APP_ROLE]
        ).fetchone()
    if row is not None and row[0]:
        return {"database_url": conninfo, "app_database_url": login_as(conninfo, APP_ROLE)}
    return {"database_url": conninfo, "allow_superuser_database_url": True}


def raw_connection(conninfo: str, *, autocommit: bool = False) -> Connection:
    """A plain connection as the URL's own role, with none of the pool's settings: the floor
    a benchmark measures the product beside. Use it as a context manager."""
    return psycopg.connect(conninfo, autocommit=autocommit)


@contextmanager
def receipts_left_out(left_out: bool = True) -> Iterator[None]:
    """Reads and writes inside leave no receipts (when ``left_out``), so a benchmark can measure
    what receipts cost. Both sides of such a comparison should enter this, with ``left_out``
    false for the side as served, so that entering it costs them alike."""
    leave = (lambda *_, **__: None) if left_out else _receipts.leave_receipts
    with (
        mock.patch.object(_snapshot, "leave_receipts", leave),
        mock.patch.object(_receipts, "leave_receipts", leave),
    ):
        yield


@dataclass(frozen=True)
class BareReads:
    """The exact read of a served GET fact with none of the server around it: the API's
    asyncio pool (``make_async_pool``, logged in as the served API logs in), and the read's
    own statement sent after the tenant's in one pipeline, as ``Transactions.aread`` sends
    them. A bare route serving these is the floor of GET fact on this stack
    (``evals.bench.served.stack``)."""

    pool: AsyncConnectionPool

    async def fact(self, tenant_id: str, subject: str, attribute: str) -> Fact | None:
        """The key's current fact (None: not known), by the served read's statement."""
        query, params = read_at_query(
            tenant_id,
            datetime.now(UTC),
            subject=subject,
            attribute=attribute,
            valid_at=None,
            known_at=None,
        )
        async with self.pool.connection() as conn:
            async with conn.pipeline():
                await conn.execute(*tenant_statement(tenant_id, block=False))
                cursor = conn.cursor(row_factory=class_row(Fact))
                await cursor.execute(query, params)
            found = await cursor.fetchall()
        return found[0] if found else None

    async def one(self) -> int:
        """``SELECT 1`` on the same pool: a round trip of the driver, with no tenant or table."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute("SELECT 1")
            row = await cursor.fetchone()
        return int(row[0]) if row is not None else 0


@asynccontextmanager
async def bare_reads(conninfo: str, *, max_size: int = 4) -> AsyncIterator[BareReads]:
    """``BareReads`` on ``conninfo``'s database, its pool open until the block ends."""
    settings = app_login(conninfo)
    login = pool_login(
        conninfo,
        settings.get("app_database_url"),
        allow_superuser=bool(settings.get("allow_superuser_database_url")),
    )
    # Never started: the watch says the database is up, so checkouts are never refused.
    watch = DatabaseWatch(login.conninfo)
    pool = make_async_pool(login.conninfo, max_size=max_size, role=login.role, watch=watch)
    await pool.open(wait=True, timeout=30)
    try:
        yield BareReads(pool)
    finally:
        await pool.close()
