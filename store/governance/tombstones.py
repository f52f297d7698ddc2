"""Tombstones: the content-free record each erasure, and each retention purge, leaves."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

import psycopg

from store.contract.results import ErasureResult
from store.facts.versions import IdFactory

_PURGE_COUNTS = (
    "episodes_deleted",
    "episodes_stubbed",
    "fact_versions_deleted",
    "vectors_deleted",
    "receipts_deleted",
    "weak_signals_deleted",
    "extraction_jobs_deleted",
)
"""What a purge counts; an erasure's counts are ``ErasureResult``'s."""


def _insert(conn: psycopg.Connection[Any], row: dict[str, Any]) -> None:
    conn.execute(
        """
        INSERT INTO tombstones (
            tenant_id, tombstone_id, target, target_hash, erased_at, episodes_deleted,
            episodes_stubbed, fact_versions_deleted, conflicts_deleted, expiries_deleted,
            facts_retracted, checkpoints_deleted, vectors_deleted, receipts_deleted,
            weak_signals_deleted, extraction_jobs_deleted, episode_hashes
        ) VALUES (
            %(tenant_id)s, %(tombstone_id)s, %(target)s, %(target_hash)s, %(now)s,
            %(episodes_deleted)s, %(episodes_stubbed)s, %(fact_versions_deleted)s,
            %(conflicts_deleted)s, %(expiries_deleted)s, %(facts_retracted)s,
            %(checkpoints_deleted)s, %(vectors_deleted)s, %(receipts_deleted)s,
            %(weak_signals_deleted)s, %(extraction_jobs_deleted)s, %(episode_hashes)s
        )
        """,
        row,
    )


def write_tombstone(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    target: Literal["subject", "episode", "thread"],
    target_hash: str,
    episode_hashes: list[str],
    counts: dict[str, int],
    now: datetime,
    new_id: IdFactory,
) -> ErasureResult:
    """Record an erasure: what kind of thing went, its name's hash, the hashes of the episodes
    that went with it, and how many rows of each kind; never what they held."""
    result = ErasureResult(
        tombstone_id=new_id(),
        episodes_deleted=counts.get("episodes_deleted", 0),
        episodes_stubbed=counts.get("episodes_stubbed", 0),
        fact_versions_deleted=counts.get("fact_versions_deleted", 0),
        conflicts_deleted=counts.get("conflicts_deleted", 0),
        expiries_deleted=counts.get("expiries_deleted", 0),
        facts_retracted=counts.get("facts_retracted", 0),
        checkpoints_deleted=counts.get("checkpoints_deleted", 0),
    )
    _insert(
        conn,
        {
            **dict.fromkeys(_PURGE_COUNTS, 0),
            **result.model_dump(exclude={"status"}),
            "tenant_id": tenant_id,
            "target": target,
            "target_hash": target_hash,
            "episode_hashes": sorted(episode_hashes),
            "now": now,
        },
    )
    return result


def write_purge_tombstone(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    target_hash: str,
    episode_hashes: list[str],
    counts: dict[str, int],
    now: datetime,
    new_id: IdFactory,
) -> UUID:
    """Record a retention purge: the hashes of the episodes whose text went, and how many rows
    of each kind went; its tombstone id."""
    tombstone_id = new_id()
    _insert(
        conn,
        {
            **dict.fromkeys(ErasureResult.model_fields, 0),
            **{name: counts.get(name, 0) for name in _PURGE_COUNTS},
            "tenant_id": tenant_id,
            "tombstone_id": tombstone_id,
            "target": "purge",
            "target_hash": target_hash,
            "episode_hashes": sorted(episode_hashes),
            "now": now,
        },
    )
    return tombstone_id
