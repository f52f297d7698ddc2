"""The pipelined write transaction: answers read after the commit, all or nothing, retried as
every store call is, and its connection handed back to the pool as it was lent; and the facts
a call reads before it knows its system time, shown as a read at that time shows them.

The failures are raised by the real server (``RAISE ... USING ERRCODE``), either where the work
reads an answer or among the statements that travel with the COMMIT, which the work never reads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any, Literal

import psycopg
import pytest
from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool

from store.api.transactions import Transactions
from store.db.clock import ManualClock
from store.db.database import make_pool
from store.db.locks import MAX_ATTEMPTS
from store.errors import Conflict, NotFound
from store.service import MemoryStore
from tests.conftest import ts
from tests.helpers import assert_value, declare, record

Where = Literal["read", "commit"]


@pytest.fixture(scope="module")
def one_connection(conninfo: str) -> Iterator[ConnectionPool]:
    """A pool of one connection, so the next call gets the connection a failed one used."""
    with psycopg.connect(conninfo) as conn:
        conn.execute("CREATE TABLE pipeline_marks (attempt integer NOT NULL UNIQUE)")
    with make_pool(conninfo, max_size=1) as opened:
        opened.wait()
        yield opened


@pytest.fixture
def transactions(one_connection: ConnectionPool, conninfo: str) -> Iterator[Transactions]:
    """A transaction runner on the one connection, over an empty marks table."""
    with psycopg.connect(conninfo) as conn:  # the tables' owner: the pooled role may not TRUNCATE
        conn.execute("TRUNCATE pipeline_marks")
    clock = ManualClock(ts("2026-06-01T00:00:00Z"))
    yield Transactions(one_connection, clock, lambda: pytest.fail("no ids are drawn here"))
    with one_connection.connection() as conn:
        # Handed back as lent: a transaction per block of work, nothing left open.
        assert (conn.autocommit, conn.pgconn.transaction_status) == (
            False,
            TransactionStatus.IDLE,
        )


def _raise(conn: psycopg.Connection[Any], sqlstate: str) -> None:
    statement = f"DO $$ BEGIN RAISE EXCEPTION 'test' USING ERRCODE = '{sqlstate}'; END $$"
    conn.execute(statement.encode())


def _marks(pool: ConnectionPool) -> list[int]:
    with pool.connection() as conn:
        rows = conn.execute("SELECT attempt FROM pipeline_marks ORDER BY attempt").fetchall()
    return [attempt for (attempt,) in rows]


class MarkingWork:
    """Marks its attempt, fails with ``sqlstate`` on its first ``failures`` attempts (where
    it reads an answer, or with the COMMIT), and answers how many marks it saw."""

    def __init__(self, *, sqlstate: str = "", failures: int = 0, where: Where = "read") -> None:
        self.sqlstate = sqlstate
        self.failures = failures
        self.where = where
        self.attempts = 0

    def __call__(self, conn: psycopg.Connection[Any], now: datetime) -> Callable[[], int]:
        self.attempts += 1
        conn.execute("INSERT INTO pipeline_marks VALUES (%(n)s)", {"n": self.attempts})
        if self.attempts <= self.failures:
            _raise(conn, self.sqlstate)
            if self.where == "read":
                conn.execute("SELECT 1").fetchone()
                pytest.fail("the failure was not raised where the work read an answer")
        counted = conn.execute("SELECT count(*) FROM pipeline_marks")  # read after the commit

        def answer() -> int:
            row = counted.fetchone()
            assert row is not None
            return int(row[0])

        return answer


def test_statements_read_only_after_the_commit_are_answered_then(
    transactions: Transactions, one_connection: ConnectionPool
) -> None:
    assert transactions.pipelined(MarkingWork(), tenant_id=None) == 1
    assert _marks(one_connection) == [1]


@pytest.mark.parametrize("where", ["read", "commit"])
@pytest.mark.parametrize("sqlstate", ["40001", "40P01"])
def test_a_transient_failure_is_retried_and_its_attempts_rolled_back(
    transactions: Transactions, one_connection: ConnectionPool, sqlstate: str, where: Where
) -> None:
    work = MarkingWork(sqlstate=sqlstate, failures=2, where=where)
    assert transactions.pipelined(work, tenant_id=None) == 1
    assert (work.attempts, _marks(one_connection)) == (3, [3])


def test_retries_are_bounded_and_then_reported_as_a_conflict(
    transactions: Transactions, one_connection: ConnectionPool
) -> None:
    work = MarkingWork(sqlstate="40001", failures=MAX_ATTEMPTS + 5, where="commit")
    with pytest.raises(Conflict, match="kept colliding with concurrent writers"):
        transactions.pipelined(work, tenant_id=None)
    assert (work.attempts, _marks(one_connection)) == (MAX_ATTEMPTS, [])


@pytest.mark.parametrize("where", ["read", "commit"])
def test_a_constraint_violation_is_reported_at_once_and_nothing_is_written(
    transactions: Transactions, one_connection: ConnectionPool, where: Where
) -> None:
    work = MarkingWork(sqlstate="23505", failures=1, where=where)
    with pytest.raises(Conflict, match="the database refused the write"):
        transactions.pipelined(work, tenant_id=None)
    assert (work.attempts, _marks(one_connection)) == (1, [])


def test_a_refusal_raised_by_the_work_rolls_back_what_it_sent(
    transactions: Transactions, one_connection: ConnectionPool
) -> None:
    def refusing(conn: psycopg.Connection[Any], now: datetime) -> Callable[[], None]:
        conn.execute("INSERT INTO pipeline_marks VALUES (1)")
        raise NotFound("episode 'e9' does not exist", field="episode_id")

    with pytest.raises(NotFound, match="episode 'e9' does not exist"):
        transactions.pipelined(refusing, tenant_id=None)
    assert _marks(one_connection) == []


def test_the_work_sees_the_time_read_before_its_transaction(
    transactions: Transactions,
) -> None:
    seen: list[datetime] = []

    def noting(conn: psycopg.Connection[Any], now: datetime) -> Callable[[], None]:
        seen.append(now)
        return lambda: None

    transactions.pipelined(noting, tenant_id=None)
    assert seen == [ts("2026-06-01T00:00:00Z")]


def test_unchanged_candidates_show_past_current_and_future_facts_as_a_read_does(
    store: MemoryStore, tenant: str, clock: ManualClock
) -> None:
    declare(store, tenant)
    record(store, tenant, "e1", "2026-06-01T00:00:00Z")
    timeline = [
        ("2026-07-15", "2026-06-01T00:00:00Z"),  # closed on June 5: past on June 10
        ("2026-06-30", "2026-06-05T00:00:00Z"),  # current on June 10
        ("2026-08-01", "2026-07-01T00:00:00Z"),  # future on June 10
    ]
    for value, valid_from in timeline:
        assert assert_value(store, tenant, "e1", value, valid_from).status == "written"
    clock.set(ts("2026-06-10T00:00:00Z"))
    candidates = [
        {
            "evidence": "",
            "subject": "mira",
            "attribute": "passport_deadline",
            "change": "update",
            "value": value,
            "valid_from": valid_from,
        }
        for value, valid_from in timeline
    ]
    results = store.facts.apply_candidates(tenant, "e1", candidates)
    assert [(r.status, r.reason) for r in results] == [("unchanged", "same value")] * 3
    history = store.facts.history(tenant, "mira", "passport_deadline")
    current = [fact for fact in history if fact.retired_at is None]
    assert [r.fact for r in results] == current
    assert [fact.status for fact in current] == ["past", "current", "future"]
