"""Builders for the retention tests: whole-database snapshots and a world with things to purge."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from uuid import UUID

import numpy as np
from psycopg import sql
from psycopg_pool import ConnectionPool

from store.db.clock import ManualClock
from store.service import MemoryStore
from tests.conftest import ts
from tests.dbsearch import generated_columns
from tests.helpers import assert_value, declare, owner_connection, record

T0 = ts("2026-06-01T00:00:00Z")
PURGE_AT = T0 + timedelta(days=2)
"""Two days on: past a day of ``ephemeral`` and ``session``, well within ``standard``."""

Snapshot = dict[str, list[dict[str, Any]]]


class LengthModel:
    """A stand-in model (vectors only move around here): a text's vector is its length."""

    model_id = "text-length"

    def embed(self, texts: Sequence[str]) -> np.ndarray[Any, Any]:
        """One vector per text."""
        return np.array([[len(text), 1.0, 0.0] for text in texts], dtype=np.float32)


def _order(row: dict[str, Any]) -> str:
    return json.dumps(row, sort_keys=True)


def snapshot(pool: ConnectionPool) -> Snapshot:
    """Every row of every table, every tenant, as JSON, in a stable order."""
    found: Snapshot = {}
    with owner_connection(pool) as conn:
        tables = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
            " AND tablename <> 'schema_migrations' ORDER BY tablename"
        ).fetchall()
        generated = generated_columns(conn)
        for (table,) in tables:
            rows = conn.execute(
                sql.SQL("SELECT to_jsonb(t) - %(generated)s::text[] FROM {} AS t").format(
                    sql.Identifier(table)
                ),
                {"generated": generated.get(table, [])},
            ).fetchall()
            found[table] = sorted(
                (row[0] for row in rows), key=lambda r: json.dumps(r, sort_keys=True)
            )
    return found


def split(
    rows: list[dict[str, Any]], tenant: str, **where: Any
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The rows of ``tenant`` matching every ``where`` (a value, or a set of values), and the
    others."""

    def matches(row: dict[str, Any]) -> bool:
        if row.get("tenant_id") != tenant:
            return False
        return all(
            row.get(column) in wanted if isinstance(wanted, set) else row.get(column) == wanted
            for column, wanted in where.items()
        )

    return [r for r in rows if matches(r)], [r for r in rows if not matches(r)]


@dataclass(frozen=True)
class World:
    """The ids the purge tests look for."""

    tenant: str
    happy: UUID
    """The fact every version of which has expired (``mood`` is ``ephemeral``)."""
    sad: UUID
    """The fact that superseded it, still current."""


def build_world(store: MemoryStore, clock: ManualClock, tenant: str) -> World:
    """Episodes and facts of every kind the purge decides about, ending at ``PURGE_AT``.

    - e1 (ephemeral) sources a current ``city`` fact (standard): it becomes a stub.
    - e2 (ephemeral) is cited by nothing, e7 (``session``) is alone in its ended session: both go.
    - e3, e6, e8 (standard) stay; so does e5 (``session``), its session s1 still recent (e6).
    - e4 (ephemeral) sources ``hal``'s current mood: a stub, unless a test holds hal.
    - ``mood`` (ephemeral): happy from T0, superseded an hour later by sad; a weak signal for
      zed waits a day and expires.
    """
    clock.set(T0)
    declare(store, tenant, "city", "string")
    declare(store, tenant, "mood", "string", retention_class="ephemeral", weak_window_days=1)
    at = "2026-06-01T00:00:00Z"

    def episode(episode_id: str, **extra: Any) -> None:
        record(store, tenant, episode_id, at, text=f"the text of {episode_id}", **extra)

    episode("e1", retention_class="ephemeral", subjects=["mira"])
    episode("e2", retention_class="ephemeral")
    episode("e3")
    episode("e4", retention_class="ephemeral", subjects=["hal"])
    episode("e5", retention_class="session", session_id="s1")
    episode("e7", retention_class="session", session_id="s2")
    assert assert_value(store, tenant, "e1", "Oslo", at, attribute="city").status == "written"
    happy = assert_value(store, tenant, "e3", "happy", at, attribute="mood")
    grim = assert_value(store, tenant, "e4", "grim", at, subject="hal", attribute="mood")
    assert grim.status == "written"
    weak = {
        "evidence": "",
        "subject": "zed",
        "attribute": "mood",
        "change": "new",
        "value": "calm",
        "strength": "weak",
    }
    [(_, [buffered])] = store.episodes.record_with_candidates(
        tenant, [({"id": "e8", "occurred_at": at, "text": "the text of e8"}, [weak])]
    )
    assert buffered.status == "buffered"
    clock.set(T0 + timedelta(hours=1))
    sad = assert_value(store, tenant, "e3", "sad", "2026-06-01T01:00:00Z", attribute="mood")
    clock.set(T0 + timedelta(hours=36))
    record(store, tenant, "e6", "2026-06-02T12:00:00Z", text="the text of e6", session_id="s1")
    clock.set(PURGE_AT)
    assert happy.fact is not None
    assert sad.fact is not None
    return World(tenant=tenant, happy=happy.fact.fact_id, sad=sad.fact.fact_id)
