"""Merging a duplicate subject into another, on the real database.

Keys only the duplicate holds move with their history exactly as it was; keys both hold take
the duplicate's values through the write path (a later start supersedes, an equal start with
another value is a conflict). The duplicate's id then resolves to the survivor for reads,
writes and erasure. Refused merges, tenants and chains of merges, which every surface answers
the same way, are scenarios of tests/conformance/test_subject_merge.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from store.contract.facts import Fact
from store.contract.receipts import owner_key
from store.contract.results import MergeResult
from store.db.clock import ManualClock
from store.errors import LegalHold, NotFound
from store.service import MemoryStore
from tests.conftest import ts
from tests.dbsearch import tenant_rows
from tests.helpers import assert_value, declare, owner_connection, receipt_secret, record


def _world(store: MemoryStore, tenant: str) -> None:
    """Attributes, and episodes naming the duplicate ``mira-2`` and the survivor ``mira``."""
    declare(store, tenant)
    declare(store, tenant, "home_city", "string")
    record(store, tenant, "e1", "2026-05-01T09:00:00Z", "Mira's passport deadline is 2026-07-15.")
    record(
        store, tenant, "e2", "2026-05-02T09:00:00Z", "Mira lives in Lisbon.", subjects=["mira-2"]
    )
    record(store, tenant, "e3", "2026-05-03T09:00:00Z", "Mira moved to Porto.")
    record(store, tenant, "e4", "2026-05-04T09:00:00Z", "Mira's deadline moved to 2026-08-01.")


def _moved(fact: Fact) -> dict[str, Any]:
    """A version as it should read after moving: all of it but the subject."""
    return fact.model_dump(exclude={"subject"})


def test_a_key_only_the_duplicate_holds_moves_with_its_history_intact(
    store: MemoryStore, tenant: str, clock: ManualClock, pool: ConnectionPool
) -> None:
    _world(store, tenant)
    assert_value(store, tenant, "e1", "2026-07-15", subject="mira")
    assert_value(store, tenant, "e2", "Lisbon", subject="mira-2", attribute="home_city")
    clock.set(ts("2026-06-02T00:00:00Z"))
    assert_value(store, tenant, "e3", "Porto", subject="mira-2", attribute="home_city")
    clock.set(ts("2026-06-03T00:00:00Z"))
    before = store.facts.history(tenant, "mira-2", "home_city")
    assert len(before) == 3  # Lisbon open, retired; Lisbon closed; Porto

    merged = store.subjects.merge(tenant, "mira-2", into="mira")

    assert merged == MergeResult(
        merged="mira-2",
        into="mira",
        versions_moved=3,
        conflicts_moved=0,
        episodes_linked=2,
        merge_id=merged.merge_id,
    )
    after = store.facts.history(tenant, "mira", "home_city")
    assert [_moved(fact) for fact in after] == [_moved(fact) for fact in before]
    assert {fact.subject for fact in after} == {"mira"}
    # The old id reads the survivor's memory.
    assert store.facts.history(tenant, "mira-2", "home_city") == after
    assert store.facts.current(tenant, "mira-2", "home_city").value == "Porto"
    assert store.subjects.profile(tenant, "mira-2") == store.subjects.profile(tenant, "mira")
    assert store.subjects.list(tenant).subjects == ["mira"]
    assert store.episodes.get(tenant, "e2").subjects == ["mira"]
    # Each version the survivor now believes left a write receipt at the merge, owned by it.
    mira = owner_key(tenant, "subject", "mira", secret=receipt_secret(pool, tenant))
    with owner_connection(pool) as conn:
        written = conn.execute(
            "SELECT version, provenance FROM receipts WHERE tenant_id = %s AND owner_key = %s"
            " AND action = 'write' AND recorded_at = %s",
            (tenant, mira, ts("2026-06-03T00:00:00Z")),
        ).fetchall()
    believed = [fact for fact in after if fact.retired_at is None]
    assert sorted(written) == sorted((str(f.version_id), f.source_episode_id) for f in believed)
    assert len(believed) == 2  # Lisbon until Porto, then Porto


def test_a_shared_key_takes_the_duplicates_later_start_as_a_supersession(
    store: MemoryStore, tenant: str, clock: ManualClock
) -> None:
    _world(store, tenant)
    assert_value(store, tenant, "e1", "2026-07-15", "2026-05-01T09:00:00Z", subject="mira")
    assert_value(store, tenant, "e4", "2026-08-01", "2026-05-04T09:00:00Z", subject="mira-2")
    clock.set(ts("2026-06-02T00:00:00Z"))

    merged = store.subjects.merge(tenant, "mira-2", into="mira")

    assert (merged.versions_moved, merged.conflicts_moved) == (1, 0)
    current = store.facts.history(tenant, "mira", "passport_deadline")
    believed = [
        (fact.value, fact.valid_from, fact.valid_to, fact.source_episode_id)
        for fact in current
        if fact.retired_at is None
    ]
    assert believed == [
        ("2026-07-15", ts("2026-05-01T09:00:00Z"), ts("2026-05-04T09:00:00Z"), "e1"),
        ("2026-08-01", ts("2026-05-04T09:00:00Z"), None, "e4"),
    ]
    assert store.facts.current(tenant, "mira-2", "passport_deadline").value == "2026-08-01"
    assert store.subjects.list(tenant).subjects == ["mira"]
    # The export of either id holds both histories: the duplicate's version, retired, too.
    exported = store.subjects.export(tenant, "mira-2")
    assert exported.subject == "mira"
    assert sorted((v.subject, v.value, v.retired_at is None) for v in exported.versions) == [
        ("mira", "2026-07-15", False),
        ("mira", "2026-07-15", True),
        ("mira", "2026-08-01", True),
        ("mira-2", "2026-08-01", False),
    ]


def test_a_shared_key_with_an_equal_start_and_another_value_becomes_a_conflict(
    store: MemoryStore, tenant: str
) -> None:
    _world(store, tenant)
    start = "2026-05-01T09:00:00Z"
    assert_value(store, tenant, "e1", "2026-07-15", start, subject="mira")
    assert_value(store, tenant, "e4", "2026-08-01", start, subject="mira-2")

    merged = store.subjects.merge(tenant, "mira-2", into="mira")

    assert merged.versions_moved == 1
    assert store.facts.current(tenant, "mira", "passport_deadline").value == "2026-07-15"
    [conflict] = store.conflicts.list(tenant).conflicts
    assert (conflict.subject, conflict.attribute, conflict.valid_from) == (
        "mira",
        "passport_deadline",
        ts(start),
    )
    assert (conflict.challenger.value, conflict.challenger.source_episode_id) == (
        "2026-08-01",
        "e4",
    )
    # Nothing of the duplicate's value is left believed under its own id.
    assert store.conflicts.list(tenant, subject="mira-2").conflicts == [conflict]


def test_open_conflicts_of_the_duplicate_move_to_the_survivor(
    store: MemoryStore, tenant: str
) -> None:
    _world(store, tenant)
    start = "2026-05-01T09:00:00Z"
    assert_value(store, tenant, "e1", "2026-07-15", start, subject="mira-2")
    assert_value(store, tenant, "e4", "2026-08-01", start, subject="mira-2")
    [before] = store.conflicts.list(tenant).conflicts

    merged = store.subjects.merge(tenant, "mira-2", into="mira")

    assert (merged.versions_moved, merged.conflicts_moved) == (1, 1)
    [after] = store.conflicts.list(tenant).conflicts
    assert after == before.model_copy(update={"subject": "mira"})


@pytest.mark.parametrize("erased", ["mira", "mira-2"])
def test_erasing_either_id_erases_both_and_the_merge(
    store: MemoryStore, tenant: str, pool: Any, erased: str
) -> None:
    _world(store, tenant)
    assert_value(store, tenant, "e1", "2026-07-15", "2026-05-01T09:00:00Z", subject="mira")
    assert_value(store, tenant, "e4", "2026-08-01", "2026-05-04T09:00:00Z", subject="mira-2")
    assert_value(store, tenant, "e2", "Lisbon", subject="mira-2", attribute="home_city")
    store.subjects.merge(tenant, "mira-2", into="mira")

    erasure = store.erasure.erase_subject(tenant, erased)

    assert erasure.episodes_deleted == 3  # e1, e2, e4; e3 named no one
    rows = tenant_rows(pool.conninfo, tenant)
    for table in ("fact_versions", "conflicts", "expiries", "retractions", "subject_merges"):
        assert rows.get(table, []) == [], table
    assert [row for row in rows.get("episodes", []) if "mira" in row] == []
    for name in ("mira", "mira-2"):
        with pytest.raises(NotFound):
            store.subjects.export(tenant, name)
        with pytest.raises(NotFound):
            store.erasure.erase_subject(tenant, name)


def test_a_hold_on_the_duplicate_holds_the_survivor_and_refuses_erasing_either(
    store: MemoryStore, tenant: str
) -> None:
    _world(store, tenant)
    assert_value(store, tenant, "e1", "2026-07-15", subject="mira")
    assert_value(store, tenant, "e2", "Lisbon", subject="mira-2", attribute="home_city")
    store.retention.place_hold(tenant, "mira-2")
    store.subjects.merge(tenant, "mira-2", into="mira")

    for name in ("mira", "mira-2"):
        with pytest.raises(LegalHold):
            store.erasure.erase_subject(tenant, name)
    store.retention.release_hold(tenant, "mira")
    with pytest.raises(LegalHold):  # the duplicate's own hold still stands
        store.erasure.erase_subject(tenant, "mira")
    store.retention.release_hold(tenant, "mira-2")
    assert store.erasure.erase_subject(tenant, "mira").fact_versions_deleted == 2


def test_a_shared_key_keeps_the_end_an_expiry_gave_the_duplicates_value(
    store: MemoryStore, tenant: str
) -> None:
    _world(store, tenant)
    assert_value(store, tenant, "e1", "2026-07-15", "2026-05-01T09:00:00Z", subject="mira")
    assert_value(store, tenant, "e4", "2026-08-01", "2026-05-02T09:00:00Z", subject="mira-2")
    store.facts.expire(
        tenant, "mira-2", "passport_deadline", at="2026-05-05T00:00:00Z", source_episode_id="e3"
    )

    store.subjects.merge(tenant, "mira-2", into="mira")

    believed = [
        (fact.value, fact.valid_from, fact.valid_to, fact.ended_by_kind)
        for fact in store.facts.history(tenant, "mira", "passport_deadline")
        if fact.retired_at is None
    ]
    assert believed == [
        ("2026-07-15", ts("2026-05-01T09:00:00Z"), ts("2026-05-02T09:00:00Z"), "fact"),
        ("2026-08-01", ts("2026-05-02T09:00:00Z"), ts("2026-05-05T00:00:00Z"), "expiry"),
    ]
