"""Tenants: the isolation boundary every other row hangs from."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql

from store.contract.common import UnverifiedEvidencePolicy
from store.errors import Conflict, NotFound


def create_tenant(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    now: datetime,
    on_unverified_evidence: UnverifiedEvidencePolicy = "accept",
) -> None:
    """Create a tenant; refuse an existing id."""
    row = conn.execute(
        "INSERT INTO tenants (tenant_id, created_at, on_unverified_evidence)"
        " VALUES (%(tenant_id)s, %(now)s, %(policy)s)"
        " ON CONFLICT DO NOTHING RETURNING tenant_id",
        {"tenant_id": tenant_id, "now": now, "policy": on_unverified_evidence},
    ).fetchone()
    if row is None:
        raise Conflict(f"tenant {tenant_id!r} already exists", field="tenant_id")


def set_unverified_evidence(
    conn: psycopg.Connection[Any], tenant_id: str, policy: UnverifiedEvidencePolicy
) -> None:
    """Set the tenant's default for candidates whose evidence is not in their episode (an
    attribute's own ``on_unverified_evidence`` wins over it); NotFound for no such tenant."""
    row = conn.execute(
        "UPDATE tenants SET on_unverified_evidence = %(policy)s"
        " WHERE tenant_id = %(tenant_id)s RETURNING tenant_id",
        {"tenant_id": tenant_id, "policy": policy},
    ).fetchone()
    if row is None:
        raise NotFound(f"tenant {tenant_id!r} does not exist", field="tenant_id")


def read_unverified_evidence(
    conn: psycopg.Connection[Any], tenant_id: str
) -> UnverifiedEvidencePolicy:
    """The tenant's default for unverified evidence; NotFound for no such tenant."""
    row = conn.execute(
        "SELECT on_unverified_evidence FROM tenants WHERE tenant_id = %(tenant_id)s",
        {"tenant_id": tenant_id},
    ).fetchone()
    if row is None:
        raise NotFound(f"tenant {tenant_id!r} does not exist", field="tenant_id")
    return "refuse" if row[0] == "refuse" else "accept"


def ask_unverified_evidence(
    conn: psycopg.Connection[Any], tenant_id: str
) -> Callable[[], UnverifiedEvidencePolicy]:
    """The tenant's default for unverified evidence: asked now, read when called (pipelined
    with the statements sent beside it); ``accept`` for a tenant that does not exist."""
    cur = conn.cursor()
    cur.execute(
        "SELECT on_unverified_evidence FROM tenants WHERE tenant_id = %(tenant_id)s",
        {"tenant_id": tenant_id},
    )

    def policy() -> UnverifiedEvidencePolicy:
        with cur:
            row = cur.fetchone()
        return "refuse" if row is not None and row[0] == "refuse" else "accept"

    return policy


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
    """Name the tenant of the transaction block under way (none: ``None``), until it ends.

    Row-level security shows the pooled role that tenant's rows only. A call that learns its
    tenant inside the transaction (a key's revocation) names it again once known.

    ``SET LOCAL`` rather than ``set_config``: on a Citus cluster the coordinator passes a
    transaction's ``SET LOCAL`` commands on to the workers that run its statements (with
    ``citus.propagate_set_commands = 'local'``, which every connection sets, see
    ``store.db.database``), so the shards' policies see the tenant too; a function call's
    setting would stay on the coordinator. It must run inside a transaction block.
    """
    conn.execute(*tenant_statement(tenant_id, block=True))


def tenant_statement(
    tenant_id: str | None, *, block: bool
) -> tuple[sql.SQL | sql.Composed, tuple[str, ...] | None]:
    """The statement that names the tenant, and its parameters.

    In a transaction block (``block``): ``SET LOCAL`` (``enter_tenant``). For the one
    statement of an autocommit pipeline on a single node (``Transactions.read``), whose
    implicit transaction is no block: ``set_config(..., true)``, which lasts as long, where
    ``SET LOCAL`` would hold too but warn on every read. Citus passes only the first to its
    workers, so a read on a cluster goes in a block.
    """
    if block:
        # No parameters: the name is a literal, and a '%' in it is no placeholder.
        return _ENTER.format(sql.Literal(tenant_id or "")), None
    return _SET_CONFIG, (tenant_id or "",)


def begin_snapshot(tenant_id: str | None) -> sql.Composed:
    """BEGIN a REPEATABLE READ block and name its tenant (``enter_tenant``), as one simple
    query: a snapshot's first round trip does both. Not to be prepared (two statements)."""
    return _BEGIN_SNAPSHOT.format(sql.Literal(tenant_id or ""))


_ENTER = sql.SQL("SET LOCAL sgam.tenant_id = {}")
_BEGIN_SNAPSHOT = sql.SQL("BEGIN ISOLATION LEVEL REPEATABLE READ; SET LOCAL sgam.tenant_id = {}")
_SET_CONFIG = sql.SQL("SELECT set_config('sgam.tenant_id', %s, true)")
