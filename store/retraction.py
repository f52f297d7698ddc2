"""Retraction: a fact that was never true (a bad extraction) is withdrawn from knowledge.

Its versions are retired (history keeps them), the neighbours it closed get their windows
back, and an incumbent it replaced at the same start returns.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
from psycopg.rows import class_row

from store import versions
from store.clock import Clock
from store.errors import NotFound
from store.locks import lock_key
from store.models import RetractResult
from store.temporal import Version, plan_retract
from store.versions import COLUMNS, IdFactory, VersionRow


def retract(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    subject: str,
    attribute: str,
    fact_id: UUID | None = None,
    valid_from: datetime | None = None,
    clock: Clock,
    new_id: IdFactory,
) -> RetractResult:
    """Withdraw the fact named by ``fact_id``, or the one whose current version starts at
    ``valid_from``; an already withdrawn or replaced fact is ``unchanged``."""
    key = {"tenant_id": tenant_id, "subject": subject, "attribute": attribute}
    lock_key(conn, **key)
    now = clock()
    versions.require_forward_time(conn, now=now, **key)
    current = versions.load_current(conn, **key)
    fact_id = _target(conn, current, fact_id=fact_id, valid_from=valid_from, **key)
    return retract_current(conn, fact_id=fact_id, now=now, new_id=new_id, **key)


def retract_current(
    conn: psycopg.Connection[Any],
    *,
    tenant_id: str,
    subject: str,
    attribute: str,
    fact_id: UUID,
    now: datetime,
    new_id: IdFactory,
) -> RetractResult:
    """Retract in a transaction that already holds the key's lock."""
    key = {"tenant_id": tenant_id, "subject": subject, "attribute": attribute}
    current = versions.load_current(conn, **key)
    target = next((row for row in current if row.fact_id == fact_id), None)
    if target is None:
        return RetractResult(status="unchanged", fact_id=fact_id)
    restored = _replaced_incumbent(conn, target, **key)
    plan = plan_retract([row.as_version() for row in current], fact_id=fact_id, restored=restored)
    versions.apply_plan(conn, plan, current=current, now=now, new_id=new_id, **key)
    return RetractResult(
        status="retracted",
        fact_id=fact_id,
        restored_fact_id=restored.fact_id if restored else None,
    )


def _target(
    conn: psycopg.Connection[Any],
    current: list[VersionRow],
    *,
    fact_id: UUID | None,
    valid_from: datetime | None,
    tenant_id: str,
    subject: str,
    attribute: str,
) -> UUID:
    if valid_from is not None:
        starting = next((row for row in current if row.valid_from == valid_from), None)
        if starting is None:
            raise NotFound(
                f"no fact of {subject}.{attribute} starts at that instant", field="valid_from"
            )
        return starting.fact_id
    assert fact_id is not None
    known = conn.execute(
        "SELECT 1 FROM fact_versions WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s"
        " AND attribute = %(attribute)s AND fact_id = %(fact_id)s LIMIT 1",
        {"tenant_id": tenant_id, "subject": subject, "attribute": attribute, "fact_id": fact_id},
    ).fetchone()
    if known is None:
        raise NotFound(f"fact {fact_id} of {subject}.{attribute} does not exist", field="fact_id")
    return fact_id


def _replaced_incumbent(
    conn: psycopg.Connection[Any],
    target: VersionRow,
    *,
    tenant_id: str,
    subject: str,
    attribute: str,
) -> Version | None:
    """The incumbent ``target`` replaced at the same start, if it is to come back.

    That is the fact ``target`` supersedes when it has no current version and its last
    version started where ``target`` starts (a rule-2 predecessor keeps a current version).
    """
    if target.supersedes is None:
        return None
    with conn.cursor(row_factory=class_row(VersionRow)) as cur:
        cur.execute(
            "SELECT"
            + COLUMNS
            + """
            FROM fact_versions
            WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s
              AND attribute = %(attribute)s AND fact_id = %(fact_id)s
            ORDER BY retired_at DESC NULLS FIRST, recorded_at DESC
            """,
            {
                "tenant_id": tenant_id,
                "subject": subject,
                "attribute": attribute,
                "fact_id": target.supersedes,
            },
        )
        rows = cur.fetchall()
    if not rows or any(row.retired_at is None for row in rows):
        return None
    last = rows[0]
    return last.as_version() if last.valid_from == target.valid_from else None
