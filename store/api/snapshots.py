"""Read snapshots: several reads of one request in one consistent transaction."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from store.api.transactions import Transactions
from store.db.snapshot import ReadSnapshot

T = TypeVar("T")


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
