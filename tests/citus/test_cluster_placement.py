"""Where a tenant lives on the cluster: every row of it on one worker, the tenants spread over
both workers, and a request of one tenant planned as one task on that worker (Citus's router
plan, as EXPLAIN shows it for the store's own statements)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import timedelta
from uuid import uuid4

import psycopg
import pytest
from psycopg.conninfo import make_conninfo
from psycopg_pool import ConnectionPool

from store.db.clock import ManualClock
from store.db.database import make_pool
from store.db.tenants import enter_tenant
from store.episodes.vectors import episodes_without_vectors
from store.governance.receipts import Trace
from store.service import MemoryStore
from tests.citus_helpers import Cluster, shard_port, tenant_rows_by_worker
from tests.dbsearch import tenant_rows
from tests.retention_helpers import LengthModel, build_world
from tests.store.test_batch_vectors import copy_size_batch

SPREAD = [f"spread-{letter}" for letter in "abcdefgh"]
"""Fixed tenant names, so where they land is the same every run."""

AUTO_EXPLAIN = (
    "-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=0"
    " -c auto_explain.log_level=notice -c auto_explain.log_nested_statements=on"
)
"""Every statement's plan sent back to the client as a notice (the login is the superuser's,
which may load the module; the pool then works as sgam_app as always)."""


def _home(conninfo: str, tenant: str) -> int:
    with psycopg.connect(conninfo) as conn:
        return shard_port(conn, "tenants", tenant)


def test_every_row_of_a_tenant_is_on_one_worker(
    citus_cluster: Cluster, conninfo: str, pool: ConnectionPool, clock: ManualClock, tenant: str
) -> None:
    build_world(MemoryStore(pool, clock=clock, embedder=LengthModel()), clock, tenant)

    held = tenant_rows_by_worker(citus_cluster, tenant)

    home = _home(conninfo, tenant)
    assert list(held) == [home]
    assert {"tenants", "attributes", "episodes", "episode_vectors", "fact_versions"} <= set(
        held[home]
    )
    assert {"weak_signals", "receipts", "receipt_secrets"} <= set(held[home])
    # What the coordinator answers for the tenant is exactly what that worker holds.
    answered = {table: len(rows) for table, rows in tenant_rows(conninfo, tenant).items() if rows}
    assert {table: held[home][table] for table in answered} == answered


def test_tenants_spread_over_both_workers(
    citus_cluster: Cluster, conninfo: str, store: MemoryStore
) -> None:
    for name in SPREAD:
        store.admin.create_tenant(name)
    homes = {name: _home(conninfo, name) for name in SPREAD}
    workers = {citus_cluster.port + 1, citus_cluster.port + 2}
    assert set(homes.values()) == workers
    for name in SPREAD:
        assert tenant_rows_by_worker(citus_cluster, name) == {homes[name]: {"tenants": 1}}


@pytest.fixture
def home(conninfo: str, store: MemoryStore, clock: ManualClock, tenant: str) -> int:
    """The port of the test tenant's worker, the retention world built in the tenant."""
    build_world(MemoryStore(store.pool, clock=clock, embedder=LengthModel()), clock, tenant)
    return _home(conninfo, tenant)


@pytest.fixture
def explained(conninfo: str) -> Iterator[tuple[ConnectionPool, list[str]]]:
    """A pool of one connection that sends every statement's plan back, and the plans it
    received."""
    plans: list[str] = []
    with make_pool(make_conninfo(conninfo, options=AUTO_EXPLAIN), max_size=1) as one:
        one.wait()
        with one.connection() as conn:  # the pool's only connection: every call gets it
            conn.add_notice_handler(lambda notice: plans.append(notice.message_primary or ""))
        yield one, plans


def test_a_request_of_one_tenant_runs_on_its_worker_as_one_task(
    home: int, clock: ManualClock, tenant: str, explained: tuple[ConnectionPool, list[str]]
) -> None:
    one, plans = explained
    reader = MemoryStore(one, clock=clock)

    assert reader.facts.current(tenant, "mira", "city").value == "Oslo"
    assert [fact.value for fact in reader.facts.history(tenant, "hal", "mood")] == ["grim"]
    assert reader.subjects.profile(tenant, "mira").facts
    assert reader.episodes.get(tenant, "e3").text == "the text of e3"
    assert [fact.value for fact in reader.facts.history(tenant, "mira", "city")] == ["Oslo"]

    distributed = [plan for plan in plans if "Citus Adaptive" in plan]
    assert len(distributed) >= 5, plans
    _assert_on_one_worker(distributed, home)


