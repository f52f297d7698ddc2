"""The bulk import and the batches on distributed tables: the single node's tests of the
import (tests/store/test_import.py, its equivalence with one call at a time and its vectors,
and ``sgam import`` itself) on the coordinator, and a batch of episodes large enough for its
vectors to be copied in, every row of it on the tenant's worker.

The batch routes over HTTP (``/v1/episodes/batch``, and a recorded episode's candidates) run
in tests/citus/test_cluster_conformance.py and test_cluster_http.py.
"""

from __future__ import annotations

from psycopg_pool import ConnectionPool

from store.db.clock import ManualClock
from store.service import MemoryStore
from tests.citus_helpers import Cluster, shard_port, single_node_tests, tenant_rows_by_worker
from tests.cli import test_import_cli
from tests.retention_helpers import LengthModel
from tests.store import test_import, test_import_embed, test_import_equivalence
from tests.store.test_batch_vectors import copy_size_batch
from tests.store.test_import import HISTORY, import_text, new_tenant

globals().update(single_node_tests(test_import))
globals().update(single_node_tests(test_import_equivalence))
globals().update(single_node_tests(test_import_embed))
globals().update(
    single_node_tests(
        test_import_cli, only=["test_sgam_import_reports_counts_and_refusals_by_line"]
    )
)


def test_a_batch_of_copy_size_is_recorded_whole_on_the_tenants_worker(
    citus_cluster: Cluster, pool: ConnectionPool, clock: ManualClock, tenant: str
) -> None:
    store = MemoryStore(pool, clock=clock, embedder=LengthModel())
    batch = copy_size_batch()

    recorded = store.episodes.record_batch(tenant, batch)

    assert [episode.id for episode in recorded] == [item["id"] for item in batch]
    with pool.connection() as conn:
        home = shard_port(conn, "tenants", tenant)
    held = tenant_rows_by_worker(citus_cluster, tenant)
    assert list(held) == [home]
    assert (held[home]["episodes"], held[home]["episode_vectors"]) == (len(batch), len(batch))


def test_an_import_of_tenants_on_both_workers_puts_each_ones_rows_on_its_worker(
    citus_cluster: Cluster, store: MemoryStore, pool: ConnectionPool
) -> None:
    homes: dict[str, int] = {}
    with pool.connection() as conn:
        while len(set(homes.values())) < 2 or len(homes) < 3:  # tenants of both workers
            tenant = new_tenant(store, "spread-import")
            homes[tenant] = shard_port(conn, "tenants", tenant)
    lines = [line for tenant in homes for line in import_text(tenant, HISTORY)]

    outcome = store.episodes.import_lines(lines)

    assert outcome.episodes_recorded == 6 * len(homes)
    held = {tenant: tenant_rows_by_worker(citus_cluster, tenant) for tenant in homes}
    assert {tenant: list(rows) for tenant, rows in held.items()} == {
        tenant: [home] for tenant, home in homes.items()
    }
    # Each tenant imported the same history: the same rows, all on its worker.
    tables = [rows[homes[tenant]] for tenant, rows in held.items()]
    assert tables == [tables[0]] * len(tables)
    assert tables[0]["episodes"] == 6
    assert tables[0]["fact_versions"] > 0
