"""Tenants: the isolation boundary every other row hangs from."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from store.errors import Conflict, NotFound


def create_tenant(conn: psycopg.Connection[Any], tenant_id: str, *, now: datetime) -> None:
    """Create a tenant; refuse an existing id."""
    row = conn.execute(
        "INSERT INTO tenants (tenant_id, created_at) VALUES (%(tenant_id)s, %(now)s)"
        " ON CONFLICT DO NOTHING RETURNING tenant_id",
        {"tenant_id": tenant_id, "now": now},
    ).fetchone()
    if row is None:
        raise Conflict(f"tenant {tenant_id!r} already exists", field="tenant_id")


def ensure_tenant(conn: psycopg.Connection[Any], tenant_id: str, *, now: datetime) -> None:
    """Create the tenant unless it exists (replays create tenants on first use)."""
    conn.execute(
        "INSERT INTO tenants (tenant_id, created_at) VALUES (%(tenant_id)s, %(now)s)"
        " ON CONFLICT DO NOTHING",
        {"tenant_id": tenant_id, "now": now},
    )


def require_tenant(conn: psycopg.Connection[Any], tenant_id: str) -> None:
    """Raise NotFound unless the tenant exists."""
    row = conn.execute(
        "SELECT 1 FROM tenants WHERE tenant_id = %(tenant_id)s", {"tenant_id": tenant_id}
    ).fetchone()
    if row is None:
        raise NotFound(f"tenant {tenant_id!r} does not exist", field="tenant_id")


def enter_tenant(conn: psycopg.Connection[Any], tenant_id: str | None) -> None:
    """Name the tenant of the transaction under way (none: ``None``), until it ends.

    Row-level security shows the pooled role that tenant's rows only. A call that learns its
    tenant inside the transaction (a key's revocation) names it again once known.
    """
    conn.execute("SELECT set_config('sgam.tenant_id', %s, true)", (tenant_id or "",))
