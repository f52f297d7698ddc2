"""Working memory: a thread's checkpoints, each write the thread's next version.

A checkpoint holds what the thread's next decision needs: the active goal, the dependency it
waits on, and a small state object. Versions count 1, 2, ... per thread and are never changed,
so the latest one, or any earlier one, reads back as written (continuity, design section 6).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from store.contract.memory import MAX_VERSION, Checkpoint, CheckpointWrite
from store.contract.results import ErasureResult
from store.episodes.record import content_hash
from store.errors import Conflict, NotFound
from store.facts.versions import IdFactory
from store.governance import receipt_secrets, receipts
from store.governance.tombstones import write_tombstone


def check_expected(expected: int | None, latest: int) -> None:
    """Refuse a compare-and-set write whose expected version is not the thread's latest."""
    if expected is not None and expected != latest:
        raise Conflict(
            f"the thread's latest checkpoint is version {latest}, not {expected}: read it"
            " and write again",
            field="expected_version",
        )


_COLUMNS = """
    thread_id, version, active_goal_id, pending_dependency, state, written_at
"""

THREAD_LOCKS = 0x5354
"""The first half of a thread lock's two-integer key, apart from the tenants' (0x5347)."""
_LOCK_THREAD = "SELECT pg_advisory_xact_lock(%(space)s, hashtext(%(thread)s))"


def _lock_thread(conn: psycopg.Connection[Any], tenant_id: str, thread_id: str) -> None:
    """Hold the thread's lock until commit: its writers (and its erasure) take turns."""
    conn.execute(
        _LOCK_THREAD, {"space": THREAD_LOCKS, "thread": "\x1f".join((tenant_id, thread_id))}
    )


def write_checkpoint(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    thread_id: str,
    checkpoint: CheckpointWrite,
    *,
    now: datetime,
) -> Checkpoint:
    """Write the thread's next version, after its latest as ``expected_version`` demands.

    A thread's writers queue on its lock until commit, so each reads the version the one before
    it wrote: two writers expecting the same version cannot both win. Were the lock ever
    bypassed, the primary key would still let one row per version in: the other writer is
    answered as a stale compare-and-set.
    """
    _lock_thread(conn, tenant_id, thread_id)
    latest = latest_version(conn, tenant_id, thread_id)
    check_expected(checkpoint.expected_version, latest)
    if latest >= MAX_VERSION:
        raise Conflict(f"the thread has reached its last version ({MAX_VERSION})")
    with conn.cursor(row_factory=class_row(Checkpoint)) as cur:
        cur.execute(
            """
            INSERT INTO thread_checkpoints (
                tenant_id, thread_id, version, active_goal_id, pending_dependency, state,
                written_at
            ) VALUES (
                %(tenant_id)s, %(thread_id)s, %(version)s, %(active_goal_id)s,
                %(pending_dependency)s, %(state)s, %(now)s
            )
            ON CONFLICT (tenant_id, thread_id, version) DO NOTHING
            RETURNING"""
            + _COLUMNS,
            {
                "tenant_id": tenant_id,
                "thread_id": thread_id,
                "version": latest + 1,
                "active_goal_id": checkpoint.active_goal_id,
                "pending_dependency": checkpoint.pending_dependency,
                "state": Jsonb(checkpoint.state),
                "now": now,
            },
        )
        written = cur.fetchone()
    if written is None:
        raise Conflict(
            f"another writer wrote version {latest + 1} of the thread first: read it and write"
            " again",
            field="expected_version",
        )
    return written


def erase_thread(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    thread_id: str,
    *,
    now: datetime,
    new_id: IdFactory,
) -> ErasureResult:
    """Delete every checkpoint of the thread and the receipts of its reads and writes; leave a
    content-free tombstone. NotFound (``thread_id``) when it has none: no tombstone is written.

    It waits for the thread's writers (their lock), so none writes into an erased thread.
    """
    _lock_thread(conn, tenant_id, thread_id)
    cur = conn.execute(
        "DELETE FROM thread_checkpoints"
        " WHERE tenant_id = %(tenant_id)s AND thread_id = %(thread_id)s",
        {"tenant_id": tenant_id, "thread_id": thread_id},
    )
    if not cur.rowcount:
        raise NotFound(f"thread {thread_id!r} has no checkpoint", field="thread_id")
    receipts.erase_owners(
        conn, tenant_id, receipt_secrets.owner_hashes(conn, tenant_id, "thread", [thread_id])
    )
    return write_tombstone(
        conn,
        tenant_id,
        target="thread",
        target_hash=content_hash(thread_id),
        episode_hashes=[],
        counts={"checkpoints_deleted": cur.rowcount},
        now=now,
        new_id=new_id,
    )


def latest_version(conn: psycopg.Connection[Any], tenant_id: str, thread_id: str) -> int:
    """The thread's latest version; 0 when it has no checkpoint."""
    row = conn.execute(
        "SELECT coalesce(max(version), 0) FROM thread_checkpoints"
        " WHERE tenant_id = %(tenant_id)s AND thread_id = %(thread_id)s",
        {"tenant_id": tenant_id, "thread_id": thread_id},
    ).fetchone()
    return 0 if row is None else int(row[0])


def read_checkpoint(
    conn: psycopg.Connection[Any], tenant_id: str, thread_id: str, *, version: int | None
) -> Checkpoint:
    """The thread's latest checkpoint, or the given version; NotFound when there is none."""
    with conn.cursor(row_factory=class_row(Checkpoint)) as cur:
        cur.execute(
            "SELECT" + _COLUMNS + "FROM thread_checkpoints"
            " WHERE tenant_id = %(tenant_id)s AND thread_id = %(thread_id)s"
            " AND (%(version)s::integer IS NULL OR version = %(version)s::integer)"
            " ORDER BY version DESC LIMIT 1",
            {"tenant_id": tenant_id, "thread_id": thread_id, "version": version},
        )
        found = cur.fetchone()
    if found is None:
        if version is None:
            raise NotFound(f"thread {thread_id!r} has no checkpoint", field="thread_id")
        raise NotFound(f"thread {thread_id!r} has no checkpoint version {version}", field="version")
    return found
