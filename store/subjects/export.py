"""Subjects: the tenant's subject ids, paged, and everything held about one, exported.

A subject exists for a tenant while it has a fact version or an episode names it; both
queries filter on the tenant, so a subject another tenant holds is simply not there.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import psycopg

from store.contract.results import SubjectExport
from store.db.paging import check_limit, decode_text_cursor, encode_text_cursor
from store.episodes import record as episodes
from store.episodes.outcomes import outcome_history
from store.errors import NotFound
from store.facts import conflicts, reads
from store.facts.weak_signals import subject_signals
from store.subjects import names as subject_names
from store.subjects.overview import MATCHED, match_params

# Byte order ("C"), not the database's locale: the same pages on every server, and the
# cursor's comparison agrees with the sort.
_SUBJECTS = (
    "SELECT subject FROM ("
    + MATCHED
    + """) AS listed
WHERE (%(after)s::text IS NULL OR subject COLLATE "C" > %(after)s::text COLLATE "C")
ORDER BY subject COLLATE "C"
LIMIT %(limit)s
"""
)


def list_subjects(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    limit: int,
    cursor: str | None,
    match: str | None = None,
) -> tuple[list[str], str | None]:
    """A page of the tenant's subject ids ``match`` finds (``store.subjects.overview``; None:
    all) in byte order, and the cursor of the next page."""
    rows = conn.execute(
        _SUBJECTS,
        {
            "tenant_id": tenant_id,
            **match_params(match),
            "after": decode_text_cursor(cursor) if cursor else None,
            "limit": check_limit(limit) + 1,
        },
    ).fetchall()
    page = [str(row[0]) for row in rows[:limit]]
    next_cursor = encode_text_cursor(page[-1]) if len(rows) > limit else None
    return page, next_cursor


def export_subject(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    subject: str,
    *,
    now: datetime,
    merged: Sequence[str] = (),
) -> SubjectExport:
    """Everything the tenant holds about ``subject`` as of ``now``; NotFound if nothing.

    ``merged`` are the ids merged into it: the versions and conflicts they kept (of keys both
    held) are part of the export too.
    """
    versions = [
        version
        for one in (subject, *merged)
        for version in reads.read_history(conn, tenant_id, subject=one, now=now)
    ]
    linked = episodes.subject_episodes(conn, tenant_id, subject)
    names = subject_names.read_names(conn, tenant_id, subject)
    if not versions and not linked and not names.named():
        raise NotFound(f"subject {subject!r} is not known", field="subject")
    facts = reads.read_profile(
        conn, tenant_id, subject=subject, valid_at=now, known_at=now, now=now
    )
    return SubjectExport(
        subject=subject,
        exported_at=now,
        facts=facts,
        versions=versions,
        episodes=linked,
        conflicts=[
            conflict
            for one in (subject, *merged)
            for conflict in conflicts.subject_conflicts(conn, tenant_id, subject=one)
        ],
        outcomes=outcome_history(conn, tenant_id, (episode.id for episode in linked)),
        weak_signals=subject_signals(conn, tenant_id, subject),
        names=names,
    )
