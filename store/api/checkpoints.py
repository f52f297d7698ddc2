"""Working memory: write a thread's next checkpoint, read its latest or a given version."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import psycopg

from store.api.receipts import traced_read, traced_write
from store.api.transactions import Transactions
from store.contract.memory import MAX_VERSION, Checkpoint, CheckpointWrite
from store.contract.results import ErasureResult
from store.db.inputs import check_identifier, parse_input
from store.errors import InvalidInput
from store.governance import touched
from store.governance.receipts import NO_TRACE, Touched, Trace
from store.memory import checkpoints


class CheckpointCalls:
    """A thread's checkpoints: versions 1, 2, ..., each written once and kept."""

    def __init__(self, transactions: Transactions) -> None:
        self._transactions = transactions

    def write_checkpoint(
        self,
        tenant_id: str,
        thread_id: str,
        checkpoint: CheckpointWrite | Mapping[str, Any],
        *,
        trace: Trace = NO_TRACE,
    ) -> Checkpoint:
        """Write the thread's next version; a stale ``expected_version`` is a Conflict."""
        check_identifier(thread_id, "thread_id")
        parsed = parse_input(CheckpointWrite, checkpoint)
        return traced_write(
            self._transactions,
            tenant_id,
            trace,
            lambda conn, now: checkpoints.write_checkpoint(
                conn, tenant_id, thread_id, parsed, now=now
            ),
            lambda written: [touched.checkpoint_written(written)],
        )

    def erase(self, tenant_id: str, thread_id: str) -> ErasureResult:
        """Delete the thread's checkpoints and their receipts; leave a content-free tombstone.

        NotFound (``thread_id``) when it has no checkpoint: no tombstone is written.
        """
        check_identifier(thread_id, "thread_id")
        new_id = self._transactions.new_id
        return self._transactions.run(
            lambda conn, now: checkpoints.erase_thread(
                conn, tenant_id, thread_id, now=now, new_id=new_id
            ),
            tenant_id=tenant_id,
        )

    def read_checkpoint(
        self,
        tenant_id: str,
        thread_id: str,
        *,
        version: int | None = None,
        trace: Trace = NO_TRACE,
    ) -> Checkpoint:
        """The thread's latest checkpoint, or ``version``; NotFound when there is none.

        A read for a decision (``trace``) leaves its receipt, saying whether a later version
        than the one read existed.
        """
        check_identifier(thread_id, "thread_id")
        if version is not None and not 1 <= version <= MAX_VERSION:
            raise InvalidInput(f"version must be from 1 to {MAX_VERSION}", field="version")

        def read(conn: psycopg.Connection[Any], _: datetime) -> Checkpoint:
            return checkpoints.read_checkpoint(conn, tenant_id, thread_id, version=version)

        def describe(
            conn: psycopg.Connection[Any], found: Checkpoint | None, _: datetime
        ) -> list[Touched]:
            if found is None:
                return [touched.checkpoint_missing(thread_id)]
            latest = (
                found.version
                if version is None
                else checkpoints.latest_version(conn, tenant_id, thread_id)
            )
            return [touched.checkpoint_read(found, latest=latest)]

        return traced_read(self._transactions, tenant_id, trace, read, describe)
