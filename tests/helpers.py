"""Small builders shared by the tests: declare, record, assert in one line each."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any
from uuid import uuid4

import psycopg
from psycopg_pool import ConnectionPool

from store.contract.facts import Challenger, Fact
from store.contract.results import UpdateResult
from store.db.database import connect
from store.service import MemoryStore

KEY = ("mira", "passport_deadline")
PURGE_COUNTS = (
    "vectors_deleted",
    "receipts_deleted",
    "weak_signals_deleted",
    "extraction_jobs_deleted",
)
"""The tombstone columns only a retention purge fills (an erasure leaves them 0)."""


def declare(
    store: MemoryStore,
    tenant: str,
    attribute: str = "passport_deadline",
    value_type: str = "date",
    **extra: Any,
) -> None:
    """Declare an attribute with a description."""
    store.admin.declare_attribute(
        tenant, attribute, {"value_type": value_type, "description": f"the {attribute}", **extra}
    )


def record(
    store: MemoryStore,
    tenant: str,
    episode_id: str,
    occurred_at: str,
    text: str = "an episode",
    **extra: Any,
) -> None:
    """Record an episode."""
    store.episodes.record(
        tenant, {"id": episode_id, "occurred_at": occurred_at, "text": text, **extra}
    )


def assert_value(
    store: MemoryStore,
    tenant: str,
    episode_id: str,
    value: str | None,
    valid_from: str | None = None,
    *,
    subject: str = "mira",
    attribute: str = "passport_deadline",
    **extra: Any,
) -> UpdateResult:
    """Apply one candidate citing ``episode_id``; return its result."""
    candidate: dict[str, Any] = {
        "evidence": "",
        "subject": subject,
        "attribute": attribute,
        "change": "update",
        "value": value,
        **extra,
    }
    if valid_from is not None:
        candidate["valid_from"] = valid_from
    [result] = store.facts.apply_candidates(tenant, episode_id, [candidate])
    return result


def fact(
    value: Any,
    *,
    source: str,
    valid_from: datetime,
    valid_to: datetime | None = None,
    subject: str = "mira",
    attribute: str = "passport_deadline",
    challengers: Sequence[Challenger] = (),
    evidence_verified: bool = True,
) -> Fact:
    """A current fact as a read returns it, for pure tests; disputed when it has challengers.
    Its evidence was found in its episode unless ``evidence_verified`` says otherwise."""
    return Fact(
        fact_id=uuid4(),
        version_id=uuid4(),
        subject=subject,
        attribute=attribute,
        value=value,
        valid_from=valid_from,
        valid_to=valid_to,
        recorded_at=valid_from,
        retired_at=None,
        supersedes=None,
        ended_by=None,
        ended_by_kind=None,
        source_episode_id=source,
        source_kind="message",
        evidence=None,
        evidence_verified=evidence_verified,
        schema_version=1,
        status="current",
        disputed=bool(challengers),
        challengers=list(challengers),
    )


def owner_connection(pool: ConnectionPool) -> psycopg.Connection[Any]:
    """A connection to the pool's database as its URL's own role, the tables' owner: row-level
    security does not hold it, so a test sees every tenant's rows as stored."""
    conninfo = pool.conninfo
    assert isinstance(conninfo, str)
    return connect(conninfo)


def receipt_secret(pool: ConnectionPool, tenant: str) -> bytes:
    """The tenant's current receipt secret, as the tables' owner reads it (the API never shows
    it): what a test needs to compute the hashes its receipts carry."""
    with owner_connection(pool) as conn:
        row = conn.execute(
            "SELECT secret FROM receipt_secrets WHERE tenant_id = %s ORDER BY version DESC LIMIT 1",
            (tenant,),
        ).fetchone()
    assert row is not None, f"tenant {tenant} has no receipt secret yet"
    return bytes(row[0])
