"""Erasure: deletion on request (the retention purge, store/governance/purge.py, deletes by age).
What goes leaves a content-free tombstone.

Erasing a subject deletes its fact versions, conflicts and expiries and every episode linked
to it. Erasing an episode retracts the facts it sourced, drops the conflicts it challenged
with, then deletes it the same way. An episode some remaining row still cites becomes a stub
(id, kind, times, content hash): the citation resolves, the content is gone. Evidence quoted
from an erased episode is cleared wherever it survives.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, LiteralString

import psycopg

from store.contract.results import ErasureResult
from store.db.locks import lock_keys

# An erased id is named in its tombstone by the same one-way hash as content.
from store.episodes.record import LINKED_TO_SUBJECTS, content_hash
from store.episodes.stubs import remove_episodes
from store.errors import NotFound
from store.facts.retraction import retract_current
from store.facts.versions import IdFactory
from store.governance import receipt_secrets, receipts
from store.governance.legal_holds import refuse_held_episodes, refuse_if_held
from store.governance.tombstones import write_tombstone
from store.subjects import names as subject_names
from store.subjects.merged_ids import merged_into, resolve_subject

_LINKED_EPISODES = (
    "SELECT e.id, e.content_hash FROM episodes AS e"
    " WHERE e.tenant_id = %(tenant_id)s AND e.erased_at IS NULL AND"
    + LINKED_TO_SUBJECTS
    + "ORDER BY e.id"
)

# Anything at all about the subject, bookkeeping included: erasing must leave none of it.
_HELD = """
SELECT EXISTS (SELECT FROM fact_versions AS t WHERE t.tenant_id = %(tenant_id)s
                                              AND t.subject = %(subject)s)
    OR EXISTS (SELECT FROM conflicts AS t WHERE t.tenant_id = %(tenant_id)s
                                          AND t.subject = %(subject)s)
    OR EXISTS (SELECT FROM expiries AS t WHERE t.tenant_id = %(tenant_id)s
                                         AND t.subject = %(subject)s)
    OR EXISTS (SELECT FROM retractions AS t WHERE t.tenant_id = %(tenant_id)s
                                            AND t.subject = %(subject)s)
    OR EXISTS (SELECT FROM weak_signals AS t WHERE t.tenant_id = %(tenant_id)s
                                             AND t.subject = %(subject)s)
    OR EXISTS (SELECT FROM subject_names AS t WHERE t.tenant_id = %(tenant_id)s
                                              AND t.subject = %(subject)s)
"""


# A fact promoted from several weak signals (``fact_sources``) stands while a source of it other
# than the episode being erased remains: only the facts this episode is the last source of go.
_OTHER_SOURCE = """
    EXISTS (SELECT FROM fact_sources AS o
            WHERE o.tenant_id = %(tenant_id)s AND o.tenant_id = v.tenant_id
              AND o.fact_id = v.fact_id
              AND o.episode_id <> %(episode_id)s)
"""

_LAST_SOURCE_OF = (
    """
SELECT DISTINCT v.subject, v.attribute, v.fact_id FROM fact_versions AS v
WHERE v.tenant_id = %(tenant_id)s AND v.retired_at IS NULL
  AND (v.source_episode_id = %(episode_id)s
       OR v.fact_id IN (SELECT fact_id FROM fact_sources
                        WHERE tenant_id = %(tenant_id)s AND episode_id = %(episode_id)s))
  AND NOT"""
    + _OTHER_SOURCE
    + "ORDER BY v.subject, v.attribute, v.fact_id"
)

_DELETE_SOURCED = (
    """
