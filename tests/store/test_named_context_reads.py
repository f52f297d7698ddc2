"""The named context's few statements: a merged subject's id and an attribute's old name asked
together are resolved by one lookup, a block without evidence cites its episodes by their
times alone, and the snapshot opens its transaction and names its tenant in one round trip."""

from __future__ import annotations

import psycopg
import pytest
from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool

from retrieval.search.embeddings import Embedder
from store.contract.reads import ContextResult, RenamedAttribute
from store.db.clock import ManualClock
from store.db.snapshot import ReadSnapshot
from store.errors import StoreError
from tests.read_helpers import ReadPath, read_path


@pytest.fixture
def reader(pool: ConnectionPool, clock: ManualClock, embedder: Embedder) -> ReadPath:
    return read_path(pool, clock, embedder)


def _merged_and_renamed(reader: ReadPath) -> None:
    """Mira's city under ``mira-2``, merged into ``mira``; ``home_city`` renamed ``city``."""
    reader.at("2026-05-01T10:00:00Z")
    reader.declare("home_city", "The city the person lives in")
    reader.record("e1", "2026-05-01T09:00:00Z", "Mira lives in Lisbon.", subjects=["mira-2"])
    reader.record("e2", "2026-05-02T09:00:00Z", "Mira's friend Ada lives in Turin.")
    reader.assert_value("e1", "mira-2", "home_city", "Lisbon", "2026-05-01T09:00:00Z")
    reader.assert_value("e2", "ada", "home_city", "Turin", "2026-05-02T09:00:00Z")
    reader.tick()
    reader.store.subjects.merge(reader.tenant, "mira-2", into="mira")
    reader.tick()
    reader.store.admin.migrate_attribute(
        reader.tenant, "home_city", {"attribute": "city", "value_type": "string"}
    )
    reader.tick()


def _where(reader: ReadPath, subject: str, attribute: str, *, evidence_k: int) -> ContextResult:
    return reader.context(
        "Where does Mira live?", subject=subject, attributes=[attribute], evidence_k=evidence_k
    )


def test_a_merged_id_and_an_old_name_asked_together_read_the_survivors_new_key(
    reader: ReadPath,
) -> None:
    _merged_and_renamed(reader)

    result = _where(reader, "mira-2", "home_city", evidence_k=0)

    assert result.plan.subject == "mira"
    assert result.plan.attributes == ("city",)
    assert result.plan.migrated_from == [
        RenamedAttribute(attribute="city", migrated_from="home_city")
    ]
    assert [(f.subject, f.attribute, f.value, f.source_episode_id) for f in result.facts] == [
        ("mira", "city", "Lisbon", "e1")
    ]
    assert [c.episode_id for c in result.citations] == ["e1"]
    assert "Lisbon" in result.block
    assert "Turin" not in result.block
    receipts = reader.store.receipts.decision(reader.tenant, result.decision_id).receipts
    assert {receipt.memory_type for receipt in receipts} == {"semantic"}


def test_the_one_lookup_answers_each_side_alone(
    reader: ReadPath, pool: ConnectionPool, embedder: Embedder
) -> None:
    _merged_and_renamed(reader)

    def lookups(names: list[str], subject: str) -> tuple[dict[str, str], str]:
        return reader.store.snapshots.read(
            reader.tenant, lambda snapshot: snapshot.renames_and_survivor(names, subject)
        )

    assert lookups(["home_city"], "mira-2") == ({"home_city": "city"}, "mira")
    assert lookups(["city"], "mira-2") == ({}, "mira")
    assert lookups(["home_city", "city"], "ada") == ({"home_city": "city"}, "ada")
    assert lookups(["city"], "nobody") == ({}, "nobody")
    # Another tenant sees neither the rename nor the merge.
    other = read_path(pool, reader.clock, embedder)
    assert other.store.snapshots.read(
        other.tenant, lambda snapshot: snapshot.renames_and_survivor(["home_city"], "mira-2")
    ) == ({}, "mira-2")


def test_a_named_context_without_evidence_cites_its_episodes_times_as_with_evidence(
    reader: ReadPath,
) -> None:
    _merged_and_renamed(reader)

    without = _where(reader, "mira", "city", evidence_k=0)
    asked = _where(reader, "mira", "city", evidence_k=1)

    assert without.citations == [c for c in asked.citations if c.episode_id == "e1"]
    assert reader.store.snapshots.read(
        reader.tenant, lambda snapshot: snapshot.episode_times(["e1", "e2", "missing"])
    ) == {
        episode_id: episode.occurred_at
        for episode_id, episode in reader.store.snapshots.read(
            reader.tenant, lambda snapshot: snapshot.episodes(["e1", "e2"])
        ).items()
    }


def test_a_snapshot_is_one_repeatable_read_block_of_its_tenant_and_hands_its_connection_back(
    reader: ReadPath, pool: ConnectionPool
) -> None:
    def settings(snapshot: ReadSnapshot) -> tuple[str, str, str]:
        conn = snapshot._conn
        row = conn.execute(
            "SELECT current_setting('transaction_isolation'), current_setting('sgam.tenant_id')"
        ).fetchone()
        assert row is not None
        return row[0], row[1], TransactionStatus(conn.pgconn.transaction_status).name

    isolation, tenant, status = reader.store.snapshots.read(reader.tenant, settings)
    assert (isolation, tenant, status) == ("repeatable read", reader.tenant, "INTRANS")

    def fails(snapshot: ReadSnapshot) -> None:
        snapshot._conn.execute("SELECT 1 / 0")

    with pytest.raises((StoreError, psycopg.Error)):
        reader.store.snapshots.read(reader.tenant, fails)
    # Every pooled connection is idle, out of autocommit and outside any tenant.
    for _ in range(pool.get_stats().get("pool_size", 1)):
        with pool.connection() as conn:
            assert not conn.autocommit
            assert conn.pgconn.transaction_status == TransactionStatus.IDLE
            assert conn.execute("SELECT current_setting('sgam.tenant_id', true)").fetchone() in (
                (None,),
                ("",),
            )
