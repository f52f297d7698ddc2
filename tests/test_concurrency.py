"""Writers to one key are serialized; writers to different keys do not block each other."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from threading import Barrier

from psycopg_pool import ConnectionPool

from store.results import UpdateResult
from store.service import MemoryStore
from tests.helpers import assert_value, declare, record

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
    from evals.bench_writers import run  # noqa: PLC0415 - the benchmark is an optional tool

    results = run(rounds=1, database_url=server_conninfo)
    assert results["single_writer"]["n"] == 4
    assert results["eight_writers_one_key"]["n"] == WRITERS
    assert results["eight_writers_eight_keys"]["n"] == WRITERS
    assert results["retry"]["one_retry"]["n"] == 2
