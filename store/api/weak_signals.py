"""Weak signals: candidates waiting for independent episodes to repeat them (``/v1/buffer``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from store.api.transactions import Transactions
from store.contract.memory import BufferPage
from store.db.inputs import check_identifier
from store.db.paging import check_limit
from store.facts import weak_signals


class WeakSignalCalls:
    """Weak candidates buffered and not yet promoted or expired."""

    def __init__(self, transactions: Transactions) -> None:
        self._transactions = transactions

    def list(
        self,
        tenant_id: str,
        *,
        subject: str | None = None,
        attribute: str | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> BufferPage:
        """A page of the tenant's live buffered signals (of one subject or attribute when
        named), oldest first; expired ones are never listed."""
        for value, field in ((subject, "subject"), (attribute, "attribute")):
            if value is not None:
                check_identifier(value, field)
        check_limit(limit)

        def work(conn: psycopg.Connection[Any], now: datetime) -> BufferPage:
            return weak_signals.list_signals(
                conn,
                tenant_id,
                subject=subject,
                attribute=attribute,
                now=now,
                limit=limit,
                cursor=cursor,
            )

        return self._transactions.read(work, tenant_id=tenant_id)
