"""Equal-start conflicts: logged, listed, and shown on reads when they dispute a key.

A challenger lives only here until it is chosen (``store.facts.resolution``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal
from uuid import UUID

import psycopg
from psycopg.rows import dict_row

from store.contract.facts import Challenger, ConflictRecord, Fact
from store.contract.values import canonical
from store.db.paging import check_limit, decode_cursor, encode_cursor
from store.errors import NotFound
from store.facts.temporal import Version
from store.facts.versions import IdFactory

_COLUMNS = """
    conflict_id, subject, attribute, valid_from, policy, disputed, incumbent_fact_id,
    value, source_episode_id, source_kind, evidence, evidence_verified,
    status, created_at, resolved_at, resolution, resolved_fact_id
"""


def _select(
    conn: psycopg.Connection[Any], condition: str, params: dict[str, Any], *, tail: str = ""
) -> list[dict[str, Any]]:
    """The tenant's conflict rows meeting ``condition`` (SQL from this module), oldest first."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT"
            + _COLUMNS
            + "FROM conflicts WHERE tenant_id = %(tenant_id)s AND "
            + condition
            + " ORDER BY created_at, conflict_id "
            + tail,
            params,
        )
        return cur.fetchall()


def _record(row: dict[str, Any]) -> ConflictRecord:
    """A conflict row: its challenger's columns carry the names ``challenger`` shows."""
    return ConflictRecord.model_validate({**row, "challenger": Challenger.model_validate(row)})


def log_conflict(
    conn: psycopg.Connection[Any],
    *,
    tenant_id: str,
    subject: str,
    attribute: str,
    new: Version,
    incumbent: Version,
    policy: str,
    disputed: bool,
    now: datetime,
    new_id: IdFactory,
) -> UUID:
    """Record an equal-start disagreement once (a repeated candidate finds the open one)."""
    params = {
        "tenant_id": tenant_id,
        "subject": subject,
        "attribute": attribute,
        "valid_from": new.valid_from,
        "value": canonical(new.value),
        "source_episode_id": new.source_episode_id,
    }
    existing = conn.execute(
        """
        SELECT conflict_id FROM conflicts
        WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s AND attribute = %(attribute)s
          AND valid_from = %(valid_from)s AND status = 'open'
          AND value = %(value)s::jsonb
          AND source_episode_id = %(source_episode_id)s
        """,
        params,
    ).fetchone()
    if existing is not None:
        found: UUID = existing[0]
        return found
    conflict_id = new_id()
    conn.execute(
        """
        INSERT INTO conflicts (
            tenant_id, conflict_id, subject, attribute, valid_from, policy, disputed,
            incumbent_fact_id, value, source_episode_id, source_kind,
            evidence, evidence_verified, created_at
        ) VALUES (
            %(tenant_id)s, %(conflict_id)s, %(subject)s, %(attribute)s, %(valid_from)s,
            %(policy)s, %(disputed)s, %(incumbent_fact_id)s, %(value)s::jsonb,
            %(source_episode_id)s, %(source_kind)s, %(evidence)s,
            %(evidence_verified)s, %(now)s
        )
        """,
        {
            **params,
            "conflict_id": conflict_id,
            "policy": policy,
            "disputed": disputed,
            "incumbent_fact_id": incumbent.fact_id,
            "source_kind": new.source_kind,
            "evidence": new.evidence,
            "evidence_verified": new.evidence_verified,
            "now": now,
        },
    )
    return conflict_id


def follow_replacement(
    conn: psycopg.Connection[Any],
    *,
    tenant_id: str,
    subject: str,
    attribute: str,
    valid_from: datetime,
    replaced: UUID,
    by: UUID,
) -> None:
    """Point the open conflicts against a replaced incumbent at its successor at that start."""
    conn.execute(
        """
        UPDATE conflicts SET incumbent_fact_id = %(by)s
        WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s AND attribute = %(attribute)s
          AND valid_from = %(valid_from)s AND status = 'open'
          AND incumbent_fact_id = %(replaced)s
        """,
        {
            "tenant_id": tenant_id,
            "subject": subject,
            "attribute": attribute,
            "valid_from": valid_from,
            "replaced": replaced,
            "by": by,
        },
    )


