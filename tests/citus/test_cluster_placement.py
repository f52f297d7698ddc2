"""Where a tenant lives on the cluster: every row of it on one worker, the tenants spread over
both workers, and a request of one tenant planned as one task on that worker (Citus's router
plan, as EXPLAIN shows it for the store's own statements)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from uuid import uuid4

import psycopg
import pytest
from psycopg.conninfo import make_conninfo
from psycopg_pool import ConnectionPool

from store.db.clock import ManualClock
from store.db.database import make_pool
from store.governance.receipts import Trace
from store.service import MemoryStore
from tests.citus_helpers import Cluster, shard_port, tenant_rows_by_worker
from tests.dbsearch import tenant_rows
from tests.retention_helpers import LengthModel, build_world

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
    conninfo: str,
    store: MemoryStore,
    clock: ManualClock,
    tenant: str,
    explained: tuple[ConnectionPool, list[str]],
) -> None:
    build_world(MemoryStore(store.pool, clock=clock, embedder=LengthModel()), clock, tenant)
    home = _home(conninfo, tenant)
    one, plans = explained
    reader = MemoryStore(one, clock=clock)

    assert reader.facts.current(tenant, "mira", "city").value == "Oslo"
    assert [fact.value for fact in reader.facts.history(tenant, "hal", "mood")] == ["grim"]
    assert reader.subjects.profile(tenant, "mira").facts
    assert reader.episodes.get(tenant, "e3").text == "the text of e3"
    assert [fact.value for fact in reader.facts.history(tenant, "mira", "city")] == ["Oslo"]

    distributed = [plan for plan in plans if "Citus Adaptive" in plan]
    assert len(distributed) >= 5, plans
    elsewhere = [
        f"{statement}: tasks {counts} on ports {sorted(ports)}"
        for statement, counts, ports in map(_routing, distributed)
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
    conninfo: str, store: MemoryStore, clock: ManualClock, tenant: str
) -> None:
    """A read for a decision leaves its decision and receipts in the tenant's shards; no other
    worker takes part in its transaction (Citus names each remote command's node)."""
    build_world(MemoryStore(store.pool, clock=clock, embedder=LengthModel()), clock, tenant)
    home = _home(conninfo, tenant)
    remote = make_conninfo(conninfo, options="-c citus.log_remote_commands=on")
    details: list[str] = []
    with make_pool(remote, max_size=1) as one:
        one.wait()
        with one.connection() as conn:
            conn.add_notice_handler(lambda notice: details.append(notice.message_detail or ""))
        fact = MemoryStore(one, clock=clock).facts.at(
            tenant, "mira", "city", trace=Trace(decision_id=uuid4())
        )
    assert fact.value == "Oslo"
    ports = {int(port) for port in re.findall(r"on server \S+:(\d+) ", "\n".join(details))}
    assert ports == {home}
