"""Sessions of the timeline pages: open one for a verified key, find one, close one."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import psycopg

from store.api.transactions import Transactions
from store.governance import ui_sessions
from store.governance.ui_sessions import UiSession


class UiSessionCalls:
    """Server-side sessions, shared by every server process through the database."""

    def __init__(self, transactions: Transactions) -> None:
        self._transactions = transactions

    def open(
        self,
        tenant_id: str,
        key_id: UUID,
        *,
        session_hash: bytes,
        csrf_hash: bytes,
        lifetime: timedelta,
    ) -> datetime:
        """Keep a session of ``key_id`` (a key of ``tenant_id`` the caller verified); when it
        expires."""

        def work(conn: psycopg.Connection[Any], now: datetime) -> datetime:
            expires_at = now + lifetime
            ui_sessions.open_session(
                conn,
                tenant_id,
                key_id=key_id,
                session_hash=session_hash,
                csrf_hash=csrf_hash,
                now=now,
                expires_at=expires_at,
            )
            return expires_at

        return self._transactions.run(work, tenant_id=tenant_id)

    def find(self, session_hash: bytes) -> UiSession | None:
        """The live session with this digest, its key still active; None otherwise."""
        return self._transactions.read(
            lambda conn, now: ui_sessions.find_session(conn, session_hash, now=now),
            tenant_id=None,
        )

    def close(self, tenant_id: str, session_hash: bytes) -> bool:
        """End the tenant's session with this digest; whether it was open."""
        return self._transactions.run(
            lambda conn, _: ui_sessions.close_session(conn, tenant_id, session_hash),
            tenant_id=tenant_id,
        )
