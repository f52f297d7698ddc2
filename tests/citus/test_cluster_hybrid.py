"""Lexical and hybrid evidence on the cluster: the single node's tests, on a tenant's shard.

The full-text column and its (tenant, document) GIN index are distributed with ``episodes``;
a lexical or hybrid search names its tenant in every CTE, so it runs on the tenant's worker.

Left out: the single node's test that takes the application's tenant filters out of the
search. Without them the statement spans every shard, and Citus plans no count in a lateral
subquery over a CTE there ("cannot push down this subquery"): it refuses the search rather
than answering it, so no row of another tenant can come back either way.
"""

from __future__ import annotations

from psycopg_pool import ConnectionPool

from retrieval.reader import Reader
from retrieval.search.embeddings import Embedder
from store.contract.reads import SearchMode, SearchRequest
from store.db.clock import ManualClock
from store.service import MemoryStore
from tests.citus import test_cluster_placement
from tests.citus_helpers import single_node_tests
from tests.read_helpers import read_path
from tests.store import test_hybrid_evidence

_FILTERS_REMOVED = "test_with_the_tenant_filters_removed_the_wall_still_holds_the_words"

globals()["explained"] = test_cluster_placement.explained  # a statement's plan, as a notice
globals().update(
    single_node_tests(
        test_hybrid_evidence,
        only=[
            name
            for name in vars(test_hybrid_evidence)
            if name.startswith("test_") and name != _FILTERS_REMOVED
        ],
    )
)


def test_a_lexical_and_a_hybrid_search_run_on_the_tenants_worker_as_one_task(
    conninfo: str,
    pool: ConnectionPool,
    clock: ManualClock,
    embedder: Embedder,
    explained: tuple[ConnectionPool, list[str]],
) -> None:
    written = read_path(pool, clock, embedder)
    written.record_batch(test_hybrid_evidence.order_confirmations(20, subjects=["acme"]))
    home = test_cluster_placement._home(conninfo, written.tenant)
    one, plans = explained  # its statements' plans come back as notices: reads only
    reader = Reader(MemoryStore(one, clock=clock, embedder=embedder), embedder)
    plans.clear()

    modes: tuple[SearchMode, ...] = ("lexical", "hybrid")
    # The whole tenant's scope, and a subject's (its episodes matched in memory).
    for subject in (None, "acme"):
        for mode in modes:
            request = SearchRequest(
                query=test_hybrid_evidence.QUESTION, k=5, mode=mode, subject=subject
            )
            assert reader.search(written.tenant, request).search.mode == mode

    distributed = [plan for plan in plans if "Citus Adaptive" in plan]
    # One statement a search, and for a subject's one more first: its merged name resolved.
    assert len(distributed) == 6, plans
    test_cluster_placement._assert_on_one_worker(distributed, home)
