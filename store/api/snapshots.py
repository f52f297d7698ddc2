"""Read snapshots: several reads of one request in one consistent transaction."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

import psycopg

from store.api.transactions import Transactions
from store.snapshot import ReadSnapshot

T = TypeVar("T")


class SnapshotCalls:
    """Run a request's reads in one snapshot, retried and translated like every store call."""

    def __init__(self, transactions: Transactions) -> None:
        self._transactions = transactions

    def read(self, tenant_id: str, work: Callable[[ReadSnapshot], T]) -> T:
        """``work``'s reads in one REPEATABLE READ transaction at one ``now``.

        ``work`` may run again when the transaction is retried, so it must not have effects
        outside the database. What it defers (``ReadSnapshot.defer``) is sent with the COMMIT.
        """
        opened: list[ReadSnapshot] = []

        def body(conn: psycopg.Connection[Any], now: datetime) -> T:
            opened[:] = [ReadSnapshot(conn, tenant_id, now)]
            return work(opened[0])

        return self._transactions.run(
            body,
            tenant_id=tenant_id,
            snapshot=True,
            with_commit=lambda: opened[0].deferred,
        )
