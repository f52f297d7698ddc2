"""Erasure: the one path that deletes. What goes leaves a content-free tombstone.

Erasing a subject deletes its fact versions, conflicts and expiries and every episode linked
to it. An episode another subject's fact still cites becomes a stub (id, kind, times, content
hash): the citation resolves, the content is gone. Evidence quoted from an erased episode is
cleared wherever it survives.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any, LiteralString

import psycopg

from store.locks import lock_keys
from store.models import ErasureResult
from store.versions import IdFactory

_LINKED_EPISODES = """
SELECT episode_id, content_hash FROM episodes
WHERE tenant_id = %(tenant_id)s AND erased_at IS NULL AND (
    %(subject)s = ANY(subjects)
    OR episode_id IN (SELECT source_episode_id FROM fact_versions
                      WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s)
    OR episode_id IN (SELECT source_episode_id FROM expiries
                      WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s)
    OR episode_id IN (SELECT challenger_episode_id FROM conflicts
                      WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s)
)
ORDER BY episode_id
"""

_STILL_CITED = """
SELECT DISTINCT episode_id FROM (
    SELECT source_episode_id AS episode_id FROM fact_versions WHERE tenant_id = %(tenant_id)s
    UNION ALL
    SELECT source_episode_id FROM expiries WHERE tenant_id = %(tenant_id)s
    UNION ALL
    SELECT challenger_episode_id FROM conflicts WHERE tenant_id = %(tenant_id)s
) AS cited
WHERE episode_id = ANY(%(episode_ids)s)
"""


def identifier_hash(value: str) -> str:
    """A one-way name for an erased id, so a tombstone can be matched without holding it."""
    return "sha256:" + hashlib.sha256(value.encode("utf-8")).hexdigest()


def _count(conn: psycopg.Connection[Any], query: LiteralString, params: dict[str, Any]) -> int:
    return conn.execute(query, params).rowcount


def erase_subject(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    subject: str,
    now: datetime,
    new_id: IdFactory,
) -> ErasureResult:
    """Physically remove everything held about ``subject``; record a tombstone."""
    attributes = [
        row[0]
        for row in conn.execute(
            "SELECT attribute FROM attributes WHERE tenant_id = %(tenant_id)s",
            {"tenant_id": tenant_id},
        )
    ]
    lock_keys(conn, tenant_id=tenant_id, subject=subject, attributes=attributes)
    params: dict[str, Any] = {"tenant_id": tenant_id, "subject": subject, "now": now}
    linked = conn.execute(_LINKED_EPISODES, params).fetchall()
    params["episode_ids"] = [episode_id for episode_id, _ in linked]

    by_subject = "WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s"
    fact_versions_deleted = _count(conn, "DELETE FROM fact_versions " + by_subject, params)
    conflicts_deleted = _count(conn, "DELETE FROM conflicts " + by_subject, params)
    expiries_deleted = _count(conn, "DELETE FROM expiries " + by_subject, params)

    cited = {row[0] for row in conn.execute(_STILL_CITED, params)}
    params["stubbed"] = sorted(cited)
    params["deleted"] = sorted(set(params["episode_ids"]) - cited)
    # Quotes of erased text held by other subjects' rows go with the text.
    conn.execute(
        "UPDATE fact_versions SET evidence = NULL"
        " WHERE tenant_id = %(tenant_id)s AND source_episode_id = ANY(%(episode_ids)s)",
        params,
    )
    conn.execute(
        "UPDATE conflicts SET evidence = NULL"
        " WHERE tenant_id = %(tenant_id)s AND challenger_episode_id = ANY(%(episode_ids)s)",
        params,
    )
    episodes_stubbed = _count(
        conn,
        """
        UPDATE episodes SET text = NULL, subjects = '{}', session_id = NULL, metadata = '{}',
                            erased_at = %(now)s
        WHERE tenant_id = %(tenant_id)s AND episode_id = ANY(%(stubbed)s)
        """,
        params,
    )
    episodes_deleted = _count(
        conn,
        "DELETE FROM episodes WHERE tenant_id = %(tenant_id)s AND episode_id = ANY(%(deleted)s)",
        params,
    )
    # Other episodes may still list the subject among those they concern: forget the link.
    conn.execute(
        """
        UPDATE episodes SET subjects = array_remove(subjects, %(subject)s)
        WHERE tenant_id = %(tenant_id)s AND %(subject)s = ANY(subjects)
        """,
        params,
    )
    tombstone_id = new_id()
    conn.execute(
        """
        INSERT INTO tombstones (
            tenant_id, tombstone_id, target, target_hash, erased_at, episodes_deleted,
            episodes_stubbed, fact_versions_deleted, conflicts_deleted, expiries_deleted,
            episode_hashes
        ) VALUES (
            %(tenant_id)s, %(tombstone_id)s, 'subject', %(target_hash)s, %(now)s,
            %(episodes_deleted)s, %(episodes_stubbed)s, %(fact_versions_deleted)s,
            %(conflicts_deleted)s, %(expiries_deleted)s, %(episode_hashes)s
        )
        """,
        {
            **params,
            "tombstone_id": tombstone_id,
            "target_hash": identifier_hash(subject),
            "episodes_deleted": episodes_deleted,
            "episodes_stubbed": episodes_stubbed,
            "fact_versions_deleted": fact_versions_deleted,
            "conflicts_deleted": conflicts_deleted,
            "expiries_deleted": expiries_deleted,
            "episode_hashes": sorted(content_hash for _, content_hash in linked),
        },
    )
    return ErasureResult(
        tombstone_id=tombstone_id,
        episodes_deleted=episodes_deleted,
        episodes_stubbed=episodes_stubbed,
        fact_versions_deleted=fact_versions_deleted,
        conflicts_deleted=conflicts_deleted,
        expiries_deleted=expiries_deleted,
    )
