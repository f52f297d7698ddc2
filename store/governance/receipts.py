"""Receipts written and read: the SQL behind ``store.contract.receipts``.

A call that reads for a decision, or writes, describes each memory it touched as a
``Touched`` and leaves their receipts with ``leave_receipts`` in its own transaction, so a
receipt exists exactly when the read or write it describes committed, hashed with the
tenant's current receipt secret (``store.governance.receipt_secrets``). Read transactions commit
with ``synchronous_commit = off``: a crash may lose the last moment's receipts, never half of one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID, uuid4

import msgspec
import psycopg
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from store.contract.common import MemoryType
from store.contract.receipts import (
    OWNER_KINDS,
    DecisionReceipts,
    Invalidation,
    Receipt,
    ReceiptAction,
    memory_key,
    owner_key,
    scope_hash,
)
from store.governance import receipt_secrets


@dataclass(frozen=True, slots=True)
class Trace:
    """What a request says about the decision it serves (``X-SGAM-Decision``,
    ``X-SGAM-Scope``, ``X-SGAM-Freshness-Budget``)."""

    decision_id: UUID | None = None
    scope: str | None = None
    freshness_budget_s: int | None = None


NO_TRACE = Trace()
"""A request for no decision: its reads leave no receipt, its writes an unscoped one."""


@dataclass(frozen=True, slots=True)
class Touched:
    """One memory a call read or wrote, as its receipt will describe it.

    ``owner`` is what the memory served belongs to (a subject, thread or procedure);
    ``asked`` what the request asked for, when that differs. An episode's outcome, and its
    write time when not given, are looked up as the receipt is written.
    """

    memory_type: MemoryType
    key: str
    owner: str | None
    version: str | None
    written_at: datetime | None
    provenance: str | None
    activated: bool
    invalidation: Invalidation | None = None
    approved: bool | None = None
    asked: str | None = None


# One statement: a read's commit setting (in the decision's condition: Citus sent a CTE of its
# own to every worker), its decision, its receipts. The episodes' write times and outcomes are
# looked up by primary key in a statement of the tenant alone: Citus refuses lookups in the JSON.
_LEAVE = """
WITH opened AS (
    INSERT INTO decisions (tenant_id, decision_id, opened_at)
    SELECT %(tenant_id)s, %(decision_id)s, %(now)s
    WHERE %(decision_id)s::uuid IS NOT NULL
      AND CASE WHEN %(read)s THEN set_config('synchronous_commit', 'off', true) = 'off'
          ELSE true END
    ON CONFLICT DO NOTHING
), cited AS (
    SELECT e.id, e.recorded_at, o.status
    FROM episodes AS e
    LEFT JOIN episode_outcomes AS o
        ON o.tenant_id = e.tenant_id AND o.episode_id = e.id AND o.superseded_at IS NULL
    WHERE e.tenant_id = %(tenant_id)s AND e.id = ANY(%(episode_ids)s::text[])
)
INSERT INTO receipts (
    tenant_id, receipt_id, decision_id, action, memory_type, memory_key, owner_key, version,
    expected_scope_hash, observed_scope_hash, written_at, read_at, freshness_budget_s,
    provenance, activated, invalidation, outcome, approved, recorded_at, secret_version
)
SELECT %(tenant_id)s, r.receipt_id, %(decision_id)s, %(action)s, r.memory_type, r.memory_key,
    r.owner_key, r.version, r.expected, r.observed, coalesce(r.written_at, c.recorded_at),
    %(read_at)s, %(freshness_budget_s)s, r.provenance, r.activated, r.invalidation, c.status,
    r.approved, %(now)s, %(secret_version)s
