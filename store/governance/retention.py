"""Retention classes: how long what an episode or an attribute's facts hold is kept.

Every tenant has four classes without declaring them (``DEFAULT_CLASSES``); a tenant may
declare more, or override one of the four, under the same name. A class keeps for
``keep_days`` (None: for ever), counted from an episode's ``recorded_at``, or, when it counts
from ``session_end``, from the ``recorded_at`` of the last episode of the same session (an
episode without a session counts from its own). A fact version's age always counts from the
end of its windows (store/governance/purge.py), whatever its class counts from for episodes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import class_row

from store.contract.governance import DEFAULT_CLASSES, RetentionClass, RetentionClassDeclaration
from store.errors import InvalidInput

_COLUMNS = "name, keep_days, counts_from, declared_at, updated_at"


def list_classes(conn: psycopg.Connection[Any], tenant_id: str) -> list[RetentionClass]:
    """The tenant's classes by name: the defaults, each replaced by its declaration if any."""
    with conn.cursor(row_factory=class_row(RetentionClass)) as cur:
        cur.execute(
            "SELECT " + _COLUMNS + " FROM retention_classes WHERE tenant_id = %(tenant_id)s",
            {"tenant_id": tenant_id},
        )
        declared = {row.name: row for row in cur.fetchall()}
    merged = {**DEFAULT_CLASSES, **declared}
    return [merged[name] for name in sorted(merged)]


def declare_class(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    name: str,
    *,
    declaration: RetentionClassDeclaration,
    now: datetime,
) -> RetentionClass:
    """Declare a class, or redeclare one (a default included); the class as stored."""
    with conn.cursor(row_factory=class_row(RetentionClass)) as cur:
        cur.execute(
            """
            INSERT INTO retention_classes (
                tenant_id, name, keep_days, counts_from, declared_at, updated_at
            ) VALUES (
                %(tenant_id)s, %(name)s, %(keep_days)s, %(counts_from)s, %(now)s, %(now)s
            )
            ON CONFLICT (tenant_id, name) DO UPDATE
            SET keep_days = EXCLUDED.keep_days, counts_from = EXCLUDED.counts_from,
                updated_at = EXCLUDED.updated_at
            RETURNING """
            + _COLUMNS,
            {
                "tenant_id": tenant_id,
                "name": name,
                "keep_days": declaration.keep_days,
                "counts_from": declaration.counts_from,
                "now": now,
            },
        )
        row = cur.fetchone()
    assert row is not None  # an upsert returns its row
    return row


def require_class(conn: psycopg.Connection[Any], tenant_id: str, name: str, *, field: str) -> None:
    """Refuse (``invalid``, naming ``field``) a class the tenant has not declared.

    The four default classes always exist: only another name costs a query.
    """
    if name in DEFAULT_CLASSES:
        return
    found = conn.execute(
        "SELECT FROM retention_classes WHERE tenant_id = %(tenant_id)s AND name = %(name)s",
        {"tenant_id": tenant_id, "name": name},
    ).fetchone()
    if found is None:
        raise InvalidInput(
            f"retention class {name!r} is not declared (PUT /v1/retention-classes/{name})",
            field=field,
        )
