"""How store calls use their connections.

A one-statement read runs outside any transaction block (no BEGIN, no COMMIT: one round trip);
a snapshot asks for REPEATABLE READ with its BEGIN. Neither leaves a setting on the pooled
connection for the next call, and a connection lost in the middle of either is reported as
the database being unavailable, never as a complaint about the settings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any
from uuid import uuid4

import psycopg
import pytest
from psycopg import IsolationLevel
from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool

from store.api.transactions import Transactions
from store.db.clock import ManualClock
from store.db.database import make_pool
from store.errors import DatabaseUnavailable
from store.service import MemoryStore
from tests.helpers import assert_value, declare, record


@pytest.fixture
def one(conninfo: str) -> Iterator[ConnectionPool]:
    """A pool of exactly one connection, so every call reuses the same one."""
    with make_pool(conninfo, min_size=1, max_size=1) as opened:
        opened.wait()
        yield opened


def _seeded(pool: ConnectionPool, clock: ManualClock) -> tuple[MemoryStore, str]:
    store = MemoryStore(pool, clock=clock)
    tenant = f"tx-{id(pool)}"
    store.admin.create_tenant(tenant)
    declare(store, tenant)
    record(store, tenant, "e1", "2026-05-01T00:00:00Z")
    assert assert_value(store, tenant, "e1", "2026-07-15").status == "written"
    return store, tenant


def _settings(pool: ConnectionPool) -> tuple[bool, IsolationLevel | None, TransactionStatus]:
    with pool.connection() as conn:
        return conn.autocommit, conn.isolation_level, conn.info.transaction_status


def _inside(transactions: Transactions, *, single: bool) -> tuple[str, bool]:
    """The isolation the server ran the work at, and whether its statements shared one
    transaction (one ``now()`` across a pause)."""

    def work(conn: psycopg.Connection[Any], _: object) -> tuple[str, bool]:
        first = conn.execute("SELECT current_setting('transaction_isolation'), now()").fetchone()
        assert first is not None
        if single:  # one statement only: it is its own transaction
            return str(first[0]), False
        later = conn.execute("SELECT now() FROM pg_sleep(0.01)").fetchone()
        assert later is not None
        return str(first[0]), first[1] == later[0]

    if single:
        return transactions.read(work, tenant_id=None)
    return transactions.run(work, tenant_id=None, snapshot=True)


def test_a_single_statement_read_runs_outside_a_transaction_and_leaves_no_setting(
    one: ConnectionPool, clock: ManualClock
) -> None:
    transactions = Transactions(one, clock, uuid4)
    fresh = _settings(one)
    assert _inside(transactions, single=True) == ("read committed", False)
    assert _settings(one) == fresh
    # A snapshot is one REPEATABLE READ transaction.
    assert _inside(transactions, single=False) == ("repeatable read", True)
    assert _settings(one) == fresh == (False, None, TransactionStatus.IDLE)


def test_a_read_names_its_tenant_for_its_statement_alone_and_the_server_warns_of_nothing(
    one: ConnectionPool, clock: ManualClock
) -> None:
    transactions = Transactions(one, clock, uuid4)
    warnings: list[str | None] = []
    with one.connection() as conn:
        conn.add_notice_handler(lambda notice: warnings.append(notice.message_primary))

    def tenant_seen(conn: psycopg.Connection[Any], _: object) -> str | None:
        row = conn.execute("SELECT current_setting('sgam.tenant_id', true)").fetchone()
        return None if row is None else row[0]

    assert transactions.read(tenant_seen, tenant_id="t-read") == "t-read"
    with one.connection() as conn:  # the same connection: the setting ended with the read
        assert tenant_seen(conn, None) in ("", None)
    # ``SET LOCAL`` outside a transaction block would hold too, with a WARNING every read.
    assert warnings == []


def _terminate(conninfo: str, pool: ConnectionPool) -> None:
    with pool.connection() as conn:
        pid = conn.info.backend_pid
    with psycopg.connect(conninfo, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%(pid)s)", {"pid": pid})


def test_a_connection_lost_under_a_read_is_unavailable_and_the_next_read_works(
    one: ConnectionPool, clock: ManualClock, conninfo: str
) -> None:
    store, tenant = _seeded(one, clock)
    reads: list[Callable[[], object]] = [
        lambda: store.facts.current(tenant, "mira", "passport_deadline").value,
        lambda: store.snapshots.read(
            tenant,
            lambda snapshot: [
                fact.value
                for fact in snapshot.subject_memory(
                    "mira", valid_at=snapshot.now, known_at=snapshot.now
                ).facts
            ],
        ),
        lambda: [fact.value for fact in store.subjects.profile(tenant, "mira").facts],
    ]
    for read in reads:
        _terminate(conninfo, one)
        with pytest.raises(DatabaseUnavailable):
            read()
        assert read() in ("2026-07-15", ["2026-07-15"])
        assert _settings(one) == (False, None, TransactionStatus.IDLE)