DELETE FROM fact_versions AS v
WHERE v.tenant_id = %(tenant_id)s
  AND (v.fact_id = ANY(%(fact_ids)s) OR (v.source_episode_id = %(episode_id)s AND NOT"""
    + _OTHER_SOURCE
    + "))"
)


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
    """Physically remove everything held about ``subject``; record a tombstone.

    A merged subject is one with its survivor (``store.subjects.merges``): erasing either id erases
    the survivor and every id merged into it, and the merge records that link them.

    A subject under legal hold is refused (``legal_hold``) and nothing changes.

    A subject with nothing held (never seen, or already erased) is NotFound, as for export:
    no tombstone records an erasure that erased nothing.
    """
    # The tenant's lock first: a merge, which holds it exclusively, cannot add to the group.
    lock_keys(conn, tenant_id=tenant_id, keys=[])
    survivor = resolve_subject(conn, tenant_id, subject)
    group = [survivor, *merged_into(conn, tenant_id, survivor)]
    attributes = [
        row[0]
        for row in conn.execute(
            "SELECT attribute FROM attributes WHERE tenant_id = %(tenant_id)s",
            {"tenant_id": tenant_id},
        )
    ]
    lock_keys(
        conn, tenant_id=tenant_id, keys=sorted((one, name) for one in group for name in attributes)
    )
    held = False
    for one in group:
        refuse_if_held(conn, tenant_id, one)
        found = conn.execute(_HELD, {"tenant_id": tenant_id, "subject": one}).fetchone()
        held = held or bool(found and found[0])
    found_linked = conn.execute(_LINKED_EPISODES, {"tenant_id": tenant_id, "subjects": group})
    linked: dict[str, str] = dict(found_linked.fetchall())
    if not linked and not held:
        raise NotFound(f"subject {subject!r} is not known", field="subject")
    # An episode of the subject's that another, held, subject is linked to stays: so does this.
    refuse_held_episodes(conn, tenant_id, sorted(linked), field="subject")

    group_params: dict[str, Any] = {"tenant_id": tenant_id, "subjects": group}
    by_subject = "WHERE tenant_id = %(tenant_id)s AND subject = ANY(%(subjects)s)"
    # The retraction log is internal bookkeeping: it goes, but the tombstone does not count it.
    conn.execute("DELETE FROM retractions " + by_subject, group_params)
    # So is the buffer of weak signals: they were never facts, and the tombstone counts none.
    conn.execute("DELETE FROM weak_signals " + by_subject, group_params)
    conn.execute(
        "DELETE FROM fact_sources WHERE tenant_id = %(tenant_id)s AND fact_id IN"
        " (SELECT fact_id FROM fact_versions " + by_subject + ")",
        group_params,
    )
    counts = {
        "fact_versions_deleted": _count(
            conn, "DELETE FROM fact_versions " + by_subject, group_params
        ),
        "conflicts_deleted": _count(conn, "DELETE FROM conflicts " + by_subject, group_params),
        "expiries_deleted": _count(conn, "DELETE FROM expiries " + by_subject, group_params),
        **remove_episodes(conn, tenant_id, sorted(linked), now=now, mark="erased_at"),
    }
    # Other episodes may still list the subject among those they concern: forget the link.
    conn.execute("DELETE FROM episode_subjects " + by_subject, group_params)
    subject_names.forget_subjects(conn, tenant_id, group)
    # The merges that joined these ids go too: nothing says they were ever one subject.
    conn.execute(
        "DELETE FROM subject_merges WHERE tenant_id = %(tenant_id)s AND survivor = %(survivor)s",
        {"tenant_id": tenant_id, "survivor": survivor},
    )
    # Receipts hold no content, but they say the subject's memory existed: they go too.
    receipts.erase_owners(
        conn, tenant_id, receipt_secrets.owner_hashes(conn, tenant_id, "subject", group)
    )
    return write_tombstone(
        conn,
        tenant_id,
        target="subject",
        target_hash=content_hash(subject),
        episode_hashes=[linked[episode_id] for episode_id in sorted(linked)],
        counts=counts,
        now=now,
        new_id=new_id,
    )


def erase_episode(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    episode_id: str,
    now: datetime,
    new_id: IdFactory,
) -> ErasureResult:
    """Retract the facts an episode sourced, then remove them and it; record a tombstone.

    Retraction first gives what those facts had closed its window back; then every version
    the episode sourced is deleted, so past known-at answers no longer show its values
    either. The episode itself goes, or stays as a stub while an expiry still cites it.

    A fact promoted from several weak signals is retracted only with the last of its sources:
    while another remains, it stands, and cites this episode's stub if this was its source.
    """
    params: dict[str, Any] = {"tenant_id": tenant_id, "episode_id": episode_id}
    found = conn.execute(
        "SELECT content_hash, erased_at FROM episodes"
        " WHERE tenant_id = %(tenant_id)s AND id = %(episode_id)s",
        params,
    ).fetchone()
    if found is None:
        raise NotFound(f"episode {episode_id!r} does not exist", field="episode_id")
    refuse_held_episodes(conn, tenant_id, [episode_id], field="episode_id")
    stored_hash, erased_at = found
    sourced = conn.execute(_LAST_SOURCE_OF, params).fetchall()
    params["fact_ids"] = sorted({fact_id for _, _, fact_id in sourced})
    lock_keys(conn, tenant_id=tenant_id, keys=[(s, a) for s, a, _ in sourced])
    retracted = sum(
        retract_current(
            conn,
            tenant_id=tenant_id,
            subject=subject,
            attribute=attribute,
            fact_id=fact_id,
            now=now,
            new_id=new_id,
        ).status
        == "retracted"
        for subject, attribute, fact_id in sourced
    )
    counts = {
        "facts_retracted": retracted,
        # Retracted, its facts changed no current answer; deleted, they change no past one.
        "fact_versions_deleted": _count(conn, _DELETE_SOURCED, params),
        "conflicts_deleted": _count(
            conn,
            "DELETE FROM conflicts"
            " WHERE tenant_id = %(tenant_id)s AND source_episode_id = %(episode_id)s",
            params,
        ),
        **remove_episodes(
            conn, tenant_id, [] if erased_at else [episode_id], now=now, mark="erased_at"
        ),
    }
    conn.execute(
        "DELETE FROM fact_sources WHERE tenant_id = %(tenant_id)s"
        " AND (episode_id = %(episode_id)s OR fact_id = ANY(%(fact_ids)s))",
        params,
    )
    return write_tombstone(
        conn,
        tenant_id,
        target="episode",
        target_hash=content_hash(episode_id),
        episode_hashes=[] if erased_at else [stored_hash],
        counts=counts,
        now=now,
        new_id=new_id,
    )
