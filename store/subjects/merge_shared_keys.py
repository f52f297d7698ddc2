"""Subject merges, a key both subjects hold: the duplicate's values asserted into the survivor.

The duplicate's current versions of the key go through the write path into the survivor, earliest
start first, each with its source episode and evidence; an expiry that ended one is replayed on
the survivor if the moved value still holds there; then the challengers of its open conflicts are
sent the same way. A candidate the write path refuses fails the merge, never dropped. The
duplicate's versions of the key are then retired and its open conflicts deleted.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from store.contract.facts import Fact, MemoryUpdate
from store.contract.results import UpdateResult
from store.contract.values import display, same_value
from store.db.clock import Clock
from store.episodes import record as episodes
from store.errors import Conflict
from store.facts import candidates, versions
from store.facts import writes as facts
from store.facts.versions import IdFactory

_OPEN_CONFLICTS = """
SELECT conflict_id, valid_from, value, source_episode_id, evidence FROM conflicts
WHERE tenant_id = %(tenant_id)s AND subject = %(merged)s AND attribute = %(attribute)s
  AND status = 'open'
ORDER BY valid_from, created_at, conflict_id
"""

_EXPIRY_SOURCE = """
SELECT source_episode_id FROM expiries WHERE tenant_id = %(tenant_id)s AND expiry_id = %(expiry_id)s
"""


def assert_shared_key(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    merged: str,
    survivor: str,
    attribute: str,
    clock: Clock,
    new_id: IdFactory,
) -> tuple[int, int]:
    """Assert the duplicate's current versions of a key both hold into the survivor, then its
    open conflicts' challengers; retire its versions. (versions, open conflicts) moved."""
    now = clock()
    current = versions.load_current(
        conn, tenant_id=tenant_id, subject=merged, attribute=attribute, now=now
    )
    for fact in sorted(current, key=lambda found: (found.valid_from, found.recorded_at)):
        _write(conn, tenant_id, survivor, fact_like=fact, clock=clock, new_id=new_id)
    for fact in current:
        if fact.ended_by_kind == "expiry" and fact.ended_by is not None:
            _replay_expiry(
                conn, tenant_id, survivor=survivor, fact=fact, clock=clock, new_id=new_id
            )
    key = {"tenant_id": tenant_id, "merged": merged, "attribute": attribute}
    challengers = conn.execute(_OPEN_CONFLICTS, key).fetchall()
    for _, valid_from, value, episode_id, evidence in challengers:
        _send(
            conn,
            tenant_id,
            episode_id=str(episode_id),
            candidate=_update(
                survivor, attribute, value=value, valid_from=valid_from, evidence=evidence
            ),
            clock=clock,
            new_id=new_id,
        )
    conn.execute(
        "DELETE FROM conflicts WHERE tenant_id = %(tenant_id)s AND subject = %(merged)s"
        " AND attribute = %(attribute)s AND status = 'open'",
        key,
    )
    versions.retire(
        conn, tenant_id=tenant_id, version_ids=[fact.version_id for fact in current], at=clock()
    )
    return len(current), len(challengers)


def _update(
    subject: str, attribute: str, *, value: Any, valid_from: datetime, evidence: str | None
) -> MemoryUpdate:
    return MemoryUpdate(
        evidence=evidence or "",
        subject=subject,
        attribute=attribute,
        change="update",
        value=display(value),
        valid_from=valid_from,
    )


def _write(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    survivor: str,
    *,
    fact_like: Fact,
    clock: Clock,
    new_id: IdFactory,
) -> None:
    candidate = _update(
        survivor,
        fact_like.attribute,
        value=fact_like.value,
        valid_from=fact_like.valid_from,
        evidence=fact_like.evidence,
    )
    _send(
        conn,
        tenant_id,
        episode_id=fact_like.source_episode_id,
        candidate=candidate,
        clock=clock,
        new_id=new_id,
    )


def _send(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    episode_id: str,
    candidate: MemoryUpdate,
    clock: Clock,
    new_id: IdFactory,
) -> UpdateResult:
    """One candidate through the write path; one it refuses fails the merge, never dropped."""
    (result,) = candidates.send_candidates(
        conn,
        tenant_id,
        episode_id=episode_id,
        candidates=[candidate],
        clock=clock,
        asked_at=clock(),
        new_id=new_id,
    )()
    if result.status == "invalid":
        raise Conflict(
            f"the value of {candidate.attribute!r} from episode {episode_id!r} cannot be written"
            f" to {candidate.subject!r}: {result.reason}",
            field="into",
        )
    return result


def _replay_expiry(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    survivor: str,
    fact: Fact,
    clock: Clock,
    new_id: IdFactory,
) -> None:
    """End the moved value where the duplicate's expiry ended it, if it still holds there."""
    assert fact.valid_to is not None
    now = clock()
    there = versions.load_current(
        conn, tenant_id=tenant_id, subject=survivor, attribute=fact.attribute, now=now
    )
    holding = [
        found
        for found in there
        if found.valid_from == fact.valid_from
        and same_value(found.value, fact.value)
        and (found.valid_to is None or found.valid_to > fact.valid_to)
    ]
    row = conn.execute(
        _EXPIRY_SOURCE, {"tenant_id": tenant_id, "expiry_id": fact.ended_by}
    ).fetchone()
    if not holding or row is None:
        return
    facts.expire(
        conn,
        tenant_id,
        subject=survivor,
        attribute=fact.attribute,
        at=fact.valid_to,
        source_episode=episodes.get_episode(conn, tenant_id, str(row[0])),
        clock=clock,
        new_id=new_id,
    )
