"""Retention: classes decide what the purge deletes, stubs keep provenance, holds keep all.

The purge runs at a frozen clock (``PURGE_AT``) over a world built to cover each rule; each test
compares whole snapshots of every table before and after, less the expected deletions.
"""

from __future__ import annotations

import copy
import time
from datetime import timedelta
from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from server.runtime.purger import Purger
from store.api.retention import PURGE_LOCK
from store.contract.receipts import owner_key
from store.db.clock import ManualClock
from store.episodes.record import content_hash
from store.errors import Conflict, InvalidInput, NotFound
from store.service import MemoryStore
from tests.helpers import owner_connection, receipt_secret, record
from tests.retention_helpers import PURGE_AT, LengthModel, World, build_world, snapshot, split
from tests.store.test_import import episode_line, import_text

KEEP_RECEIPTS = timedelta(days=90)
"""Receipts stay in the world's tests: only episodes, facts and weak signals age out."""


@pytest.fixture
def embedded(pool: ConnectionPool, clock: ManualClock) -> MemoryStore:
    """The store, each episode embedded by a stand-in model as it is recorded."""
    return MemoryStore(pool, clock=clock, embedder=LengthModel())


@pytest.fixture
def world(embedded: MemoryStore, clock: ManualClock, tenant: str) -> World:
    """The world of ``build_world`` in the test's tenant, the clock at ``PURGE_AT``."""
    return build_world(embedded, clock, tenant)


def _expected_after_purge(before: dict[str, Any], world: World, secret: bytes) -> dict[str, Any]:
    """``before`` less what the purge of ``world`` (nobody held) deletes or empties."""
    expected = copy.deepcopy(before)
    t, stubbed, gone = world.tenant, {"e1", "e4"}, {"e1", "e2", "e4", "e7"}
    stubs, _ = split(before["episodes"], t, id=stubbed)
    _, kept = split(before["episodes"], t, id=gone)
    emptied: dict[str, Any] = {"text": None, "session_id": None, "metadata": {}}
    expected["episodes"] = [*kept, *(e | emptied | {"purged_at": "PURGED_AT"} for e in stubs)]
    for table in ("episode_vectors", "episode_subjects"):
        expected[table] = split(before[table], t, episode_id=gone)[1]
    versions = split(before["fact_versions"], t, fact_id=str(world.happy))[1]
    expected["fact_versions"] = [
        v | {"evidence": None} if v["tenant_id"] == t and v["source_episode_id"] in stubbed else v
        for v in versions
    ]
    expected["weak_signals"] = split(before["weak_signals"], t, subject="zed")[1]
    # The episodes deleted outright take their receipts: no id of theirs resolves any more.
    deleted = gone - stubbed
    owners = {owner_key(t, "episode", episode_id, secret=secret) for episode_id in deleted}
    expected["receipts"] = [
        r
        for r in before["receipts"]
        if r["tenant_id"] != t
        or not (
            r["owner_key"] in owners
            or (r["memory_type"] == "semantic" and r["provenance"] in deleted)
        )
    ]
    return expected


def _new_rows(after: dict[str, Any], before: dict[str, Any], table: str) -> list[Any]:
    return [row for row in after[table] if row not in before[table]]


def test_a_purge_deletes_exactly_what_expired_and_keeps_provenance_as_stubs(
    pool: ConnectionPool, embedded: MemoryStore, world: World
) -> None:
    t = world.tenant
    before = snapshot(pool)
    counts = embedded.retention.purge_tenant(t, receipt_retention=KEEP_RECEIPTS)
    after = snapshot(pool)
    expected = _expected_after_purge(before, world, receipt_secret(pool, t))
    receipts_gone = len(before["receipts"]) - len(expected["receipts"])
    assert receipts_gone > 0

    assert counts.model_dump(exclude={"tombstone_id"}) == {
        "tenant_id": t,
        "episodes_stubbed": 2,
        "episodes_deleted": 2,
        "vectors_deleted": 4,
        "fact_versions_deleted": 2,
        "facts_purged": 1,
        "receipts_deleted": receipts_gone,
        "weak_signals_deleted": 1,
        "extraction_jobs_deleted": 0,
    }
    [tombstone] = _new_rows(after, before, "tombstones")
    assert tombstone | {"target_hash": None, "erased_at": None} == {
        "tenant_id": t,
        "tombstone_id": str(counts.tombstone_id),
        "target": "purge",
        "target_hash": None,
        "erased_at": None,
        "episodes_deleted": 2,
        "episodes_stubbed": 2,
        "fact_versions_deleted": 2,
        "conflicts_deleted": 0,
        "expiries_deleted": 0,
        "facts_retracted": 0,
        "checkpoints_deleted": 0,
        "vectors_deleted": 4,
        "receipts_deleted": receipts_gone,
        "weak_signals_deleted": 1,
        "extraction_jobs_deleted": 0,
        "episode_hashes": sorted(
            content_hash(f"the text of {e}") for e in ("e1", "e2", "e4", "e7")
        ),
    }
    [purged_fact] = _new_rows(after, before, "purged_facts")
    assert (purged_fact["tenant_id"], purged_fact["fact_id"]) == (t, str(world.happy))
    # Nothing else changed: every other row of every table, every tenant, is as it was.
    [purged_at] = {row["purged_at"] for row in split(after["episodes"], t, id={"e1", "e4"})[0]}
    expected["episodes"] = [
        row | {"purged_at": purged_at} if row.get("purged_at") == "PURGED_AT" else row
        for row in expected["episodes"]
    ]
    expected["tombstones"] = [*before["tombstones"], tombstone]
    expected["purged_facts"] = [*before["purged_facts"], purged_fact]
    for table in after:
        assert sorted(map(repr, after[table])) == sorted(map(repr, expected[table])), table


