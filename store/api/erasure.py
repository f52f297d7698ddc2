"""Erasure: the one path that deletes, leaving a content-free tombstone."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from store.api.transactions import Transactions
from store.contract.results import ErasureResult
from store.db import tenants
from store.db.inputs import check_identifier
from store.governance import erasure


class ErasureCalls:
    """Delete a subject, or an episode and what it sourced."""

    def __init__(self, transactions: Transactions) -> None:
        self._transactions = transactions

    def erase_subject(self, tenant_id: str, subject: str) -> ErasureResult:
        """Delete everything held about a subject; leave a content-free tombstone.

        NotFound (``subject``) when nothing is held about it: no tombstone is written.
        """
        check_identifier(subject, "subject")
        new_id = self._transactions.new_id

        def work(conn: psycopg.Connection[Any], now: datetime) -> ErasureResult:
            tenants.require_tenant(conn, tenant_id)
            return erasure.erase_subject(conn, tenant_id, subject=subject, now=now, new_id=new_id)

        return self._transactions.run(work, tenant_id=tenant_id)

    def erase_episode(self, tenant_id: str, episode_id: str) -> ErasureResult:
        """Retract the facts an episode sourced, delete it, leave a tombstone."""
        check_identifier(episode_id, "episode_id")
        new_id = self._transactions.new_id
        return self._transactions.run(
            lambda conn, now: erasure.erase_episode(
                conn, tenant_id, episode_id=episode_id, now=now, new_id=new_id
            ),
            tenant_id=tenant_id,
        )