FROM jsonb_to_recordset(%(rows)s) AS r (
    receipt_id uuid, memory_type text, memory_key text, owner_key text, version text,
    expected text, observed text, written_at timestamptz, provenance text, activated boolean,
    invalidation text, approved boolean, episode_id text
)
LEFT JOIN cited AS c ON c.id = r.episode_id
RETURNING true  -- on Citus: inserted on each shard, not COPied (store.db.distribution)
"""


def leave_receipts(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    touched: Sequence[Touched],
    *,
    action: ReceiptAction,
    trace: Trace,
    now: datetime,
) -> None:
    """Write one receipt per touched memory, in the caller's transaction.

    A read opens its decision if nothing did yet, and leaves receipts only for a decision: a
    read for none leaves nothing. A write leaves its receipts whatever the trace. A read's
    transaction wrote nothing but its receipts, which it may lose in a crash (never half of
    them): it commits without waiting for the disk.
    """
    if action == "read" and trace.decision_id is None:
        return
    version, secret = receipt_secrets.current_secret(conn, tenant_id, now=now)
    columns = _columns(tenant_id, touched, action=action, trace=trace, now=now, secret=secret)
    conn.execute(_LEAVE, columns | {"secret_version": version})


def _owner_key(tenant_id: str, item: Touched, secret: bytes) -> str:
    # An episode's receipts are erased with it, whatever subject it was searched for.
    if item.memory_type == "episodic":
        return owner_key(tenant_id, "episode", item.key, secret=secret)
    return owner_key(tenant_id, OWNER_KINDS[item.memory_type], item.owner, secret=secret)


def _columns(
    tenant_id: str,
    touched: Sequence[Touched],
    *,
    action: ReceiptAction,
    trace: Trace,
    now: datetime,
    secret: bytes,
) -> dict[str, Any]:
    def scope_of(item: Touched, owner: str | None) -> str:
        return scope_hash(
            tenant_id, OWNER_KINDS[item.memory_type], owner, trace.scope, secret=secret
        )

    rows = [
        {
            # Not the store's id factory: receipts must not shift the ids replays pin.
            "receipt_id": uuid4(),
            "memory_type": item.memory_type,
            "memory_key": memory_key(item.memory_type, item.key, secret=secret),
            "owner_key": _owner_key(tenant_id, item, secret),
            "version": item.version,
            "expected": observed if item.asked is None else scope_of(item, item.asked),
            "observed": observed,
            "written_at": item.written_at,
            "provenance": item.provenance,
            "activated": item.activated,
            "invalidation": item.invalidation,
            "approved": item.approved,
            "episode_id": item.key if item.memory_type == "episodic" else None,
        }
        for item in touched
        for observed in [scope_of(item, item.owner)]
    ]
    return {
        "tenant_id": tenant_id,
        "decision_id": trace.decision_id,
        "read": action == "read",
        "action": action,
        "read_at": now if action == "read" else None,
        "freshness_budget_s": trace.freshness_budget_s,
        "now": now,
        # One JSON document rather than an array per column: the server parses it faster, and
        # msgspec writes ids and times itself, several times faster than the json module.
        "rows": Jsonb(rows, dumps=msgspec.json.encode),
        "episode_ids": sorted({row["episode_id"] for row in rows if row["episode_id"]}),
    }


_RECEIPT_COLUMNS = """receipt_id, decision_id, action, memory_type, memory_key, version,
    expected_scope_hash, observed_scope_hash, written_at, read_at, freshness_budget_s,
    provenance, activated, invalidation, outcome, approved, recorded_at, secret_version"""

# Each lookup compares by plain equality, which an index serves under row-level security.
DECISION_RECEIPTS = (
    f"SELECT {_RECEIPT_COLUMNS} FROM receipts"
    " WHERE tenant_id = %(tenant_id)s AND decision_id = %(decision_id)s"
    " ORDER BY recorded_at, receipt_id"
)
EVIDENCE = (
    f"SELECT {_RECEIPT_COLUMNS} FROM receipts"
    " WHERE tenant_id = %(tenant_id)s AND decision_id = ANY(%(decisions)s)"
    f" UNION SELECT {_RECEIPT_COLUMNS} FROM receipts"
    " WHERE tenant_id = %(tenant_id)s AND action = 'write'"
    " AND (memory_type, memory_key) IN"
    " (SELECT * FROM unnest(%(types)s::text[], %(keys)s::text[]))"
    " ORDER BY recorded_at, receipt_id"
)
ERASE_OWNERS = (
    "DELETE FROM receipts WHERE tenant_id = %(tenant_id)s AND owner_key = ANY(%(owners)s)"
)
ERASE_EPISODES = (
    "DELETE FROM receipts WHERE tenant_id = %(tenant_id)s AND ("
    " owner_key = ANY(%(owners)s)"
    " OR (memory_type = 'semantic' AND provenance = ANY(%(ids)s)))"
)


def read_decision(
    conn: psycopg.Connection[Any], tenant_id: str, decision_id: UUID
) -> DecisionReceipts | None:
    """The decision and its receipts, oldest first; None when the tenant has no such one."""
    opened = conn.execute(
        "SELECT opened_at FROM decisions WHERE tenant_id = %s AND decision_id = %s",
        (tenant_id, decision_id),
    ).fetchone()
    if opened is None:
        return None
    with conn.cursor(row_factory=class_row(Receipt)) as cur:
        cur.execute(DECISION_RECEIPTS, {"tenant_id": tenant_id, "decision_id": decision_id})
        receipts = cur.fetchall()
    return DecisionReceipts(decision_id=decision_id, opened_at=opened[0], receipts=receipts)


def evidence_receipts(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    decision_ids: Sequence[UUID],
    memories: Sequence[tuple[MemoryType, str]],
) -> list[Receipt]:
    """What the health classifier judges: the decisions' receipts, and the writes of the
    memories (type and ``memory_key`` hash) the expectations name."""
    with conn.cursor(row_factory=class_row(Receipt)) as cur:
        cur.execute(
            EVIDENCE,
            {
                "tenant_id": tenant_id,
                "decisions": list(decision_ids),
                "types": [memory_type for memory_type, _ in memories],
                "keys": [key for _, key in memories],
            },
        )
        return cur.fetchall()


def erase_owners(conn: psycopg.Connection[Any], tenant_id: str, owner_keys: Sequence[str]) -> int:
    """Delete the receipts of what was erased (``owner_key`` hashes); their count."""
    cur = conn.execute(ERASE_OWNERS, {"tenant_id": tenant_id, "owners": list(owner_keys)})
    return cur.rowcount


def erase_episodes(
    conn: psycopg.Connection[Any], tenant_id: str, episode_ids: Sequence[str]
) -> int:
    """Delete the receipts of erased episodes: their own, and those of the facts they sourced."""
    cur = conn.execute(
        ERASE_EPISODES,
        {
            "tenant_id": tenant_id,
            "owners": receipt_secrets.owner_hashes(conn, tenant_id, "episode", episode_ids),
            "ids": list(episode_ids),
        },
    )
    return cur.rowcount


def purge_receipts(
    conn: psycopg.Connection[Any],
    tenant_id: str | None,
    *,
    before: datetime,
    kept_owners: Sequence[str] = (),
) -> int:
    """Delete the receipts recorded before ``before`` and the decisions opened before it
    that kept none (retention); the number of receipts deleted. ``tenant_id`` None purges
    every tenant: only on the owner's connection, which row-level security does not hold.
    Receipts of ``kept_owners`` (``owner_key`` hashes: subjects under legal hold) stay."""
    params = {"tenant_id": tenant_id, "before": before, "kept": list(kept_owners)}
    cur = conn.execute(
        "DELETE FROM receipts WHERE (%(tenant_id)s::text IS NULL OR tenant_id = %(tenant_id)s)"
        " AND recorded_at < %(before)s AND owner_key <> ALL(%(kept)s::text[])",
        params,
    )
    conn.execute(
        "DELETE FROM decisions d"
        " WHERE (%(tenant_id)s::text IS NULL OR d.tenant_id = %(tenant_id)s)"
        " AND d.opened_at < %(before)s AND NOT EXISTS (SELECT FROM receipts r"
        " WHERE r.tenant_id = d.tenant_id AND r.decision_id = d.decision_id)",
        params,
    )
    return cur.rowcount
