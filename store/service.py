"""``MemoryStore``: the store's capabilities over one pool and one clock, for the API and replays.

Every call names its tenant explicitly (the caller's credential decides it, never the
payload; ``admin.authenticate`` and ``admin.revoke_api_key`` find it from the key) and runs as
one transaction, retried on deadlock or serialization failure. System time comes from the
injected clock: once per call, or, for a write to a key, once that key's lock is held.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any
from uuid import uuid4

import psycopg
from psycopg import sql
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from store.api.admin import AdminCalls, UiSessionCalls
from store.api.checkpoints import CheckpointCalls
from store.api.conflicts import ConflictCalls
from store.api.episodes import EpisodeCalls
from store.api.erasure import ErasureCalls
from store.api.extraction import ExtractionCalls
from store.api.facts import FactCalls
from store.api.outcomes import OutcomeCalls
from store.api.procedures import ProcedureCalls
from store.api.receipts import ReceiptCalls
from store.api.retention import RetentionCalls
from store.api.subjects import SubjectCalls
from store.api.transactions import SnapshotCalls, Transactions
from store.api.weak_signals import WeakSignalCalls
from store.db.clock import Clock, wall_clock
from store.db.database import SESSION_SETTINGS, make_pool
from store.db.distribution import HAS_CITUS, mark_on_citus
from store.db.migrate import migrate_database, require_current_schema
from store.db.watch import DatabaseWatch, GatedAsyncPool
from store.episodes.vectors import EpisodeEmbedder
from store.facts.versions import IdFactory


class MemoryStore:
    """The memory store over one connection pool, one attribute per capability.

    ``admin``: tenants, API keys, the attribute schema. ``episodes``: the raw inputs.
    ``facts``: candidates, expiries, retractions and exact reads of a key. ``conflicts``:
    equal-start conflicts and their settlement. ``subjects``: profiles, the subject list,
    export, the read path's whole read. ``erasure``: the one path that deletes.
    ``snapshots``: a request's reads in one consistent transaction. ``checkpoints``: working
    memory, each thread's checkpoints. ``outcomes``: what came of episodes (episodic
    memory). ``procedures``: procedural memory, approved versions active in scopes.
    ``receipts``: the content-free trace reads for decisions and writes leave.
    ``weak_signals``: weak signals waiting for independent episodes to repeat them.
    ``extraction``: the queue of episodes sent to an extractor. ``retention``: retention
    classes, legal holds and the purge. ``ui_sessions``: the timeline pages' sign-ins.

    With ``async_pool`` (a server's), exact reads of one statement can be awaited on the event
    loop (``facts.aat``); every other call runs on the caller's thread, on ``pool``.
    """

    def __init__(
        self,
        pool: ConnectionPool,
        *,
        clock: Clock = wall_clock,
        new_id: IdFactory = uuid4,
        embedder: EpisodeEmbedder | None = None,
        async_pool: AsyncConnectionPool | None = None,
    ) -> None:
        self.pool = pool
        self.async_pool = async_pool
        self.clock = clock
        self.new_id = new_id
        self.embedder = embedder
        transactions = Transactions(pool, clock, new_id, async_pool)
        self.admin = AdminCalls(transactions)
        self.episodes = EpisodeCalls(transactions, embedder)
        self.facts = FactCalls(transactions)
        self.conflicts = ConflictCalls(transactions)
        self.subjects = SubjectCalls(transactions)
        self.erasure = ErasureCalls(transactions)
        self.snapshots = SnapshotCalls(transactions)
        self.checkpoints = CheckpointCalls(transactions)
        self.outcomes = OutcomeCalls(transactions)
        self.procedures = ProcedureCalls(transactions)
        self.receipts = ReceiptCalls(transactions)
        self.weak_signals = WeakSignalCalls(transactions)
        self.extraction = ExtractionCalls(transactions)
        self.retention = RetentionCalls(transactions)
        self.ui_sessions = UiSessionCalls(transactions)


@contextmanager
def open_store(
    conninfo: str,
    *,
    clock: Clock = wall_clock,
    new_id: IdFactory = uuid4,
    embedder: EpisodeEmbedder | None = None,
    max_connections: int = 10,
    migrate: bool = False,
) -> Iterator[MemoryStore]:
    """Open a pool on ``conninfo``, yield a store, close the pool.

    A schema behind or ahead of this code is refused (``SchemaNotCurrent``, naming the versions
    and ``sgam migrate``). ``migrate=True`` applies pending migrations first: only for a database
    the caller has just set up itself (a scratch database of a test or an evaluation).
    """
    if migrate:
        migrate_database(conninfo)
    with psycopg.connect(conninfo) as conn:
        require_current_schema(conn)
    pool = make_pool(conninfo, max_size=max_connections)
    with pool:
        pool.wait()
        yield MemoryStore(pool, clock=clock, new_id=new_id, embedder=embedder)


def make_async_pool(
    conninfo: str, *, max_size: int, role: str | None, watch: DatabaseWatch
) -> AsyncConnectionPool:
    """The asyncio pool of a server's exact reads (``MemoryStore``'s ``async_pool``), created
    closed: connections in autocommit, working as ``role`` with the API pool's session
    settings (``make_pool``), refused at once while ``watch`` says the database is down."""
    return GatedAsyncPool(
        conninfo,
        watch=watch,
        min_size=1,
        max_size=max_size,
        open=False,
        name="sgam-async",
        configure=partial(_configure_async, role=role),
        kwargs={"autocommit": True},
    )


async def _configure_async(conn: psycopg.AsyncConnection[Any], *, role: str | None) -> None:
    """Set up a connection of an asyncio pool (``store.service.make_async_pool``) as
    ``_configure`` does a pooled one: its role, the session settings, whether it is on Citus."""
    if role is not None:
        await conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
    await conn.execute(SESSION_SETTINGS)
    cur = await conn.execute("SELECT " + HAS_CITUS)
    row = await cur.fetchone()
    if row is not None and row[0]:
        mark_on_citus(conn)
