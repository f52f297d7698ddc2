"""Rows of ``fact_versions``: loading a key, retiring and inserting versions, shaping facts."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from store.errors import InvalidInput
from store.models import Fact, FactStatus
from store.temporal import EndedByKind, Plan, Version
from store.values import JsonValue

IdFactory = Callable[[], UUID]

COLUMNS = """
    version_id, fact_id, subject, attribute, value, valid_from, valid_to, recorded_at,
    retired_at, supersedes, ended_by, ended_by_kind, source_episode_id, source_kind, evidence,
    evidence_verified, schema_version
"""


@dataclass(frozen=True, slots=True)
class VersionRow:
    """A stored version with both windows, as read from the table."""

    version_id: UUID
    fact_id: UUID
    subject: str
    attribute: str
    value: JsonValue
    valid_from: datetime
    valid_to: datetime | None
    recorded_at: datetime
    retired_at: datetime | None
    supersedes: UUID | None
    ended_by: UUID | None
    ended_by_kind: EndedByKind | None
    source_episode_id: str
    source_kind: str
    evidence: str | None
    evidence_verified: bool
    schema_version: int

    def as_version(self) -> Version:
        """The row as the temporal rules see it (valid window and provenance)."""
        return Version(
            fact_id=self.fact_id,
            value=self.value,
            valid_from=self.valid_from,
            valid_to=self.valid_to,
            source_episode_id=self.source_episode_id,
            source_kind=self.source_kind,
            evidence=self.evidence,
            evidence_verified=self.evidence_verified,
            schema_version=self.schema_version,
            supersedes=self.supersedes,
            ended_by=self.ended_by,
            ended_by_kind=self.ended_by_kind,
            version_id=self.version_id,
        )


def fact_status(row: VersionRow, now: datetime) -> FactStatus:
    """Where a version stands relative to ``now``: retired, future, past or current."""
    if row.retired_at is not None and row.retired_at <= now:
        return "retired"
    if row.valid_from > now:
        return "future"
    if row.valid_to is not None and row.valid_to <= now:
        return "past"
    return "current"


def to_fact(row: VersionRow, now: datetime) -> Fact:
    """The JSON-facing fact for a stored version, its status taken at ``now``."""
    return Fact(
        fact_id=row.fact_id,
        version_id=row.version_id,
        subject=row.subject,
        attribute=row.attribute,
        value=row.value,
        valid_from=row.valid_from,
        valid_to=row.valid_to,
        recorded_at=row.recorded_at,
        retired_at=row.retired_at,
        supersedes=row.supersedes,
        ended_by=row.ended_by,
        ended_by_kind=row.ended_by_kind,
        source_episode_id=row.source_episode_id,
        source_kind=row.source_kind,
        evidence=row.evidence,
        evidence_verified=row.evidence_verified,
        schema_version=row.schema_version,
        status=fact_status(row, now),
    )


def load_current(
    conn: psycopg.Connection[Any], *, tenant_id: str, subject: str, attribute: str
) -> list[VersionRow]:
    """The key's versions in current knowledge, by valid_from."""
    with conn.cursor(row_factory=class_row(VersionRow)) as cur:
        cur.execute(
            "SELECT"
            + COLUMNS
            + """
            FROM fact_versions
            WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s
              AND attribute = %(attribute)s AND retired_at IS NULL
            ORDER BY valid_from
            """,
            {"tenant_id": tenant_id, "subject": subject, "attribute": attribute},
        )
        return cur.fetchall()


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
) -> list[VersionRow]:
    """Insert ``versions`` as known from ``recorded_at``, each under a fresh version_id."""
    inserted = []
    with conn.cursor(row_factory=class_row(VersionRow)) as cur:
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


def require_forward_time(
    conn: psycopg.Connection[Any],
    *,
    tenant_id: str,
    subject: str,
    attribute: str,
    now: datetime,
) -> None:
    """Refuse a write whose system time is before the key's last change."""
    last = last_system_time(conn, tenant_id=tenant_id, subject=subject, attribute=attribute)
    if last is not None and now < last:
        raise InvalidInput(
            f"system time {now.isoformat()} is before this key's last change"
            f" ({last.isoformat()}); writes may not go back in system time",
            field="now",
        )


def apply_plan(
    conn: psycopg.Connection[Any],
    plan: Plan,
    *,
    current: list[VersionRow],
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
    shown = plan.subject_version
    if shown is None:
        return None
    for planned, row in zip(plan.insert, inserted, strict=True):
        if planned is shown:
            return to_fact(row, now)
    return next(
        (to_fact(row, now) for row in current if row.version_id == shown.version_id),
        None,
    )
