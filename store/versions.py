"""Rows of ``fact_versions``: loading a key, retiring and inserting versions, shaping facts."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import fields
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from store.clock import Clock
from store.errors import InvalidInput
from store.locks import lock_key
from store.models import Fact
from store.temporal import Plan, Version

IdFactory = Callable[[], UUID]

COLUMNS = """
    version_id, fact_id, subject, attribute, value, valid_from, valid_to, recorded_at,
    retired_at, supersedes, ended_by, ended_by_kind, source_episode_id, source_kind, evidence,
    evidence_verified, schema_version,
    CASE
        WHEN retired_at IS NOT NULL AND retired_at <= %(now)s THEN 'retired'
        WHEN valid_from > %(now)s THEN 'future'
        WHEN valid_to IS NOT NULL AND valid_to <= %(now)s THEN 'past'
        ELSE 'current'
    END AS status
"""
"""A version's columns read as a ``Fact``; ``status`` is where it stands at ``%(now)s``."""


def select_facts(conn: psycopg.Connection[Any], query: str, params: dict[str, Any]) -> list[Fact]:
    """Rows of ``query`` (SQL of this package selecting ``COLUMNS``) as facts."""
    with conn.cursor(row_factory=class_row(Fact)) as cur:
        cur.execute(query.encode(), params)
        return cur.fetchall()


_VERSION_FIELDS = tuple(field.name for field in fields(Version))


def as_version(fact: Fact) -> Version:
    """A stored fact as the temporal rules see it: the fields a ``Version`` has, as stored."""
    return Version(**{name: getattr(fact, name) for name in _VERSION_FIELDS})


def load_current(
    conn: psycopg.Connection[Any],
    *,
    tenant_id: str,
    subject: str,
    attribute: str,
    now: datetime,
) -> list[Fact]:
    """The key's versions in current knowledge, by valid_from."""
    return select_facts(
        conn,
        "SELECT"
        + COLUMNS
        + """
        FROM fact_versions
        WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s
          AND attribute = %(attribute)s AND retired_at IS NULL
        ORDER BY valid_from
        """,
        {"tenant_id": tenant_id, "subject": subject, "attribute": attribute, "now": now},
    )


def last_system_time(
    conn: psycopg.Connection[Any], *, tenant_id: str, subject: str, attribute: str
) -> datetime | None:
    """The latest instant at which the key's knowledge changed (None for a new key)."""
    row = conn.execute(
        """
        SELECT max(greatest(recorded_at, retired_at))
        FROM fact_versions
        WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s AND attribute = %(attribute)s
        """,
        {"tenant_id": tenant_id, "subject": subject, "attribute": attribute},
    ).fetchone()
    return row[0] if row else None


def retire(
    conn: psycopg.Connection[Any], *, tenant_id: str, versions: Iterable[Version], at: datetime
) -> None:
    """End the system window of ``versions`` at ``at``: they stop being believed."""
    ids = [version.version_id for version in versions]
    if not ids:
        return
    conn.execute(
        """
        UPDATE fact_versions SET retired_at = %(at)s
        WHERE tenant_id = %(tenant_id)s AND version_id = ANY(%(ids)s) AND retired_at IS NULL
        """,
        {"tenant_id": tenant_id, "ids": ids, "at": at},
    )


_INSERT = (
    """
INSERT INTO fact_versions (
    tenant_id, version_id, fact_id, subject, attribute, value, valid_from, valid_to,
    recorded_at, supersedes, ended_by, ended_by_kind, source_episode_id, source_kind, evidence,
    evidence_verified, schema_version
) VALUES (
    %(tenant_id)s, %(version_id)s, %(fact_id)s, %(subject)s, %(attribute)s, %(value)s,
    %(valid_from)s, %(valid_to)s, %(recorded_at)s, %(supersedes)s, %(ended_by)s,
    %(ended_by_kind)s, %(source_episode_id)s, %(source_kind)s, %(evidence)s,
    %(evidence_verified)s, %(schema_version)s
)
RETURNING"""
    + COLUMNS
)


def insert(
    conn: psycopg.Connection[Any],
    *,
    tenant_id: str,
    subject: str,
    attribute: str,
    versions: Sequence[Version],
    recorded_at: datetime,
    new_id: IdFactory,
) -> list[Fact]:
    """Insert ``versions`` as known from ``recorded_at``, each under a fresh version_id."""
    inserted = []
    with conn.cursor(row_factory=class_row(Fact)) as cur:
        for version in versions:
            cur.execute(
                _INSERT,
                {
                    "tenant_id": tenant_id,
                    "version_id": new_id(),
                    "fact_id": version.fact_id,
                    "subject": subject,
                    "attribute": attribute,
                    "value": Jsonb(version.value),
                    "valid_from": version.valid_from,
                    "valid_to": version.valid_to,
                    "recorded_at": recorded_at,
                    "now": recorded_at,
                    "supersedes": version.supersedes,
                    "ended_by": version.ended_by,
                    "ended_by_kind": version.ended_by_kind,
                    "source_episode_id": version.source_episode_id,
                    "source_kind": version.source_kind,
                    "evidence": version.evidence,
                    "evidence_verified": version.evidence_verified,
                    "schema_version": version.schema_version,
                },
            )
            row = cur.fetchone()
            assert row is not None
            inserted.append(row)
    return inserted


def hold_key(
    conn: psycopg.Connection[Any], clock: Clock, *, tenant_id: str, subject: str, attribute: str
) -> datetime:
    """Lock the key, then read the write's system time: refused if before the key's last change.

    Read once the lock is held, system time orders the key's writers as they commit.
    """
    lock_key(conn, tenant_id=tenant_id, subject=subject, attribute=attribute)
    now = clock()
    last = last_system_time(conn, tenant_id=tenant_id, subject=subject, attribute=attribute)
    if last is not None and now < last:
        raise InvalidInput(
            f"system time {now.isoformat()} is before this key's last change"
            f" ({last.isoformat()}); writes may not go back in system time",
            field="now",
        )
    return now


def apply_plan(
    conn: psycopg.Connection[Any],
    plan: Plan,
    *,
    current: list[Fact],
    tenant_id: str,
    subject: str,
    attribute: str,
    now: datetime,
    new_id: IdFactory,
) -> Fact | None:
    """Retire and insert what the plan says; return the fact the caller should see."""
    retire(conn, tenant_id=tenant_id, versions=plan.retire, at=now)
    inserted = insert(
        conn,
        tenant_id=tenant_id,
        subject=subject,
        attribute=attribute,
        versions=plan.insert,
        recorded_at=now,
        new_id=new_id,
    )
    if plan.shown is None:
        return None
    for planned, fact in zip(plan.insert, inserted, strict=True):
        if planned is plan.shown:
            return fact
    return next((fact for fact in current if fact.version_id == plan.shown.version_id), None)