def get_conflict(
    conn: psycopg.Connection[Any], tenant_id: str, conflict_id: UUID
) -> ConflictRecord:
    """One conflict of the tenant; NotFound otherwise."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT" + _COLUMNS + "FROM conflicts"
            " WHERE tenant_id = %(tenant_id)s AND conflict_id = %(conflict_id)s",
            {"tenant_id": tenant_id, "conflict_id": conflict_id},
        )
        row = cur.fetchone()
    if row is None:
        raise NotFound(f"conflict {conflict_id} does not exist", field="conflict_id")
    return _record(row)


def list_conflicts(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    status: Literal["open", "resolved"] | None,
    subject: str | None,
    attribute: str | None,
    valid_from: datetime | None = None,
    limit: int,
    cursor: str | None,
) -> tuple[list[ConflictRecord], str | None]:
    """A page of the tenant's conflicts, oldest first, and the cursor of the next page."""
    after = decode_cursor(cursor) if cursor else None
    rows = _select(
        conn,
        """(%(status)s::text IS NULL OR status = %(status)s)
          AND (%(subject)s::text IS NULL OR subject = %(subject)s)
          AND (%(attribute)s::text IS NULL OR attribute = %(attribute)s)
          AND (%(valid_from)s::timestamptz IS NULL OR valid_from = %(valid_from)s)
          AND (%(after_at)s::timestamptz IS NULL
               OR (created_at, conflict_id) > (%(after_at)s, %(after_id)s::uuid))""",
        {
            "tenant_id": tenant_id,
            "status": status,
            "subject": subject,
            "attribute": attribute,
            "valid_from": valid_from,
            "after_at": after[0] if after else None,
            "after_id": after[1] if after else None,
            "limit": check_limit(limit) + 1,
        },
        tail="LIMIT %(limit)s",
    )
    page = [_record(row) for row in rows[:limit]]
    more = len(rows) > limit
    next_cursor = (
        encode_cursor([page[-1].created_at.isoformat(), str(page[-1].conflict_id)])
        if more
        else None
    )
    return page, next_cursor


def subject_conflicts(
    conn: psycopg.Connection[Any], tenant_id: str, *, subject: str
) -> list[ConflictRecord]:
    """Every conflict ever logged on the subject's keys, open or resolved, oldest first."""
    rows = _select(conn, "subject = %(subject)s", {"tenant_id": tenant_id, "subject": subject})
    return [_record(row) for row in rows]


def with_disputes(
    conn: psycopg.Connection[Any], tenant_id: str, facts: Sequence[Fact], *, known_at: datetime
) -> list[Fact]:
    """Mark facts a dispute open at ``known_at`` challenges: ``disputed``, challengers cited."""
    if not facts:
        return []
    rows = _select(
        conn,
        """disputed AND created_at <= %(known_at)s
          AND (resolved_at IS NULL OR resolved_at > %(known_at)s)
          AND incumbent_fact_id = ANY(%(fact_ids)s)""",
        {
            "tenant_id": tenant_id,
            "fact_ids": list({fact.fact_id for fact in facts}),
            "known_at": known_at,
        },
    )
    return mark_disputes(facts, [_record(row) for row in rows], known_at=known_at)


def mark_disputes(
    facts: Sequence[Fact], conflicts: Sequence[ConflictRecord], *, known_at: datetime
) -> list[Fact]:
    """``facts`` with the disputes among ``conflicts`` open at ``known_at`` marked on them."""
    challengers: dict[UUID, list[Challenger]] = {}
    for conflict in conflicts:
        if (
            conflict.disputed
            and conflict.created_at <= known_at
            and (conflict.resolved_at is None or conflict.resolved_at > known_at)
        ):
            challengers.setdefault(conflict.incumbent_fact_id, []).append(conflict.challenger)
    return [
        fact.model_copy(update={"disputed": True, "challengers": challengers[fact.fact_id]})
        if fact.fact_id in challengers
        else fact
        for fact in facts
    ]