def _assert_on_one_worker(plans: list[str], home: int) -> None:
    """Each plan runs as one task on port ``home``."""
    elsewhere = [
        f"{statement}: tasks {counts} on ports {sorted(ports)}"
        for statement, counts, ports in map(_routing, plans)
        if (counts, ports) != (["1"], {home})
    ]
    assert not elsewhere, f"not one task on port {home}:\n" + "\n".join(elsewhere)


def _routing(plan: str) -> tuple[str, list[str], set[int]]:
    """A plan's statement (its start), the task count of each Citus scan in it, and the ports
    of the nodes its tasks ran on."""
    text = plan.partition("Query Text:")[2].partition("Custom Scan (Citus")[0]
    statement = " ".join(text.split())[:160] or "(a step Citus planned apart)"
    counts = re.findall(r"Task Count: (\d+)", plan)
    ports = {int(port) for port in re.findall(r"Node: host=\S+ port=(\d+)", plan)}
    return statement, counts, ports


def test_a_reads_receipts_are_written_on_the_tenants_worker_alone(
    conninfo: str, home: int, clock: ManualClock, tenant: str
) -> None:
    """A read for a decision leaves its decision and receipts in the tenant's shards; no other
    worker takes part in its transaction (Citus names each remote command's node)."""

    def read(one: ConnectionPool) -> None:
        fact = MemoryStore(one, clock=clock).facts.at(
            tenant, "mira", "city", trace=Trace(decision_id=uuid4())
        )
        assert fact.value == "Oslo"

    assert _remote_ports(conninfo, read) == {home}


def test_an_erasure_and_a_purge_of_one_tenant_run_on_its_worker_as_one_task(
    home: int, clock: ManualClock, tenant: str, explained: tuple[ConnectionPool, list[str]]
) -> None:
    """The statements that change one tenant's rows in bulk: an episode's and a subject's
    erasure, the retention purge, the receipts' purge, and the lookup of the episodes a
    model has not embedded yet (``sgam reembed``)."""
    one, plans = explained
    writer = MemoryStore(one, clock=clock, embedder=LengthModel())

    assert writer.erasure.erase_episode(tenant, "e6").status == "erased"
    assert writer.erasure.erase_subject(tenant, "hal").status == "erased"
    assert writer.retention.purge_tenant(tenant, receipt_retention=timedelta(days=1)).tombstone_id
    writer.receipts.purge(tenant, retention=timedelta(0))
    with one.connection() as conn, conn.transaction():
        enter_tenant(conn, tenant)
        assert episodes_without_vectors(conn, tenant, model="not-yet", limit=10)

    distributed = [plan for plan in plans if "Custom Scan (Citus" in plan]
    assert len(distributed) >= 20, plans
    _assert_on_one_worker(distributed, home)


def test_vectors_copied_in_for_one_tenant_are_written_on_its_worker_alone(
    conninfo: str, pool: ConnectionPool, clock: ManualClock, tenant: str
) -> None:
    """A batch of vectors large enough to be copied in goes from the coordinator to the
    tenant's worker alone. (EXPLAIN cannot show it: Citus gets no plan from the worker for an
    insert of a vector, and the failed request aborts the transaction.)"""
    batch = copy_size_batch()
    recorded = MemoryStore(pool, clock=clock).episodes.record_batch(tenant, batch)
    home = _home(conninfo, tenant)

    def embed(one: ConnectionPool) -> None:
        writer = MemoryStore(one, clock=clock, embedder=LengthModel())
        assert writer.episodes.embed([(tenant, e.id) for e in recorded]) == len(batch)

    assert _remote_ports(conninfo, embed) == {home}


def _remote_ports(conninfo: str, work: Callable[[ConnectionPool], None]) -> set[int]:
    """The ports of the nodes the coordinator sent commands to while ``work`` ran on a pool
    of one connection (Citus names each remote command's node)."""
    remote = make_conninfo(conninfo, options="-c citus.log_remote_commands=on")
    details: list[str] = []
    with make_pool(remote, max_size=1) as one:
        one.wait()
        with one.connection() as conn:
            conn.add_notice_handler(lambda notice: details.append(notice.message_detail or ""))
        work(one)
    return {int(port) for port in re.findall(r"on server \S+:(\d+) ", "\n".join(details))}
