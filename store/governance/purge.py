"""The retention purge of one tenant: what its classes no longer keep goes, in one transaction.

- A fact version goes once the end of its windows, the later of ``valid_to`` and
  ``retired_at`` (SQL's ``greatest``: an open end counts as absent), is older than its
  attribute's class keeps. A version with both ends open (believed and valid) never goes. A
  fact whose every version went is listed in ``purged_facts``, so the ``supersedes`` and
  ``ended_by`` that still name it resolve to "purged".
- An episode goes once older than its class keeps (store/governance/retention.py says from when):
  its text, embeddings, subjects, outcomes, weak signals and extraction job. One a remaining row
  still cites stays as a stub with ``purged_at`` (store/episodes/stubs.py); one deleted outright
  takes its receipts along.
- Receipts recorded, and finished (``done``) extraction jobs completed, before
  ``receipts_before`` go; so do weak signals past their window.
- Nothing linked to a subject under legal hold goes.

The purge leaves a content-free tombstone (target ``purge``) when it deleted anything.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import psycopg

from store.contract.governance import TenantPurge
from store.db.locks import lock_keys
from store.episodes.record import LINKED_TO_SUBJECTS, content_hash
from store.episodes.stubs import remove_episodes
from store.facts.versions import IdFactory
from store.governance import receipt_secrets, receipts
from store.governance.legal_holds import held_subjects
from store.governance.retention import list_classes
from store.governance.tombstones import write_purge_tombstone

_CLASSES = """
unnest(%(names)s::text[], %(cutoffs)s::timestamptz[], %(by_session)s::boolean[])
    AS c (name, cutoff, by_session)
"""

_EXPIRED_VERSIONS = (
    " FROM fact_versions AS v, attributes AS a, "
    + _CLASSES
    + """
WHERE v.tenant_id = %(tenant_id)s AND a.tenant_id = v.tenant_id AND a.attribute = v.attribute
  AND a.retention_class = c.name AND greatest(v.valid_to, v.retired_at) < c.cutoff
  AND v.subject <> ALL(%(held)s)
