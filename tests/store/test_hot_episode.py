"""One episode cited by many writers at once: candidates about new subjects do not queue.

A source document about many customers is cited by every write that reads it. Each candidate
about a subject the episode did not name adds the pair (episode, subject) and never rewrites the
episode's row, so two open transactions citing the episode both commit, neither waiting on the
other; the episode's subjects then list both, in byte order.
"""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from store.db.clock import ManualClock
from store.db.tenants import enter_tenant
from store.facts.candidates import send_candidates
from store.facts.writes import validate_candidate
from store.service import MemoryStore
from tests.helpers import declare, record

TENANT = "hot-tenant"


def _write(conn: psycopg.Connection[Any], clock: ManualClock, subject: str) -> str:
    """In the transaction under way on ``conn``, a candidate citing ``doc`` about ``subject``;
    the result's status."""
    enter_tenant(conn, TENANT)
    candidate = {"evidence": "", "subject": subject, "attribute": "tier", "change": "update",
                 "value": "gold"}  # fmt: skip
    results = send_candidates(
        conn,
        TENANT,
        episode_id="doc",
        candidates=[validate_candidate(candidate, 0)],
        clock=clock,
        asked_at=clock(),
        new_id=uuid.uuid4,
    )
    [result] = results()
    return result.status


def test_two_writers_citing_one_episode_about_new_subjects_do_not_wait(
    pool: ConnectionPool, clock: ManualClock
) -> None:
    store = MemoryStore(pool, clock=clock)
    store.admin.create_tenant(TENANT)
    declare(store, TENANT, "tier", value_type="string")
    record(store, TENANT, "doc", "2026-06-01T00:00:00Z", text="customers", subjects=["carol"])
    with pool.connection() as first, pool.connection() as second, first.transaction():
        assert _write(first, clock, "alice") == "written"
        # The first stays open, holding whatever its write locked; the second would give
        # up after a second of waiting on any of it.
        with second.transaction():
            second.execute("SET LOCAL lock_timeout = '1s'")
            assert _write(second, clock, "Bob") == "written"
    assert store.episodes.get(TENANT, "doc").subjects == ["Bob", "alice", "carol"]
    written = [store.facts.current(TENANT, s, "tier").value for s in ("alice", "Bob")]
    assert written == ["gold", "gold"]
