"""Writers to one key are serialized, writers to different keys do not block each other, and
one call's candidates are one transaction at one system time."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from threading import Barrier
from typing import Any

import numpy as np
import psycopg
import pytest
from psycopg_pool import ConnectionPool

from store.contract.results import UpdateResult
from store.db.clock import ManualClock
from store.db.locks import lock_keys, lock_tenants
from store.episodes.vectors import SharedBatches
from store.service import MemoryStore
from tests.conftest import ts
from tests.helpers import assert_value, declare, owner_connection, record
from tests.store.test_write_path import values

WRITERS = 8


def _race(store: MemoryStore, tenant: str, subject_of: list[str]) -> list[UpdateResult]:
    """Eight writers released together, writer i asserting value i from day i + 1."""
    barrier = Barrier(WRITERS)

    def write(i: int) -> UpdateResult:
        barrier.wait()
        return assert_value(
            store,
            tenant,
            f"e{i}",
            f"2026-07-{i + 10:02d}",
            f"2026-06-{i + 1:02d}T00:00:00Z",
            subject=subject_of[i],
        )

    with ThreadPoolExecutor(WRITERS) as executor:
        return list(executor.map(write, range(WRITERS)))


def _prepare(pool: ConnectionPool, tenant_suffix: str) -> tuple[MemoryStore, str]:
    store = MemoryStore(pool)  # the wall clock, as in production
    tenant = f"race-{tenant_suffix}"
    store.admin.create_tenant(tenant)
    declare(store, tenant)
    for i in range(WRITERS):
        record(store, tenant, f"e{i}", "2026-06-01T00:00:00Z", text=f"writer {i}")
    return store, tenant


def test_eight_writers_on_one_key_lose_nothing(pool: ConnectionPool) -> None:
    store, tenant = _prepare(pool, "one-key")
    results = _race(store, tenant, ["mira"] * WRITERS)
    assert Counter(r.status for r in results) == Counter(written=WRITERS)
    current = [
        f for f in store.facts.history(tenant, "mira", "passport_deadline") if f.retired_at is None
    ]
    # Whatever the arrival order, the result is the timeline of all eight values.
    assert [
        (f.value, f.valid_from.day, f.valid_to.day if f.valid_to else None) for f in current
    ] == [
        (f"2026-07-{i + 10:02d}", i + 1, i + 2 if i < WRITERS - 1 else None) for i in range(WRITERS)
    ]
    assert {f.fact_id for f in current} == {r.fact.fact_id for r in results if r.fact}


def test_eight_writers_on_different_keys_all_write(pool: ConnectionPool) -> None:
    store, tenant = _prepare(pool, "many-keys")
    subjects = [f"customer-{i}" for i in range(WRITERS)]
    results = _race(store, tenant, subjects)
    assert [r.status for r in results] == ["written"] * WRITERS
    for i, subject in enumerate(subjects):
        [only] = store.facts.history(tenant, subject, "passport_deadline")
        assert (only.value, only.retired_at) == (f"2026-07-{i + 10:02d}", None)


def test_eight_writers_with_one_value_at_one_start_write_once(pool: ConnectionPool) -> None:
    store, tenant = _prepare(pool, "same-value")
    barrier = Barrier(WRITERS)

    def write(i: int) -> UpdateResult:
        barrier.wait()
        return assert_value(store, tenant, f"e{i}", "2026-07-15", "2026-06-01T00:00:00Z")

    with ThreadPoolExecutor(WRITERS) as executor:
        results = list(executor.map(write, range(WRITERS)))
    assert Counter(r.status for r in results) == Counter(written=1, unchanged=WRITERS - 1)
    assert len(store.facts.history(tenant, "mira", "passport_deadline")) == 1


def test_the_writer_benchmark_runs_end_to_end(server_conninfo: str) -> None:
    """The benchmark is not a test of speed; this only keeps it runnable."""
    from evals.bench.writers import run  # noqa: PLC0415 - the benchmark is an optional tool

    results = run(rounds=1, database_url=server_conninfo)
    assert results["single_writer"]["n"] == 4
    assert results["eight_writers_one_key"]["n"] == WRITERS
    assert results["eight_writers_eight_keys"]["n"] == WRITERS
    assert results["retry"]["one_retry"]["n"] == 2
    hot = results["hot_episode"]
    assert [hot[case]["n"] for case in ("one_writer", "eight_writers_one_episode")] == [4, 16]


@pytest.fixture
def mira(store: MemoryStore, tenant: str) -> str:
    """A tenant with passport_deadline declared and episodes e1 and e2 recorded."""
    declare(store, tenant)
    record(store, tenant, "e1", "2026-06-01T09:00:00Z")
    record(store, tenant, "e2", "2026-06-02T09:00:00Z")
    return tenant


def _candidate(subject: str, value: str, valid_from: str, **extra: object) -> dict[str, object]:
    return {
        "evidence": "",
        "subject": subject,
        "attribute": "passport_deadline",
        "change": "update",
        "value": value,
        "valid_from": valid_from,
        **extra,
    }


def test_one_call_is_one_transaction_at_one_system_time(store: MemoryStore, mira: str) -> None:
    ticks = iter(ts(f"2026-06-10T00:00:0{second}Z") for second in range(10))
    store = MemoryStore(store.pool, clock=lambda: next(ticks))
    results = store.facts.apply_candidates(
        mira,
        "e1",
        [_candidate(subject, "2026-07-15", "2026-06-01T09:00:00Z") for subject in ("a", "b", "c")],
    )
    assert [r.status for r in results] == ["written"] * 3
    # The call read the clock once before its transaction and once with every lock held.
    assert {r.fact.recorded_at for r in results if r.fact} == {ts("2026-06-10T00:00:01Z")}
    assert store.episodes.get(mira, "e1").subjects == ["a", "b", "c"]


def test_a_refused_candidate_leaves_the_others_of_its_call_written(
    store: MemoryStore, mira: str, clock: ManualClock
) -> None:
    clock.set(ts("2026-06-10T00:00:00Z"))
    assert_value(store, mira, "e1", "2026-07-15", "2026-06-01T09:00:00Z", subject="later")
    clock.set(ts("2026-06-09T00:00:00Z"))
    results = store.facts.apply_candidates(
        mira,
        "e2",
        [
            _candidate("mira", "2026-06-30", "2026-06-03T00:00:00Z"),
            _candidate("mira", "2026-06-30", "2026-06-03T00:00:00Z", attribute="nope"),
            _candidate("later", "2026-06-30", "2026-06-03T00:00:00Z"),
            _candidate("mira", "not a date", "2026-06-03T00:00:00Z"),
            _candidate("kai", "2026-06-30", "2026-06-03T00:00:00Z"),
        ],
    )
    assert [(r.status, r.field) for r in results] == [
        ("written", None),
        ("invalid", "attribute"),
        ("invalid", "now"),
        ("invalid", "value"),
        ("written", None),
    ]
    assert values(store, mira) == [("2026-06-30", "2026-06-03T00:00:00+00:00", None)]
    assert store.episodes.get(mira, "e2").subjects == ["kai", "mira"]


def test_candidates_of_one_key_in_one_call_see_each_other_in_order(
    store: MemoryStore, mira: str
) -> None:
    results = store.facts.apply_candidates(
        mira,
        "e1",
        [
            _candidate("mira", "2026-07-15", "2026-06-01T09:00:00Z"),
            _candidate("mira", "2026-06-30", "2026-06-03T10:00:00Z"),
            _candidate("mira", "2026-07-15", "2026-06-02T00:00:00Z"),
            _candidate("mira", "2026-08-01", "2026-05-30T08:00:00Z"),
        ],
    )
    assert [r.status for r in results] == ["written", "written", "unchanged", "written"]
    first, second, _, delayed = (r.fact for r in results)
    assert first is not None
    assert (second.supersedes if second else None) == first.fact_id
    assert (delayed.ended_by if delayed else None) == first.fact_id
    assert values(store, mira) == [
        ("2026-08-01", "2026-05-30T08:00:00+00:00", "2026-06-01T09:00:00+00:00"),
        ("2026-07-15", "2026-06-01T09:00:00+00:00", "2026-06-03T10:00:00+00:00"),
        ("2026-06-30", "2026-06-03T10:00:00+00:00", None),
    ]


def test_writers_of_overlapping_keys_in_any_order_lose_nothing_and_never_deadlock(
    pool: ConnectionPool,
) -> None:
    store, tenant = _prepare(pool, "overlap")
    subjects = [f"k{n}" for n in range(6)]
    deadlocks = "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"
    with owner_connection(pool) as conn:
        before = conn.execute(deadlocks).fetchone()
    barrier = Barrier(WRITERS)

    def write(i: int) -> list[UpdateResult]:
        order = random.Random(i).sample(subjects, len(subjects))  # each writer its own order
        candidates = [
            _candidate(s, f"2026-07-{i + 10:02d}", f"2026-06-{i + 1:02d}T00:00:00Z") for s in order
        ]
        barrier.wait()
        return store.facts.apply_candidates(tenant, f"e{i}", candidates)

    with ThreadPoolExecutor(WRITERS) as executor:
        results = [r for batch in executor.map(write, range(WRITERS)) for r in batch]
    assert Counter(r.status for r in results) == Counter(written=WRITERS * len(subjects))
    for subject in subjects:
        current = [
            f.value
            for f in store.facts.history(tenant, subject, "passport_deadline")
            if f.retired_at is None
        ]
        assert current == [f"2026-07-{i + 10:02d}" for i in range(WRITERS)]
    with owner_connection(pool) as conn:
        assert conn.execute(deadlocks).fetchone() == before


def _held(conn: psycopg.Connection[Any], pid: int) -> list[tuple[str, bool]]:
    """The advisory locks of backend ``pid``: (mode, granted)."""
    rows = conn.execute(
        "SELECT mode, granted FROM pg_locks WHERE locktype = 'advisory' AND pid = %s"
        " ORDER BY mode, granted",
        [pid],
    ).fetchall()
    return [(mode, granted) for mode, granted in rows]


def test_a_writer_waits_for_its_first_key_in_lock_order_holding_none_of_the_others(
    conninfo: str,
) -> None:
    keys = [(f"s{n}", "passport_deadline") for n in range(5)]
    with psycopg.connect(conninfo) as first, psycopg.connect(conninfo) as second:
        lock_keys(first, tenant_id="t", keys=keys)
        waiting = threading.Thread(
            target=lock_keys, args=(second,), kwargs={"tenant_id": "t", "keys": keys[::-1]}
        )
        waiting.start()
        with psycopg.connect(conninfo, autocommit=True) as observer:
            for _ in range(200):
                held = _held(observer, second.info.backend_pid)
                if ("ExclusiveLock", False) in held:
                    break
                time.sleep(0.01)
            # The tenant's lock (shared) is held; of the keys, only the first is waited for.
            assert held == [("ExclusiveLock", False), ("ShareLock", True)]
            first.commit()
            waiting.join(timeout=5)
            assert _held(observer, second.info.backend_pid) == [
                *[("ExclusiveLock", True)] * len(keys),
                ("ShareLock", True),
            ]
        second.commit()


def test_a_bulk_writer_holds_back_the_key_writers_of_its_tenant_only(conninfo: str) -> None:
    with psycopg.connect(conninfo) as bulk, psycopg.connect(conninfo) as writer:
        lock_tenants(bulk, ["acme"])
        writer.execute("SET lock_timeout = '100ms'")
        with pytest.raises(psycopg.errors.LockNotAvailable):
            lock_keys(writer, tenant_id="acme", keys=[("mira", "passport_deadline")])
        writer.rollback()
        lock_keys(writer, tenant_id="globex", keys=[("mira", "passport_deadline")])
        bulk.commit()
        writer.commit()
        lock_keys(writer, tenant_id="acme", keys=[("mira", "passport_deadline")])
        writer.commit()


class _CountingModel:
    """A stand-in model (vectors only move around here): one call at a time, each counted."""

    model_id = "counting"

    def __init__(self, failing: str | None = None) -> None:
        self.calls: list[list[str]] = []
        self.failing = failing

    def embed(self, texts: Sequence[str]) -> np.ndarray[Any, Any]:
        self.calls.append(list(texts))
        time.sleep(0.05)
        if self.failing in texts:
            raise RuntimeError("the model failed")
        return np.array([[float(text.split()[-1]), 1.0] for text in texts], dtype=np.float32)


def test_concurrent_recordings_share_the_models_calls_and_each_gets_its_own_vectors() -> None:
    model = _CountingModel()
    shared = SharedBatches(model)
    barrier = Barrier(WRITERS)

    def embed(i: int) -> list[list[float]]:
        barrier.wait()
        vectors: list[list[float]] = shared.embed([f"text {i}", f"text {i + 100}"]).tolist()
        return vectors

    with ThreadPoolExecutor(WRITERS) as executor:
        vectors = list(executor.map(embed, range(WRITERS)))
    assert vectors == [[[i, 1.0], [i + 100, 1.0]] for i in range(WRITERS)]
    assert len(model.calls) < WRITERS
    assert sorted(text for call in model.calls for text in call) == sorted(
        f"text {n}" for i in range(WRITERS) for n in (i, i + 100)
    )


def test_a_failed_model_call_fails_every_caller_it_served_and_frees_the_model() -> None:
    model = _CountingModel(failing="text 1")
    shared = SharedBatches(model)
    with ThreadPoolExecutor(2) as executor:
        outcomes = list(executor.map(lambda i: _try(shared, f"text {i}"), range(2)))
    assert "the model failed" in outcomes
    assert shared.embed(["text 7"]).tolist() == [[7.0, 1.0]]


def _try(shared: SharedBatches, text: str) -> str:
    try:
        shared.embed([text])
    except RuntimeError as error:
        return str(error)
    return "embedded"


def test_a_write_before_a_retraction_of_its_key_goes_back_in_time_and_is_refused(
    store: MemoryStore, mira: str, clock: ManualClock
) -> None:
    clock.set(ts("2026-06-10T00:00:00Z"))
    assert_value(store, mira, "e1", "2026-07-15", "2026-06-01T09:00:00Z")
    clock.set(ts("2026-06-12T00:00:00Z"))
    retracted = store.facts.retract(
        mira, "mira", "passport_deadline", valid_from="2026-06-01T09:00:00Z"
    )
    assert retracted.status == "retracted"  # nothing to rebuild: no version recorded then
    clock.set(ts("2026-06-11T00:00:00Z"))
    back = assert_value(store, mira, "e2", "2026-06-30", "2026-06-03T00:00:00Z")
    assert (back.status, back.field) == ("invalid", "now")
    assert values(store, mira) == []
