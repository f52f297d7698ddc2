"""A purge deletes the weak signals and extraction jobs that go in one statement each.

The purged episodes' signals and jobs go with those past their time, counted once; the episodes
reduced to stubs are not asked to lose them a second time. Every statement the purge sends is
recorded on the store's one pooled connection.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from psycopg_pool import ConnectionPool

from store.db.clock import ManualClock
from store.db.database import make_pool
from store.service import MemoryStore
from tests.helpers import owner_connection
from tests.retention_helpers import PURGE_AT, LengthModel, build_world

SENT: list[str] = []


class _Recording(psycopg.Cursor[Any]):
    """A cursor that notes the text of every statement it sends."""

    def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
        SENT.append(query if isinstance(query, str) else repr(query))
        return super().execute(query, params, **kwargs)


@pytest.fixture
def one_connection(conninfo: str) -> Iterator[ConnectionPool]:
    """A pool of one connection, whose cursors record what they send."""
    with make_pool(conninfo, max_size=1) as opened:
        with opened.connection() as conn:
            conn.cursor_factory = _Recording
        yield opened


def test_a_purge_deletes_signals_and_jobs_in_one_statement_each(
    one_connection: ConnectionPool, clock: ManualClock, tenant: str
) -> None:
    store = MemoryStore(one_connection, clock=clock, embedder=LengthModel())
    world = build_world(store, clock, tenant)
    with owner_connection(one_connection) as conn:
        for episode_id in ("e1", "e2"):  # a stub's and a deleted episode's
            conn.execute(
                "INSERT INTO extraction_jobs (tenant_id, episode_id, status, prompt_version,"
                " queued_at, run_after) VALUES (%(t)s, %(e)s, 'queued', 'v1', %(at)s, %(at)s)",
                {"t": tenant, "e": episode_id, "at": PURGE_AT - timedelta(days=2)},
            )
        conn.commit()
    SENT.clear()
    counts = store.retention.purge_tenant(world.tenant, receipt_retention=timedelta(days=90))
    deletes = {
        table: [q for q in SENT if re.search(rf"DELETE FROM {table}\b", q)]
        for table in ("weak_signals", "extraction_jobs")
    }
    assert {table: len(found) for table, found in deletes.items()} == {
        "weak_signals": 1,
        "extraction_jobs": 1,
    }
    assert (counts.weak_signals_deleted, counts.extraction_jobs_deleted) == (1, 2)
    with owner_connection(one_connection) as conn:
        left = conn.execute(
            "SELECT (SELECT count(*) FROM extraction_jobs WHERE tenant_id = %(t)s),"
            " (SELECT count(*) FROM weak_signals WHERE tenant_id = %(t)s)",
            {"t": tenant},
        ).fetchone()
    assert left == (0, 0)
