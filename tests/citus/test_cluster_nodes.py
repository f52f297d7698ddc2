"""The test cluster itself: two active workers behind the coordinator, the schema migrated on
it, and the store writing and reading a tenant's fact through it."""

from __future__ import annotations

import psycopg

from store.db.migrate import pending_migrations
from store.service import MemoryStore
from tests.citus_helpers import SHARD_COUNT, Cluster
from tests.helpers import KEY, assert_value, declare, record


def test_the_coordinator_has_two_active_workers_and_a_small_shard_count(
    citus_cluster: Cluster, citus_conninfo: str
) -> None:
    with psycopg.connect(citus_conninfo) as conn:
        workers = conn.execute(
            "SELECT node_name, node_port FROM citus_get_active_worker_nodes() ORDER BY node_port"
        ).fetchall()
        shard_count = conn.execute("SHOW citus.shard_count").fetchone()
        assert pending_migrations(conn) == []
    assert workers == [("127.0.0.1", citus_cluster.port + 1), ("127.0.0.1", citus_cluster.port + 2)]
    assert shard_count == (str(SHARD_COUNT),)


def test_the_store_writes_and_reads_a_fact_through_the_coordinator(
    store: MemoryStore, tenant: str
) -> None:
    declare(store, tenant)
    record(store, tenant, "e1", "2026-05-01T00:00:00Z", "Mira's passport expires in June")
    assert_value(store, tenant, "e1", "2026-06-30")
    current = store.facts.current(tenant, *KEY)
    assert current.value == "2026-06-30"
