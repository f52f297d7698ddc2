"""Erasure and purge on the cluster leave no text behind, on the coordinator's answers and in
the workers' shards.

The single node's erasure and purge tests (tests/store/test_erasure.py, and the purge's of
tests/store/test_retention.py with its fixtures ``embedded`` and ``world``) run here on the
coordinator; two more read every text-like column of every shard on the workers themselves,
before (each needle where it was written) and after (nowhere).
"""

from __future__ import annotations

from store.db.clock import ManualClock
from store.service import MemoryStore
from tests.citus_helpers import Cluster, find_needles_on_shards, single_node_tests
from tests.retention_helpers import World
from tests.store import test_erasure, test_retention
from tests.store.test_erasure import EXPECTED_BEFORE, NEEDLES, build_world, erase_mira, new_tenant
from tests.store.test_retention import KEEP_RECEIPTS

globals().update(single_node_tests(test_erasure))
globals().update(
    single_node_tests(
        test_retention,
        only=[
            "test_a_purge_deletes_exactly_what_expired_and_keeps_provenance_as_stubs",
            "test_reads_after_a_purge_say_existed_purged_never_fail",
            "test_a_second_purge_finds_nothing_and_leaves_no_tombstone",
        ],
    )
)

PURGED_TEXTS = [f"the text of {episode}" for episode in ("e1", "e2", "e4", "e7")]
"""The episodes the purge of the retention world deletes (e2, e7) or stubs (e1, e4)."""


def test_no_shard_on_any_worker_keeps_anything_of_an_erased_subject(
    citus_cluster: Cluster, store: MemoryStore, clock: ManualClock
) -> None:
    tenant = build_world(store, clock, new_tenant(store, "erase-shards")).tenant
    assert find_needles_on_shards(citus_cluster, tenant, NEEDLES) == EXPECTED_BEFORE

    erase_mira(store, clock, tenant)

    assert find_needles_on_shards(citus_cluster, tenant, NEEDLES) == {n: set() for n in NEEDLES}


def test_no_shard_on_any_worker_keeps_the_text_of_a_purged_episode(
    citus_cluster: Cluster, embedded: MemoryStore, world: World
) -> None:
    before = find_needles_on_shards(citus_cluster, world.tenant, PURGED_TEXTS)
    assert before == {text: {"episodes.text"} for text in PURGED_TEXTS}

    embedded.retention.purge_tenant(world.tenant, receipt_retention=KEEP_RECEIPTS)

    after = find_needles_on_shards(citus_cluster, world.tenant, PURGED_TEXTS)
    assert after == {text: set() for text in PURGED_TEXTS}
