"""Growing the cluster: a third worker joins and ``citus_rebalance_start()`` moves shards onto it
while 8 writers and 8 readers work through the store, and nothing is lost, doubled or read
half-moved.

The test changes the topology, so it starts a cluster of its own (two workers, then three,
the third added before the load starts; the shards move under it). Each writer owns a tenant
and appends to one key: write ``n`` records episode ``w-n`` with a candidate, in one
transaction, giving the key the value ``n`` from second ``n`` on. Each reader reads the
tenants in turn, each read one snapshot through the store: the key's current versions must be
the values ``0..k-1`` once each, end to end, the episodes ``w-0..w-(k-1)`` there and no later
one (an episode without its fact, or a fact without its episode, is a tenant read half-moved),
``k`` at least the writes acknowledged before the read began and never less than the reader
saw last. What the readers and writers saw (reads, errors by kind, retries, the longest call
while the shards moved) is shown in the test's output and written to ``rebalance.json`` in its
temporary folder.
"""

from __future__ import annotations

import json
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any
from unittest import mock

import psycopg
import pytest
from psycopg_pool import ConnectionPool

from store.db import locks
from store.db.database import make_pool
from store.db.snapshot import ReadSnapshot
from store.service import MemoryStore
from tests.citus_helpers import SHARD_COUNT, Cluster, cluster_script, stop_cluster
from tests.helpers import declare

PORT = 5640
"""This cluster's coordinator (its workers on the next ports): above the ports the session's
clusters take (5440 to 5630), so that a run beside another never races it for one."""
WRITERS = 8
READERS = 8
SUBJECT, ATTRIBUTE = "counter", "step"
START = datetime(2026, 1, 1, tzinfo=UTC)
BEFORE_S = 2.0
"""Seconds of load before the third worker is added, and again after the rebalance ends."""
ATTEMPTS = 20
"""Tries of one call before the test gives up on it (each error is counted)."""


@dataclass
class Seen:
    """What one side saw: calls done, errors by kind, retries, the slowest call."""

    calls: int = 0
    calls_while_moving: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    retries: int = 0
    slowest_while_moving_s: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def done(self, seconds: float, *, moving: bool) -> None:
        with self.lock:
            self.calls += 1
            if moving:
                self.calls_while_moving += 1
                self.slowest_while_moving_s = max(self.slowest_while_moving_s, seconds)

    def failed(self, error: Exception) -> None:
        first_line = str(error).splitlines()[0][:120] if str(error) else ""
        with self.lock:
            self.errors[f"{type(error).__name__}: {first_line}"] += 1
            self.retries += 1

    def report(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "calls_while_moving": self.calls_while_moving,
            "errors": dict(self.errors),
            "retries": self.retries,
            "slowest_while_moving_ms": round(self.slowest_while_moving_s * 1000, 1),
        }


@dataclass
class Run:
    """The shared state of one run: the tenants, what was acknowledged, whether shards move."""

    store: MemoryStore
    tenants: list[str]
    acknowledged: dict[str, int]
    stop: threading.Event = field(default_factory=threading.Event)
    moving: threading.Event = field(default_factory=threading.Event)
    writes: Seen = field(default_factory=Seen)
    reads: Seen = field(default_factory=Seen)
    anomalies: list[str] = field(default_factory=list)

    def call(self, seen: Seen, work: Callable[[], Any]) -> Any:
        """``work`` until it succeeds, counting each error and retry; ``ATTEMPTS`` at most."""
        for attempt in range(ATTEMPTS):
            began = time.perf_counter()
            moving = self.moving.is_set()
            try:
                answer = work()
            except Exception as error:  # every kind is counted, then retried
                seen.failed(error)
                if attempt == ATTEMPTS - 1:
                    raise
                time.sleep(0.05)
                continue
            seen.done(time.perf_counter() - began, moving=moving or self.moving.is_set())
            return answer
        raise AssertionError("unreachable")


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    """A cluster of this test's own, two workers to start with, migrated as the session's."""
    folder = Path(tempfile.mkdtemp(prefix="sgam-citus-grow-"))
    folder.chmod(0o755)  # readable by the user the nodes run as
    started = Cluster(folder, PORT, 0, cluster_script())
    try:
        started.up(2)
        with psycopg.connect(started.url, autocommit=True) as conn:
            conn.execute(f"ALTER SYSTEM SET citus.shard_count = {SHARD_COUNT}".encode())
            conn.execute("SELECT pg_reload_conf()")
        from store.db.migrate import migrate_database  # noqa: PLC0415
        from store.db.roles import bootstrap_embedded_roles  # noqa: PLC0415

        bootstrap_embedded_roles(started.url)
        migrate_database(started.url)
        yield started
    finally:
        stop_cluster(started)


