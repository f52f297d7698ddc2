"""Legal holds: a subject held keeps everything linked to it until the hold is released.

The purge skips a held subject's facts, weak signals and receipts and every episode linked to
it (``store.episodes.record.LINKED_TO_SUBJECTS``, the same rule export and erasure follow);
erasing the subject, an episode linked to it, or another subject one of whose episodes is
linked to it, is refused (``legal_hold``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import class_row

from store.contract.governance import Hold
from store.episodes.record import LINKED_TO_SUBJECTS
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


_HELD_EPISODE = (
    "SELECT e.id FROM episodes AS e"
    " WHERE e.tenant_id = %(tenant_id)s AND e.id = ANY(%(episode_ids)s) AND"
    + LINKED_TO_SUBJECTS
    + "ORDER BY e.id LIMIT 1"
)


def refuse_held_episodes(
    conn: psycopg.Connection[Any], tenant_id: str, episode_ids: list[str], *, field: str
) -> None:
    """Refuse (``legal_hold``, ``field``) when any of ``episode_ids`` is linked to a held
    subject (``LINKED_TO_SUBJECTS``, the rule the purge keeps them by), naming one such pair.

    The holds are taken ``FOR SHARE``: none is released before the caller's commit.
    """
    held = held_subjects(conn, tenant_id)
    params: dict[str, Any] = {"tenant_id": tenant_id, "episode_ids": episode_ids}
    if not held or conn.execute(_HELD_EPISODE, params | {"subjects": held}).fetchone() is None:
        return
    for subject in held:  # which one, to say so: a refusal's path only
        found = conn.execute(_HELD_EPISODE, params | {"subjects": [subject]}).fetchone()
        if found is not None:
            raise LegalHold(
                f"episode {found[0]!r} concerns subject {subject!r}, which is under legal hold",
                field=field,
            )
