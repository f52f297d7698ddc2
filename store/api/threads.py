"""Working memory: write a thread's next checkpoint, read its latest or a given version."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from store import checkpoints
from store.api.transactions import Transactions
from store.checkpoints import Checkpoint, CheckpointWrite
from store.errors import InvalidInput
from store.inputs import check_identifier, parse_input


class ThreadCalls:
    """A thread's checkpoints: versions 1, 2, ..., each written once and kept."""

    def __init__(self, transactions: Transactions) -> None:
        self._transactions = transactions

    def write_checkpoint(
        self, tenant_id: str, thread_id: str, checkpoint: CheckpointWrite | Mapping[str, Any]
    ) -> Checkpoint:
        """Write the thread's next version; a stale ``expected_version`` is a Conflict."""
        check_identifier(thread_id, "thread_id")
        parsed = parse_input(CheckpointWrite, checkpoint)
        return self._transactions.run(
            lambda conn, now: checkpoints.write_checkpoint(
                conn, tenant_id, thread_id, parsed, now=now
            ),
            tenant_id=tenant_id,
        )

    def read_checkpoint(
        self, tenant_id: str, thread_id: str, *, version: int | None = None
    ) -> Checkpoint:
        """The thread's latest checkpoint, or ``version``; NotFound when there is none."""
        check_identifier(thread_id, "thread_id")
        if version is not None and not 1 <= version <= checkpoints.MAX_VERSION:
            raise InvalidInput(
                f"version must be from 1 to {checkpoints.MAX_VERSION}", field="version"
            )
        return self._transactions.read(
            lambda conn, _: checkpoints.read_checkpoint(
                conn, tenant_id, thread_id, version=version
            ),
            tenant_id=tenant_id,
        )