"""
)

_DELETE_VERSIONS = """
DELETE FROM fact_versions AS d
WHERE d.tenant_id = %(tenant_id)s AND d.version_id IN (SELECT v.version_id"""

# Each statement names the tenant in every subquery as well (Citus routes a statement to the
# tenant's worker, as one task, only so: docs/operations/citus-schema.md). The facts purged whole
# are listed from the tenant's row, so that the insert reads a table colocated with its own.
_RECORD_PURGED_FACTS = """
INSERT INTO purged_facts (tenant_id, fact_id, purged_at)
SELECT t.tenant_id, f.fact_id, %(now)s
FROM tenants AS t, unnest(%(fact_ids)s::uuid[]) AS f (fact_id)
WHERE t.tenant_id = %(tenant_id)s
  AND NOT EXISTS (SELECT FROM fact_versions AS v
                  WHERE v.tenant_id = %(tenant_id)s AND v.tenant_id = t.tenant_id
                    AND v.fact_id = f.fact_id)
ON CONFLICT DO NOTHING
"""

_FORGET_SOURCES = """
DELETE FROM fact_sources
WHERE tenant_id = %(tenant_id)s AND fact_id = ANY(%(fact_ids)s)
  AND NOT EXISTS (SELECT FROM fact_versions AS v
                  WHERE v.tenant_id = %(tenant_id)s AND v.tenant_id = fact_sources.tenant_id
                    AND v.fact_id = fact_sources.fact_id)
"""

_EXPIRED_EPISODES = (
    "SELECT e.id, e.content_hash FROM episodes AS e JOIN "
    + _CLASSES
    + """ ON c.name = e.retention_class
WHERE e.tenant_id = %(tenant_id)s AND e.text IS NOT NULL AND e.recorded_at < c.cutoff
  AND NOT (c.by_session AND e.session_id IS NOT NULL
           AND EXISTS (SELECT FROM episodes AS s
                       WHERE s.tenant_id = %(tenant_id)s AND s.tenant_id = e.tenant_id
                         AND s.session_id = e.session_id
                         AND s.recorded_at >= c.cutoff))
  AND NOT"""
    + LINKED_TO_SUBJECTS  # %(subjects)s: the held ones
    + """
ORDER BY e.id
"""
)

# The expired episodes are locked by a statement of the tenant's alone (Citus locks rows only
# in a statement it routes to one shard, which the join with the classes above is not), and
# what an erasure may have changed meanwhile is checked again once each row is held.
_LOCK_EPISODES = """
SELECT e.id, e.content_hash FROM episodes AS e
WHERE e.tenant_id = %(tenant_id)s AND e.id = ANY(%(expired)s::text[]) AND e.text IS NOT NULL
ORDER BY e.id
FOR UPDATE
"""

_DELETE_WEAK_SIGNALS = """
DELETE FROM weak_signals
WHERE tenant_id = %(tenant_id)s
  AND (episode_id = ANY(%(episode_ids)s)
       OR (expires_at <= %(now)s AND subject <> ALL(%(held)s)))
"""

_DELETE_JOBS = """
DELETE FROM extraction_jobs
WHERE tenant_id = %(tenant_id)s
  AND (episode_id = ANY(%(episode_ids)s)
       OR (status = 'done' AND finished_at < %(receipts_before)s))
"""


def purge_tenant(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    now: datetime,
    receipts_before: datetime,
    new_id: IdFactory,
) -> TenantPurge:
    """Delete what the tenant's retention no longer keeps; count it; leave a tombstone."""
    expiring = [c for c in list_classes(conn, tenant_id) if c.keep_days is not None]
    held = held_subjects(conn, tenant_id)
    params: dict[str, Any] = {
        "tenant_id": tenant_id,
        "now": now,
        "receipts_before": receipts_before,
        "held": held,
        "subjects": held,
        "names": [c.name for c in expiring],
        "cutoffs": [now - timedelta(days=c.keep_days or 0) for c in expiring],
        "by_session": [c.counts_from == "session_end" for c in expiring],
    }
    # Writers of the keys the purge touches wait for it (and it for them), as for any write.
    keys = conn.execute("SELECT DISTINCT v.subject, v.attribute" + _EXPIRED_VERSIONS, params)
    lock_keys(conn, tenant_id=tenant_id, keys=[(s, a) for s, a in keys.fetchall()])
    gone = conn.execute(
        _DELETE_VERSIONS + _EXPIRED_VERSIONS + ") RETURNING d.fact_id", params
    ).fetchall()
    params["fact_ids"] = sorted({row[0] for row in gone})
    facts_purged = conn.execute(_RECORD_PURGED_FACTS, params).rowcount
    conn.execute(_FORGET_SOURCES, params)  # of the facts purged whole

    params["expired"] = [row[0] for row in conn.execute(_EXPIRED_EPISODES, params).fetchall()]
    episodes = conn.execute(_LOCK_EPISODES, params).fetchall()
    params["episode_ids"] = [episode_id for episode_id, _ in episodes]
    # Counted before the episodes go: a stub's signals and job would go uncounted with them.
    weak_signals = conn.execute(_DELETE_WEAK_SIGNALS, params).rowcount
    jobs = conn.execute(_DELETE_JOBS, params).rowcount
    removed = remove_episodes(conn, tenant_id, params["episode_ids"], now=now, mark="purged_at")
    counts = TenantPurge(
        tenant_id=tenant_id,
        episodes_stubbed=removed["episodes_stubbed"],
        episodes_deleted=removed["episodes_deleted"],
        vectors_deleted=removed["vectors_deleted"],
        fact_versions_deleted=len(gone),
        facts_purged=facts_purged,
        weak_signals_deleted=weak_signals,
        extraction_jobs_deleted=jobs,
        receipts_deleted=removed["receipts_deleted"]
        + receipts.purge_receipts(
            conn,
            tenant_id,
            before=receipts_before,
            kept_owners=receipt_secrets.owner_hashes(conn, tenant_id, "subject", held),
        ),
    )
    deleted = counts.model_dump(exclude={"tenant_id", "tombstone_id"})
    if not any(deleted.values()):
        return counts
    tombstone_id = write_purge_tombstone(
        conn,
        tenant_id,
        target_hash=content_hash(f"purge {tenant_id} {now.isoformat()}"),
        episode_hashes=[stored for _, stored in episodes],
        counts=deleted,
        now=now,
        new_id=new_id,
    )
    return counts.model_copy(update={"tombstone_id": tombstone_id})


def purged_facts(
    conn: psycopg.Connection[Any], tenant_id: str, fact_ids: list[UUID]
) -> dict[UUID, datetime]:
    """When each of ``fact_ids`` that a purge removed entirely was purged, by fact id."""
    found = conn.execute(
        "SELECT fact_id, purged_at FROM purged_facts"
        " WHERE tenant_id = %(tenant_id)s AND fact_id = ANY(%(fact_ids)s)",
        {"tenant_id": tenant_id, "fact_ids": fact_ids},
    )
    return dict(found.fetchall())
