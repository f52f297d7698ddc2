"""Legal holds: a subject held keeps everything linked to it until the hold is released.

The purge skips a held subject's facts, weak signals and receipts and every episode linked to
it; erasing the subject, or an episode linked to it, is refused (``legal_hold``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import class_row

from store.contract.governance import Hold
from store.errors import LegalHold, NotFound


def place_hold(
    conn: psycopg.Connection[Any], tenant_id: str, subject: str, *, now: datetime
) -> Hold:
    """Hold ``subject`` (idempotent: a held subject keeps its first ``placed_at``)."""
    params = {"tenant_id": tenant_id, "subject": subject, "now": now}
    conn.execute(
        "INSERT INTO legal_holds (tenant_id, subject, placed_at)"
        " VALUES (%(tenant_id)s, %(subject)s, %(now)s) ON CONFLICT DO NOTHING",
        params,
    )
    with conn.cursor(row_factory=class_row(Hold)) as cur:
        cur.execute(
            "SELECT subject, placed_at FROM legal_holds"
            " WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s",
            params,
        )
        row = cur.fetchone()
    assert row is not None  # inserted or already there, in this transaction
    return row


def release_hold(conn: psycopg.Connection[Any], tenant_id: str, subject: str) -> Hold:
    """Release the hold on ``subject``; NotFound when it holds none."""
    with conn.cursor(row_factory=class_row(Hold)) as cur:
        cur.execute(
            "DELETE FROM legal_holds WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s"
            " RETURNING subject, placed_at",
            {"tenant_id": tenant_id, "subject": subject},
        )
        row = cur.fetchone()
    if row is None:
        raise NotFound(f"subject {subject!r} is not under legal hold", field="subject")
    return row.model_copy(update={"status": "released"})


def held_subjects(conn: psycopg.Connection[Any], tenant_id: str) -> list[str]:
    """Every subject the tenant holds, by name; taken ``FOR SHARE`` so none is released
    while the caller's transaction relies on it."""
    return [
        row[0]
        for row in conn.execute(
            "SELECT subject FROM legal_holds WHERE tenant_id = %(tenant_id)s"
            " ORDER BY subject FOR SHARE",
            {"tenant_id": tenant_id},
        )
    ]


def refuse_if_held(conn: psycopg.Connection[Any], tenant_id: str, subject: str) -> None:
    """Refuse to erase a held subject (``legal_hold``, field ``subject``)."""
    found = conn.execute(
        "SELECT FROM legal_holds WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s"
        " FOR SHARE",
        {"tenant_id": tenant_id, "subject": subject},
    ).fetchone()
    if found is not None:
        raise LegalHold(f"subject {subject!r} is under legal hold", field="subject")


_EPISODE_HELD = """
SELECT h.subject FROM legal_holds AS h
WHERE h.tenant_id = %(tenant_id)s
  AND (EXISTS (SELECT FROM episode_subjects AS s
               WHERE s.tenant_id = h.tenant_id AND s.episode_id = %(episode_id)s
                 AND s.subject = h.subject)
       OR EXISTS (SELECT FROM fact_versions AS v
                  WHERE v.tenant_id = h.tenant_id AND v.source_episode_id = %(episode_id)s
                    AND v.subject = h.subject)
       OR EXISTS (SELECT FROM conflicts AS c
                  WHERE c.tenant_id = h.tenant_id AND c.source_episode_id = %(episode_id)s
                    AND c.subject = h.subject))
ORDER BY h.subject LIMIT 1 FOR SHARE OF h
"""


def refuse_if_episode_held(conn: psycopg.Connection[Any], tenant_id: str, episode_id: str) -> None:
    """Refuse to erase an episode linked to a held subject (``legal_hold``, ``episode_id``)."""
    found = conn.execute(_EPISODE_HELD, {"tenant_id": tenant_id, "episode_id": episode_id})
    row = found.fetchone()
    if row is not None:
        raise LegalHold(
            f"episode {episode_id!r} concerns subject {row[0]!r}, which is under legal hold",
            field="episode_id",
        )
