"""Subject merges: a duplicate subject folded into another.

A key only the duplicate holds moves whole: its versions (windows, system windows, supersession
links and sources unchanged), expiries, retraction log and conflicts are re-keyed to the
survivor. A key both hold cannot move that way (the two histories would overlap), so the
duplicate's current versions are asserted into the survivor through the write path, earliest
start first, then its open conflicts' challengers: a later start supersedes and an equal start
with another value meets the attribute's equal-start policy, as any candidate would. The
duplicate's versions of such a key are then retired (``store.subjects.merge_shared_keys``). Its
weak signals count towards the survivor's quorum, episodes naming it name the survivor, and a
legal hold on it also holds the survivor. A row of ``subject_merges`` is the merge's
content-free receipt, and makes the duplicate's id resolve to the survivor
(``store.subjects.merged_ids``) wherever a subject id enters.
"""

from __future__ import annotations

from typing import Any

import psycopg

from store.contract.results import MergeResult
from store.db import tenants
from store.db.clock import Clock
from store.db.locks import lock_keys, lock_tenants
from store.errors import Conflict, NotFound
from store.facts.versions import IdFactory
from store.governance import receipts, touched
from store.governance.receipts import NO_TRACE
from store.subjects import merge_shared_keys
from store.subjects import names as subject_names
from store.subjects.merged_ids import resolve_subject

# The attributes a subject holds anything of: a version, an expiry, a retraction, a conflict.
_HELD_ATTRIBUTES = """
SELECT attribute FROM fact_versions WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s
UNION SELECT attribute FROM expiries WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s
UNION SELECT attribute FROM retractions WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s
UNION SELECT attribute FROM conflicts WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s
"""

_NAMED_BY_EPISODES = """
SELECT EXISTS (SELECT FROM episode_subjects
               WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s)
    OR EXISTS (SELECT FROM weak_signals WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s)
"""

_MOVED_KEYS = (
    " WHERE tenant_id = %(tenant_id)s AND subject = %(merged)s AND attribute = ANY(%(names)s)"
)

_RELINK_PAIRS = """
INSERT INTO episode_subjects (tenant_id, subject, episode_id)
SELECT tenant_id, %(survivor)s, episode_id FROM episode_subjects
WHERE tenant_id = %(tenant_id)s AND subject = %(merged)s
ON CONFLICT DO NOTHING
"""

_MOVE_HOLD = """
INSERT INTO legal_holds (tenant_id, subject, placed_at)
SELECT tenant_id, %(survivor)s, placed_at FROM legal_holds
WHERE tenant_id = %(tenant_id)s AND subject = %(merged)s
ON CONFLICT DO NOTHING
"""

_RECORD = """
INSERT INTO subject_merges (tenant_id, merge_id, merged_subject, survivor, merged_at,
                            versions_moved, conflicts_moved, episodes_linked)
VALUES (%(tenant_id)s, %(merge_id)s, %(merged)s, %(survivor)s, %(now)s,
        %(versions_moved)s, %(conflicts_moved)s, %(episodes_linked)s)
"""


def _held_attributes(conn: psycopg.Connection[Any], tenant_id: str, subject: str) -> set[str]:
    params = {"tenant_id": tenant_id, "subject": subject}
    return {str(row[0]) for row in conn.execute(_HELD_ATTRIBUTES, params)}