def _spread_tenants(conn: psycopg.Connection[Any], count: int) -> list[str]:
    """``count`` tenant names spread evenly over the shards of a distributed table, so that
    whichever shards the rebalance moves, some of the tenants move with them."""
    each = -(-count // SHARD_COUNT)
    by_shard: Counter[int] = Counter()
    chosen: list[str] = []
    number = 0
    while len(chosen) < count:
        name = f"grow-{number}"
        number += 1
        row = conn.execute(
            "SELECT get_shard_id_for_distribution_column('fact_versions', %s::text)", [name]
        ).fetchone()
        assert row is not None
        if by_shard[row[0]] < each:
            by_shard[row[0]] += 1
            chosen.append(name)
    return chosen


def _placements(conn: psycopg.Connection[Any], tenants: list[str]) -> dict[str, int]:
    rows = conn.execute(
        "SELECT t, nodeport FROM unnest(%s::text[]) AS t JOIN citus_shards"
        " ON shardid = get_shard_id_for_distribution_column('fact_versions', t)",
        [tenants],
    ).fetchall()
    return {str(tenant): int(port) for tenant, port in rows}


def _write(run: Run, tenant: str) -> None:
    n = 0
    while not run.stop.is_set():
        episode = {
            "id": f"w-{n}",
            "occurred_at": (START + timedelta(seconds=n)).isoformat(),
            "text": f"step {n}",
            "subjects": [SUBJECT],
        }
        candidate = {
            "evidence": "",
            "subject": SUBJECT,
            "attribute": ATTRIBUTE,
            "change": "update",
            "value": str(n),
            "valid_from": episode["occurred_at"],
        }
        record = partial(
            run.store.episodes.record_with_candidates, tenant, [(episode, [candidate])]
        )
        [(_, results)] = run.call(run.writes, record)
        statuses = [result.status for result in results]
        # "unchanged": an earlier try of this write committed, its answer lost (counted then).
        if statuses not in (["written"], ["unchanged"]):
            run.anomalies.append(f"{tenant} write {n} answered {statuses}")
        n += 1
        run.acknowledged[tenant] = n


def _look(snapshot: ReadSnapshot) -> tuple[list[Any], set[str], int]:
    memory = snapshot.subject_memory(SUBJECT, valid_at=snapshot.now, known_at=snapshot.now)
    current = sorted(
        (value for value in memory.believed if value.retired_at is None),
        key=lambda value: value.valid_from,
    )
    episodes = snapshot.episodes([f"w-{n}" for n in range(len(current) + WRITERS)])
    return current, set(episodes), len(current)


def _check(tenant: str, current: list[Any], episodes: set[str], since: int) -> list[str]:
    k = len(current)
    found = []
    if [value.value for value in current] != [str(n) for n in range(k)]:
        found.append(f"{tenant}: values {[value.value for value in current]}")
    ends = [value.valid_to for value in current]
    if ends != [value.valid_from for value in current[1:]] + [None] * bool(current):
        found.append(f"{tenant}: the versions do not meet end to end")
    if episodes != {f"w-{n}" for n in range(k)}:
        found.append(f"{tenant}: {k} versions but episodes {sorted(episodes)[-3:]}")
    if k < since:
        found.append(f"{tenant}: {k} versions, {since} acknowledged before the read")
    return found


def _read(run: Run, first: int) -> None:
    last: dict[str, int] = {}
    turn = first
    while not run.stop.is_set():
        tenant = run.tenants[turn % len(run.tenants)]
        turn += 1
        since = run.acknowledged[tenant]
        current, episodes, k = run.call(run.reads, partial(run.store.snapshots.read, tenant, _look))
        found = _check(tenant, current, episodes, since)
        if k < last.get(tenant, 0):
            found.append(f"{tenant}: {k} versions after {last[tenant]} in an earlier read")
        last[tenant] = k
        run.anomalies.extend(found)


def _rebalance(cluster: Cluster, run: Run) -> dict[str, Any]:
    time.sleep(BEFORE_S)
    run.moving.set()
    began = time.perf_counter()
    with psycopg.connect(cluster.url, autocommit=True) as conn:
        conn.execute("SELECT citus_rebalance_start()")
        conn.execute("SELECT citus_rebalance_wait()")
        row = conn.execute("SELECT state, details FROM citus_rebalance_status()").fetchone()
    run.moving.clear()
    took = time.perf_counter() - began
    time.sleep(BEFORE_S)
    run.stop.set()
    assert row is not None
    return {"state": row[0], "tasks": row[1].get("task_state_counts"), "seconds": round(took, 1)}


def _prepare(pool: ConnectionPool, conn: psycopg.Connection[Any]) -> Run:
    store = MemoryStore(pool)
    tenants = _spread_tenants(conn, WRITERS)
    for tenant in tenants:
        store.admin.create_tenant(tenant)
        declare(store, tenant, ATTRIBUTE, "string")
    return Run(store, tenants, dict.fromkeys(tenants, 0))


def test_a_third_worker_and_a_rebalance_under_load_lose_nothing(
    cluster: Cluster,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    capsys: pytest.CaptureFixture[str],
) -> None:
    store_retries = Counter[str]()
    counted = locks._RETRYING.copy(
        before_sleep=lambda state: store_retries.update([type(state.outcome.exception()).__name__])
    )
    with (
        make_pool(cluster.url, max_size=WRITERS + READERS + 2) as pool,
        psycopg.connect(cluster.url, autocommit=True) as conn,
        mock.patch.object(locks, "_RETRYING", counted),
    ):
        pool.wait()
        run = _prepare(pool, conn)
        before = _placements(conn, run.tenants)
        # The third worker joins before the load starts: run as root, the cluster script's
        # `chown -R` of its folder fails on files a busy node creates and deletes meanwhile
        # (Citus's intermediate results). It holds nothing until the rebalance moves shards.
        cluster.up(3)
        with ThreadPoolExecutor(WRITERS + READERS + 1) as threads:
            workers = [threads.submit(_write, run, tenant) for tenant in run.tenants]
            workers += [threads.submit(_read, run, n) for n in range(READERS)]
            moved = threads.submit(_rebalance, cluster, run)
            try:
                rebalance = moved.result(timeout=300)
            finally:
                run.stop.set()
            for worker in workers:
                worker.result(timeout=120)
        after = _placements(conn, run.tenants)
        final = {tenant: run.store.facts.history(tenant, SUBJECT, ATTRIBUTE) for tenant in after}

    report = {
        "rebalance": rebalance,
        "tenants_moved": sorted(t for t in run.tenants if before[t] != after[t]),
        "writes_acknowledged": sum(run.acknowledged.values()),
        "writes": run.writes.report(),
        "reads": run.reads.report(),
        "store_retries": dict(store_retries),
        "anomalies": run.anomalies[:20],
    }
    said = json.dumps(report, indent=2)
    (tmp_path / "rebalance.json").write_text(said, encoding="utf-8")
    terminal = request.config.pluginmanager.get_plugin("terminalreporter")
    if terminal is not None:
        with capsys.disabled():
            terminal.write_sep("-", "what the readers and writers saw while the shards moved")
            terminal.write_line(said)

    assert rebalance["state"] == "finished", report
    assert cluster.worker_urls[2].endswith(f":{cluster.port + 3}/postgres")
    assert cluster.port + 3 in after.values(), report  # some tenants live on the new worker
    assert report["tenants_moved"], report
    assert run.anomalies == [], report
    assert run.reads.calls_while_moving > 0, report
    assert run.writes.calls_while_moving > 0, report
    for tenant, versions in final.items():
        current = [version.value for version in versions if version.retired_at is None]
        # Every acknowledged write is there once, and nothing else is.
        assert current == [str(n) for n in range(run.acknowledged[tenant])], tenant
