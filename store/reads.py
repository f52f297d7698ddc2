"""Exact reads: a key (or a subject's keys) filtered by tenant, valid time and known time.

Knowledge at S is every version with ``recorded_at <= S < retired_at``; a read returns the one
version of each key valid at ``valid_at`` in knowledge at ``known_at``. The exclusion
constraint guarantees there is at most one.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import class_row

from store.conflicts import with_disputes
from store.errors import NotFound
from store.models import Fact
from store.versions import COLUMNS, VersionRow, to_fact

_KNOWN_AND_VALID = """
  AND recorded_at <= %(known_at)s AND (retired_at IS NULL OR retired_at > %(known_at)s)
  AND valid_from <= %(valid_at)s AND (valid_to IS NULL OR valid_to > %(valid_at)s)
"""
# Recorded and retired at one instant: never believed, never shown.
_BELIEVED = """
  AND (retired_at IS NULL OR retired_at > recorded_at)
"""


def read_at(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    subject: str,
    attribute: str,
    valid_at: datetime,
    known_at: datetime,
    now: datetime,
) -> Fact:
    """The fact valid at ``valid_at`` as known at ``known_at``; NotFound means "not known"."""
    with conn.cursor(row_factory=class_row(VersionRow)) as cur:
        cur.execute(
            "SELECT"
            + COLUMNS
            + """
            FROM fact_versions
            WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s
              AND attribute = %(attribute)s"""
            + _KNOWN_AND_VALID,
            {
                "tenant_id": tenant_id,
                "subject": subject,
                "attribute": attribute,
                "valid_at": valid_at,
                "known_at": known_at,
            },
        )
        row = cur.fetchone()
    if row is None:
        raise NotFound(f"{subject}.{attribute} is not known at that time", field="attribute")
    [fact] = with_disputes(conn, tenant_id, [to_fact(row, now)], known_at=known_at)
    return fact


def read_profile(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    subject: str,
    valid_at: datetime,
    known_at: datetime,
    now: datetime,
) -> list[Fact]:
    """Every attribute of ``subject`` valid at ``valid_at`` as known at ``known_at``."""
    with conn.cursor(row_factory=class_row(VersionRow)) as cur:
        cur.execute(
            "SELECT"
            + COLUMNS
            + """
            FROM fact_versions
            WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s"""
            + _KNOWN_AND_VALID
            + " ORDER BY attribute",
            {
                "tenant_id": tenant_id,
                "subject": subject,
                "valid_at": valid_at,
                "known_at": known_at,
            },
        )
        rows = cur.fetchall()
    return with_disputes(conn, tenant_id, [to_fact(row, now) for row in rows], known_at=known_at)


def read_history(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    subject: str,
    attribute: str,
    now: datetime,
) -> list[Fact]:
    """Every version of the key ever believed, by valid_from then recorded_at."""
    with conn.cursor(row_factory=class_row(VersionRow)) as cur:
        cur.execute(
            "SELECT"
            + COLUMNS
            + """
            FROM fact_versions
            WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s
              AND attribute = %(attribute)s"""
            + _BELIEVED
            + " ORDER BY valid_from, recorded_at, version_id",
            {"tenant_id": tenant_id, "subject": subject, "attribute": attribute},
        )
        rows = cur.fetchall()
    return with_disputes(conn, tenant_id, [to_fact(row, now) for row in rows], known_at=now)


def read_subject_history(
    conn: psycopg.Connection[Any], tenant_id: str, *, subject: str, now: datetime
) -> list[Fact]:
    """Every version of every attribute of ``subject``: by attribute, then as ``read_history``."""
    with conn.cursor(row_factory=class_row(VersionRow)) as cur:
        cur.execute(
            "SELECT"
            + COLUMNS
            + """
            FROM fact_versions
            WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s"""
            + _BELIEVED
            + " ORDER BY attribute, valid_from, recorded_at, version_id",
            {"tenant_id": tenant_id, "subject": subject},
        )
        rows = cur.fetchall()
    return with_disputes(conn, tenant_id, [to_fact(row, now) for row in rows], known_at=now)


def find_subjects(conn: psycopg.Connection[Any], tenant_id: str, *, names: list[str]) -> list[str]:
    """Which of ``names`` (compared case-insensitively) are subjects the tenant holds facts on."""
    rows = conn.execute(
        """
        SELECT DISTINCT subject FROM fact_versions
        WHERE tenant_id = %(tenant_id)s AND lower(subject) = ANY(%(names)s)
        ORDER BY subject
        """,
        {"tenant_id": tenant_id, "names": [name.lower() for name in names]},
    ).fetchall()
    return [str(row[0]) for row in rows]