def merge_subject(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    merged: str,
    into: str,
    clock: Clock,
    new_id: IdFactory,
) -> MergeResult:
    """Fold ``merged`` into the subject ``into`` names now; return the merge's receipt.

    Refused, changing nothing: a duplicate already merged (Conflict, ``subject``), into an id
    merged into the duplicate (Conflict, ``into``), or one with nothing held (NotFound,
    ``subject``). The caller refuses ``into`` naming the duplicate itself.
    """
    tenants.require_tenant(conn, tenant_id)
    # No key writer of the tenant runs meanwhile: each asks which ids are merged once it holds
    # the tenant's lock (shared), so none writes a duplicate's key after this commits.
    lock_tenants(conn, [tenant_id])
    already = resolve_subject(conn, tenant_id, merged)
    if already != merged:
        raise Conflict(f"subject {merged!r} was already merged into {already!r}", field="subject")
    survivor = resolve_subject(conn, tenant_id, into)
    if survivor == merged:
        # ``into`` was merged into the duplicate: a state, not a malformed request.
        raise Conflict(
            f"subject {into!r} was merged into {merged!r}: that would merge it into itself",
            field="into",
        )
    names = [
        str(row[0])
        for row in conn.execute(
            "SELECT attribute FROM attributes WHERE tenant_id = %(tenant_id)s ORDER BY attribute",
            {"tenant_id": tenant_id},
        )
    ]
    lock_keys(
        conn,
        tenant_id=tenant_id,
        keys=sorted((subject, name) for subject in (merged, survivor) for name in names),
    )
    held = _held_attributes(conn, tenant_id, merged)
    params = {"tenant_id": tenant_id, "merged": merged, "subject": merged, "survivor": survivor}
    named = conn.execute(_NAMED_BY_EPISODES, params).fetchone()
    if not held and not (named and named[0]):
        raise NotFound(f"subject {merged!r} is not known", field="subject")
    shared = sorted(held & _held_attributes(conn, tenant_id, survivor))
    versions_moved, conflicts_moved = _rekey(
        conn, {**params, "names": sorted(held - set(shared)), "now": clock()}
    )
    for attribute in shared:
        moved = merge_shared_keys.assert_shared_key(
            conn,
            tenant_id,
            merged=merged,
            survivor=survivor,
            attribute=attribute,
            clock=clock,
            new_id=new_id,
        )
        versions_moved += moved[0]
        conflicts_moved += moved[1]
    # Signals waiting for support count towards the survivor's quorum, on every key.
    conn.execute(
        "UPDATE weak_signals SET subject = %(survivor)s"
        " WHERE tenant_id = %(tenant_id)s AND subject = %(merged)s",
        params,
    )
    conn.execute(_RELINK_PAIRS, params)
    # Each pair of the merged id is one episode it named: the count of episodes relinked.
    episodes_linked = conn.execute(
        "DELETE FROM episode_subjects WHERE tenant_id = %(tenant_id)s AND subject = %(merged)s",
        params,
    ).rowcount
    # A hold on the duplicate holds what it became: the purge skips what is linked to either.
    conn.execute(_MOVE_HOLD, params)
    # Its names, its id among them, now find the survivor; its display name becomes an alias.
    subject_names.note_ids(conn, tenant_id, [survivor], now=clock())
    subject_names.move_names(conn, tenant_id, merged=merged, survivor=survivor)
    # A chain stays flat: what was merged into the duplicate now resolves to the survivor.
    conn.execute(
        "UPDATE subject_merges SET survivor = %(survivor)s"
        " WHERE tenant_id = %(tenant_id)s AND survivor = %(merged)s",
        params,
    )
    result = MergeResult(
        merged=merged,
        into=survivor,
        versions_moved=versions_moved,
        conflicts_moved=conflicts_moved,
        episodes_linked=episodes_linked,
        merge_id=new_id(),
    )
    conn.execute(
        _RECORD,
        {
            **params,
            "merge_id": result.merge_id,
            "now": clock(),
            "versions_moved": versions_moved,
            "conflicts_moved": conflicts_moved,
            "episodes_linked": episodes_linked,
        },
    )
    return result


def _rekey(conn: psycopg.Connection[Any], params: dict[str, Any]) -> tuple[int, int]:
    """Move the keys only the duplicate holds, history whole; (versions, open conflicts) moved."""
    if not params["names"]:
        return 0, 0
    open_conflicts = conn.execute(
        "SELECT count(*) FROM conflicts" + _MOVED_KEYS + " AND status = 'open'", params
    ).fetchone()
    rows = conn.execute(
        "UPDATE fact_versions SET subject = %(survivor)s"
        + _MOVED_KEYS
        + " RETURNING attribute, version_id, source_episode_id, retired_at IS NULL",
        params,
    ).fetchall()
    # Each version the survivor now believes leaves a write receipt, as a written one does.
    receipts.leave_receipts(
        conn,
        params["tenant_id"],
        [
            touched.fact_written(
                params["survivor"],
                attribute,
                version_id=version_id,
                now=params["now"],
                source_episode_id=source,
            )
            for attribute, version_id, source, believed in rows
            if believed
        ],
        action="write",
        trace=NO_TRACE,
        now=params["now"],
    )
    moved = len(rows)
    conn.execute("UPDATE conflicts SET subject = %(survivor)s" + _MOVED_KEYS, params)
    conn.execute("UPDATE expiries SET subject = %(survivor)s" + _MOVED_KEYS, params)
    conn.execute("UPDATE retractions SET subject = %(survivor)s" + _MOVED_KEYS, params)
    return moved, int(open_conflicts[0]) if open_conflicts else 0
