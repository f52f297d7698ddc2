"""Sixteen writers on one key of the cluster, released together: every write acknowledged
once, and the key's current timeline is all sixteen values end to end, no two overlapping and
no gap between them, whatever order they arrived in."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from threading import Barrier

import pytest
from psycopg_pool import ConnectionPool

from store.contract.results import UpdateResult
from store.db.database import make_pool
from store.service import MemoryStore
from tests.helpers import KEY, assert_value, declare, record

WRITERS = 16


@pytest.fixture
def writers_pool(conninfo: str) -> Iterator[ConnectionPool]:
    """A connection for each writer, so none waits for the pool."""
    with make_pool(conninfo, min_size=WRITERS, max_size=WRITERS) as opened:
        opened.wait()
        yield opened


def test_sixteen_writers_on_one_key_leave_no_overlap_and_no_gap(
    writers_pool: ConnectionPool, tenant: str
) -> None:
    store = MemoryStore(writers_pool)  # the wall clock, as in production
    declare(store, tenant)
    for i in range(WRITERS):
        record(store, tenant, f"e{i}", "2026-06-01T00:00:00Z", text=f"writer {i}")
    barrier = Barrier(WRITERS)

    def write(i: int) -> UpdateResult:
        # Writer i asserts value i from day i + 1.
        barrier.wait()
        return assert_value(
            store, tenant, f"e{i}", f"2026-07-{i + 10:02d}", f"2026-06-{i + 1:02d}T00:00:00Z"
        )

    with ThreadPoolExecutor(WRITERS) as executor:
        results = list(executor.map(write, range(WRITERS)))

    assert Counter(r.status for r in results) == Counter(written=WRITERS)
    current = [f for f in store.facts.history(tenant, *KEY) if f.retired_at is None]
    assert [(f.value, f.valid_from.day) for f in current] == [
        (f"2026-07-{i + 10:02d}", i + 1) for i in range(WRITERS)
    ]
    ends = [f.valid_to for f in current]
    starts = [f.valid_from for f in current]
    assert ends[:-1] == starts[1:]  # each ends where the next begins: no overlap, no gap
    assert ends[-1] is None
    assert {f.fact_id for f in current} == {r.fact.fact_id for r in results if r.fact}
