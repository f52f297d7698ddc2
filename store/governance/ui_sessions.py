"""Sessions of the timeline pages: opened with an API key, found by the digest of their id.

The session id and its CSRF token never reach the database, only their SHA-256 digests
(migration 0021). A session is found before its tenant is known, through ``sgam_ui_session``,
which answers only while the session has not expired and its key is not revoked.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
from psycopg.rows import class_row


@dataclass(frozen=True, slots=True)
class UiSession:
    """A live session: whose it is (tenant, key) and the digest of its CSRF token."""

    tenant_id: str
    key_id: UUID
    csrf_hash: bytes
    expires_at: datetime


def open_session(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    key_id: UUID,
    session_hash: bytes,
    csrf_hash: bytes,
    now: datetime,
    expires_at: datetime,
) -> None:
    """Keep a new session of the tenant, dropping the tenant's expired ones first."""
    conn.execute(
        "DELETE FROM ui_sessions WHERE tenant_id = %(tenant_id)s AND expires_at <= %(now)s",
        {"tenant_id": tenant_id, "now": now},
    )
    conn.execute(
        """
        INSERT INTO ui_sessions
            (tenant_id, session_hash, key_id, csrf_hash, created_at, expires_at)
        VALUES
            (%(tenant_id)s, %(session_hash)s, %(key_id)s, %(csrf_hash)s, %(now)s, %(expires_at)s)
        """,
        {
            "tenant_id": tenant_id,
            "session_hash": session_hash,
            "key_id": key_id,
            "csrf_hash": csrf_hash,
            "now": now,
            "expires_at": expires_at,
        },
    )


def find_session(
    conn: psycopg.Connection[Any], session_hash: bytes, *, now: datetime
) -> UiSession | None:
    """The live session with this digest whose key is still active; None otherwise."""
    with conn.cursor(row_factory=class_row(UiSession)) as cur:
        cur.execute(
            "SELECT tenant_id, key_id, csrf_hash, expires_at"
            " FROM sgam_ui_session(%(session_hash)s, %(now)s)",
            {"session_hash": session_hash, "now": now},
        )
        return cur.fetchone()


def close_session(conn: psycopg.Connection[Any], tenant_id: str, session_hash: bytes) -> bool:
    """Delete the tenant's session with this digest; whether there was one."""
    deleted = conn.execute(
        "DELETE FROM ui_sessions WHERE tenant_id = %(tenant_id)s"
        " AND session_hash = %(session_hash)s",
        {"tenant_id": tenant_id, "session_hash": session_hash},
    )
    return deleted.rowcount > 0