def test_reads_after_a_purge_say_existed_purged_never_fail(
    embedded: MemoryStore, world: World, clock: ManualClock
) -> None:
    t = world.tenant
    embedded.retention.purge_tenant(t, receipt_retention=KEEP_RECEIPTS)
    e1 = embedded.episodes.get(t, "e1")
    assert (e1.text, e1.purged_at, e1.erased_at, e1.content_hash, e1.subjects) == (
        None,
        clock(),
        None,
        content_hash("the text of e1"),
        [],
    )
    with pytest.raises(NotFound):
        embedded.episodes.get(t, "e2")
    assert embedded.episodes.get(t, "e5").text == "the text of e5"
    city = embedded.facts.current(t, "mira", "city")
    assert (city.value, city.source_episode_id) == ("Oslo", "e1")
    mood = embedded.facts.current(t, "mira", "mood")
    assert (mood.fact_id, mood.value, mood.supersedes) == (world.sad, "sad", world.happy)
    assert [v.fact_id for v in embedded.facts.history(t, "mira", "mood")] == [world.sad]
    assert embedded.retention.purged_facts(t, [world.happy, world.sad]) == {world.happy: clock()}
    # A purged id names one input for good.
    with pytest.raises(Conflict, match="was purged"):
        record(embedded, t, "e1", "2026-06-01T00:00:00Z", text="the text of e1")


def test_a_second_purge_finds_nothing_and_leaves_no_tombstone(
    pool: ConnectionPool, embedded: MemoryStore, world: World
) -> None:
    embedded.retention.purge_tenant(world.tenant, receipt_retention=KEEP_RECEIPTS)
    before = snapshot(pool)
    again = embedded.retention.purge_tenant(world.tenant, receipt_retention=KEEP_RECEIPTS)
    assert again.model_dump() == {
        "tenant_id": world.tenant,
        **dict.fromkeys(
            (
                "episodes_stubbed",
                "episodes_deleted",
                "vectors_deleted",
                "fact_versions_deleted",
                "facts_purged",
                "receipts_deleted",
                "weak_signals_deleted",
                "extraction_jobs_deleted",
            ),
            0,
        ),
        "tombstone_id": None,
    }
    assert snapshot(pool) == before


def test_a_dry_run_counts_what_would_go_and_changes_nothing(
    pool: ConnectionPool, embedded: MemoryStore, world: World
) -> None:
    before = snapshot(pool)
    dry = embedded.retention.purge_tenant(
        world.tenant, receipt_retention=KEEP_RECEIPTS, dry_run=True
    )
    assert snapshot(pool) == before
    real = embedded.retention.purge_tenant(world.tenant, receipt_retention=KEEP_RECEIPTS)
    assert dry.tombstone_id is None
    assert real.tombstone_id is not None
    assert dry.model_dump(exclude={"tombstone_id"}) == real.model_dump(exclude={"tombstone_id"})


def test_a_legal_hold_keeps_everything_of_its_subject_from_the_purge(
    pool: ConnectionPool, embedded: MemoryStore, world: World, clock: ManualClock
) -> None:
    t = world.tenant
    hold = embedded.retention.place_hold(t, "hal")
    assert (hold.subject, hold.status, hold.placed_at) == ("hal", "held", clock())
    # Refusing erasure under a hold is a scenario of tests/conformance/test_retention.py.
    counts = embedded.retention.purge_tenant(t, receipt_retention=KEEP_RECEIPTS)
    assert (counts.episodes_stubbed, counts.episodes_deleted) == (1, 2)  # e1; e2, e7: not e4
    e4 = embedded.episodes.get(t, "e4")
    assert (e4.text, e4.purged_at) == ("the text of e4", None)
    assert embedded.facts.current(t, "hal", "mood").value == "grim"

    released = embedded.retention.release_hold(t, "hal")
    assert (released.status, released.placed_at) == ("released", hold.placed_at)
    with pytest.raises(NotFound):
        embedded.retention.release_hold(t, "hal")
    later = embedded.retention.purge_tenant(t, receipt_retention=KEEP_RECEIPTS)
    assert (later.episodes_stubbed, later.episodes_deleted) == (1, 0)  # e4 sources grim
    assert embedded.episodes.get(t, "e4").purged_at == clock()
    assert embedded.erasure.erase_subject(t, "hal").status == "erased"


