"""Bounded retries: serialization failures and deadlocks are retried, other errors are not.

The errors are raised by the real server (``RAISE ... USING ERRCODE``), inside the store's
own transaction runner.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg
import pytest

from store.api.transactions import Transactions
from store.db.locks import MAX_ATTEMPTS
from store.errors import Conflict
from store.service import MemoryStore


@pytest.fixture
def transactions(store: MemoryStore) -> Transactions:
    """The store's transaction runner, as every store call uses it."""
    return Transactions(store.pool, store.clock, store.new_id)


def _raise(conn: psycopg.Connection[Any], sqlstate: str) -> None:
    statement = f"DO $$ BEGIN RAISE EXCEPTION 'test' USING ERRCODE = '{sqlstate}'; END $$"
    conn.execute(statement.encode())


class FailingWork:
    """A transaction body that fails with ``sqlstate`` on its first ``failures`` attempts."""

    def __init__(self, sqlstate: str, failures: int) -> None:
        self.sqlstate = sqlstate
        self.failures = failures
        self.attempts = 0

    def __call__(self, conn: psycopg.Connection[Any], now: datetime) -> str:
        self.attempts += 1
        conn.execute("CREATE TEMP TABLE attempt_marks (n int) ON COMMIT DROP")
        conn.execute("INSERT INTO attempt_marks VALUES (%(n)s)", {"n": self.attempts})
        if self.attempts <= self.failures:
            _raise(conn, self.sqlstate)
        marks = conn.execute("SELECT count(*) FROM attempt_marks").fetchone()
        assert marks is not None
        return f"done after {self.attempts} attempts, {marks[0]} mark(s) committed"


@pytest.mark.parametrize(("sqlstate", "name"), [("40001", "serialization"), ("40P01", "deadlock")])
def test_a_transient_failure_is_retried_and_its_work_rolled_back(
    transactions: Transactions, sqlstate: str, name: str
) -> None:
    work = FailingWork(sqlstate, failures=2)
    # Each failed attempt rolled back, so only the last attempt's mark exists.
    assert transactions.run(work, tenant_id=None) == "done after 3 attempts, 1 mark(s) committed", (
        name
    )


def test_retries_are_bounded_and_then_reported_as_a_conflict(transactions: Transactions) -> None:
    work = FailingWork("40001", failures=MAX_ATTEMPTS + 5)
    with pytest.raises(Conflict, match="kept colliding with concurrent writers"):
        transactions.run(work, tenant_id=None)
    assert work.attempts == MAX_ATTEMPTS


@pytest.mark.parametrize("sqlstate", ["23P01", "23505", "23514"])
def test_a_constraint_violation_is_reported_at_once_not_retried(
    transactions: Transactions, sqlstate: str
) -> None:
    work = FailingWork(sqlstate, failures=1)
    with pytest.raises(Conflict, match="the database refused the write"):
        transactions.run(work, tenant_id=None)
    assert work.attempts == 1