def test_receipts_and_finished_jobs_past_their_retention_go_unless_held(
    pool: ConnectionPool, embedded: MemoryStore, world: World
) -> None:
    t = world.tenant
    embedded.retention.place_hold(t, "mira")
    with owner_connection(pool) as conn:
        for episode_id, status in (("e3", "done"), ("e5", "dead"), ("e6", "queued")):
            conn.execute(
                "INSERT INTO extraction_jobs (tenant_id, episode_id, status, prompt_version,"
                " queued_at, run_after, finished_at)"
                " VALUES (%(t)s, %(e)s, %(s)s, 'v1', %(at)s, %(at)s, %(at)s)",
                {"t": t, "e": episode_id, "s": status, "at": PURGE_AT - timedelta(days=2)},
            )
        receipts = conn.execute(
            "SELECT count(*) FILTER (WHERE owner_key = %(mira)s), count(*) FROM receipts"
            " WHERE tenant_id = %(t)s",
            {"t": t, "mira": _subject_owner(pool, t, "mira")},
        ).fetchone()
    assert receipts is not None
    held, total = receipts
    assert held > 0
    assert total > held
    counts = embedded.retention.purge_tenant(t, receipt_retention=timedelta(hours=1))
    assert (counts.receipts_deleted, counts.extraction_jobs_deleted) == (total - held, 1)
    with owner_connection(pool) as conn:
        left = conn.execute(
            "SELECT owner_key FROM receipts WHERE tenant_id = %(t)s", {"t": t}
        ).fetchall()
        jobs = conn.execute(
            "SELECT episode_id, status FROM extraction_jobs WHERE tenant_id = %(t)s"
            " ORDER BY episode_id",
            {"t": t},
        ).fetchall()
    assert {row[0] for row in left} == {_subject_owner(pool, t, "mira")}
    assert jobs == [("e5", "dead"), ("e6", "queued")]


def _subject_owner(pool: ConnectionPool, tenant: str, subject: str) -> str:
    return owner_key(tenant, "subject", subject, secret=receipt_secret(pool, tenant))


def test_an_overridden_default_class_changes_what_the_purge_keeps(
    embedded: MemoryStore, world: World
) -> None:
    embedded.retention.declare_class(world.tenant, "ephemeral", {"keep_days": 30})
    counts = embedded.retention.purge_tenant(world.tenant, receipt_retention=KEEP_RECEIPTS)
    assert (counts.episodes_stubbed, counts.episodes_deleted, counts.fact_versions_deleted) == (
        0,
        1,  # e7 only: its session class still keeps a day
        0,
    )


def test_one_purge_runs_at_a_time_across_processes(
    pool: ConnectionPool, embedded: MemoryStore, world: World
) -> None:
    with owner_connection(pool) as other:
        other.autocommit = True
        other.execute("SELECT pg_advisory_lock(%s, %s)", PURGE_LOCK)
        assert embedded.retention.purge(receipt_retention=KEEP_RECEIPTS) is None
        assert embedded.episodes.get(world.tenant, "e2").text == "the text of e2"
        other.execute("SELECT pg_advisory_unlock(%s, %s)", PURGE_LOCK)
    report = embedded.retention.purge(receipt_retention=KEEP_RECEIPTS)
    assert report is not None
    [mine] = [counts for counts in report.tenants if counts.tenant_id == world.tenant]
    assert (mine.episodes_stubbed, mine.episodes_deleted) == (2, 2)
    with owner_connection(pool) as conn:
        free = conn.execute("SELECT pg_try_advisory_lock(%s, %s)", PURGE_LOCK).fetchone()
        assert free == (True,)
        conn.execute("SELECT pg_advisory_unlock(%s, %s)", PURGE_LOCK)


def test_the_server_s_purge_thread_purges_every_interval_until_stopped(
    embedded: MemoryStore, world: World
) -> None:
    purger = Purger(embedded, interval_s=0.05, receipt_retention=KEEP_RECEIPTS)
    purger.start()
    try:
        deadline = time.monotonic() + 30
        while _exists(embedded, world.tenant, "e2") and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        purger.stop(timeout=30)
    assert not _exists(embedded, world.tenant, "e2")
    assert embedded.episodes.get(world.tenant, "e1").purged_at is not None


def _exists(store: MemoryStore, tenant: str, episode_id: str) -> bool:
    try:
        store.episodes.get(tenant, episode_id)
    except NotFound:
        return False
    return True


def test_an_import_naming_an_undeclared_class_is_refused_at_its_line(
    store: MemoryStore, tenant: str
) -> None:
    history = [
        episode_line("i1", "2026-06-01T00:00:00Z"),
        episode_line("i2", "2026-06-01T00:00:00Z", retention_class="legal"),
    ]
    with pytest.raises(InvalidInput) as refused:
        store.episodes.import_lines(import_text(tenant, history))
    line, field = refused.value.detail.split(":")[0], refused.value.field
    assert (line, field) == ("line 2", "retention_class")
    with pytest.raises(NotFound):
        store.episodes.get(tenant, "i1")
    store.retention.declare_class(tenant, "legal", {"keep_days": 3650})
    assert store.episodes.import_lines(import_text(tenant, history)).recorded
