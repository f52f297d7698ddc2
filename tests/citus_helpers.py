"""A Citus cluster on the loopback interface for the tests of tests/citus, started with the
cluster script of ``../shared/citus`` (a coordinator and N workers on the embedded wheel's
PostgreSQL with the Citus extension), and questions about where a tenant's rows live."""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from types import ModuleType
from typing import Any

import psycopg
from _pytest.fixtures import FixtureFunctionDefinition
from psycopg import sql
from psycopg_pool import ConnectionPool

from retrieval.search.embeddings import Embedder
from server.replay.runner import CountingIds, ReplayClock, replay_lines
from store.service import MemoryStore
from tests.dbsearch import needles_in, public_columns

REPOSITORY = Path(__file__).resolve().parents[1]
SCRIPT_ENV = "SGAM_CITUS_CLUSTER"
"""The cluster script's path, when not ``../shared/citus/cluster`` beside the repository."""
PORT_ENV = "SGAM_CITUS_PORT"
"""The coordinator's port; without it the first of 5440, 5450, ... whose next ports are free."""
SHARD_COUNT = 4
"""Shards a distributed table gets on the test cluster: few, so migrations stay quick, and
more than the two workers, so tenants spread over both."""
_SPARE_PORTS = 5
"""Ports kept free above the coordinator's: two workers, a third added by a test, one spare."""


def cluster_script() -> Path:
    """Where the cluster script is (it may not exist)."""
    configured = os.environ.get(SCRIPT_ENV)
    if configured:
        return Path(configured)
    return REPOSITORY.parent / "shared" / "citus" / "cluster"


def _port_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def coordinator_port() -> int:
    """The coordinator's port: ``SGAM_CITUS_PORT``, else the first of 5440, 5450, ... with it
    and the ports of its workers free (clusters of other test runs keep theirs)."""
    configured = os.environ.get(PORT_ENV)
    if configured:
        return int(configured)
    for base in range(5440, 5640, 10):
        if all(_port_free(base + offset) for offset in range(_SPARE_PORTS)):
            return base
    raise RuntimeError("no free ports for a Citus cluster between 5440 and 5640")


class ClusterFailed(RuntimeError):
    """The cluster script failed; the message carries what it printed."""


@dataclass
class Cluster:
    """A running cluster: its folder, the coordinator's port and the number of workers."""

    folder: Path
    port: int
    workers: int
    script: Path

    @property
    def url(self) -> str:
        """The coordinator as its superuser (the nodes trust local connections)."""
        return self.node_url(0)

    def node_url(self, index: int) -> str:
        """Node ``index`` as its superuser: 0 the coordinator, 1.. the workers."""
        return f"postgresql://postgres@127.0.0.1:{self.port + index}/postgres"

    def url_at(self, port: int) -> str:
        """The node listening on ``port`` as its superuser."""
        return self.node_url(port - self.port)

    @property
    def worker_urls(self) -> list[str]:
        """Each worker's URL, in the order they were added."""
        return [self.node_url(index) for index in range(1, self.workers + 1)]

    def up(self, workers: int) -> None:
        """Start the cluster with ``workers`` workers, or add workers to the running one."""
        self._run(
            "up", "--workers", str(workers), "--port", str(self.port), "--python", sys.executable
        )
        self.workers = workers

    def down(self) -> None:
        """Stop every node."""
        self._run("down")

    def _run(self, verb: str, *options: str) -> None:
        done = subprocess.run(
            [str(self.script), verb, str(self.folder), *options],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if done.returncode != 0:
            raise ClusterFailed(
                f"`cluster {verb} {self.folder}` exited {done.returncode}:"
                f" {done.stderr.strip() or done.stdout.strip()}"
            )


def start_cluster(workers: int = 2) -> Cluster:
    """A fresh cluster in a new folder under the system's temporary folder (readable by the
    user the nodes run as); the caller stops it with ``stop_cluster``."""
    folder = Path(tempfile.mkdtemp(prefix="sgam-citus-"))
    folder.chmod(0o755)
    cluster = Cluster(folder, coordinator_port(), 0, cluster_script())
    try:
        cluster.up(workers)
    except BaseException:
        with contextlib.suppress(ClusterFailed, OSError):  # the failure to start is the news
            stop_cluster(cluster)
        raise
    return cluster


def stop_cluster(cluster: Cluster) -> None:
    """Stop the cluster's nodes and delete its folder."""
    try:
        cluster.down()
    finally:
        shutil.rmtree(cluster.folder, ignore_errors=True)


def shard_port(conn: psycopg.Connection[Any], table: str, tenant: str) -> int:
    """The port of the worker that holds ``tenant``'s shard of the distributed ``table``."""
    row = conn.execute(
        "SELECT nodeport FROM citus_shards"
        " WHERE shardid = get_shard_id_for_distribution_column(%s::regclass, %s::text)",
        (table, tenant),
    ).fetchone()
    assert row is not None, f"{table} has no shard for {tenant}: is it distributed?"
    return int(row[0])


@dataclass(frozen=True)
class Shard:
    """One shard of a distributed table and the port of the worker that holds it."""

    table: str
    name: str
    port: int


def distributed_shards(conn: psycopg.Connection[Any]) -> list[Shard]:
    """Every shard of every distributed (tenant) table, by worker port, from the coordinator."""
    rows = conn.execute(
        "SELECT table_name::text, shard_name, nodeport FROM citus_shards"
        " WHERE citus_table_type = 'distributed' ORDER BY nodeport, table_name::text, shard_name"
    ).fetchall()
    return [Shard(str(table), str(name), int(port)) for table, name, port in rows]


def _on_each_worker(
    cluster: Cluster, shards: Iterable[Shard]
) -> Iterator[tuple[psycopg.Connection[Any], list[Shard]]]:
    for port, group in groupby(shards, key=lambda shard: shard.port):
        with psycopg.connect(cluster.url_at(port)) as worker:
            yield worker, list(group)


def tenant_rows_by_worker(cluster: Cluster, tenant: str) -> dict[int, dict[str, int]]:
    """How many rows of ``tenant`` each worker's shards hold, read on the worker itself: by
    worker port, then by table; workers and tables without any are left out."""
    with psycopg.connect(cluster.url) as conn:
        shards = distributed_shards(conn)
    held: dict[int, dict[str, int]] = {}
    for worker, group in _on_each_worker(cluster, shards):
        for shard in group:
            count = sql.SQL("SELECT count(*) FROM {} WHERE tenant_id = %s")
            row = worker.execute(count.format(sql.Identifier(shard.name)), [tenant]).fetchone()
            if row and row[0]:
                tables = held.setdefault(shard.port, {})
                tables[shard.table] = tables.get(shard.table, 0) + int(row[0])
    return held


def find_needles_on_shards(
    cluster: Cluster, tenant: str, needles: Iterable[str]
) -> dict[str, set[str]]:
    """Where each needle occurs among the tenant's rows as the workers store them: every
    text-like column of every shard of every distributed table, read on its worker, as
    ``table.column`` (``tests.dbsearch.find_needles`` asks the coordinator instead)."""
    wanted = list(needles)
    found: dict[str, set[str]] = {needle: set() for needle in wanted}
    with psycopg.connect(cluster.url) as conn:
        shards = distributed_shards(conn)
        _, columns = public_columns(conn)
    assert shards, "no distributed table: is the schema distributed?"
    for worker, group in _on_each_worker(cluster, shards):
        for shard in group:
            for column in (column for column in columns if column.table == shard.table):
                for needle in needles_in(worker, shard.name, column, tenant, wanted):
                    found[needle].add(column.name)
    return found


def replay_as(
    pool: ConnectionPool, trace: Path, tenant: str, embedder: Embedder
) -> list[dict[str, Any]]:
    """``trace`` replayed through the store on ``pool``'s database with every line's tenant
    made ``tenant`` (the results name no tenant), as ``sgam replay`` replays it: its clock,
    counted ids and ``embedder``."""
    clock = ReplayClock()
    store = MemoryStore(pool, clock=clock, new_id=CountingIds(), embedder=embedder)
    lines = [
        json.dumps(json.loads(line) | {"tenant": tenant}) if line.strip() else line
        for line in trace.read_text(encoding="utf-8").splitlines()
    ]
    return list(replay_lines(store, clock, lines, embedder=embedder))


def single_node_tests(
    module: ModuleType, *, reading: str | None = None, only: Iterable[str] = ()
) -> dict[str, Any]:
    """The tests of a single node's test module and the fixtures it defines, for a module of
    tests/citus to run on the cluster (``globals().update(...)``): there the shared fixtures
    (``pool``, ``store``, ``tenant``, ...) are the cluster's.

    ``reading``: only the tests that take that one fixture and nothing else (the caller
    defines it; the module's own is left out). ``only``: just these tests.
    """
    wanted = set(only)
    chosen: dict[str, Any] = {}
    for name, value in vars(module).items():
        if isinstance(value, FixtureFunctionDefinition):
            if name != reading and value.__module__ == module.__name__:
                chosen[name] = value
        elif name.startswith("test_") and inspect.isfunction(value):
            takes = list(inspect.signature(value).parameters)
            if (reading is None or takes == [reading]) and (not wanted or name in wanted):
                chosen[name] = value
    missing = wanted - chosen.keys()
    assert not missing, f"{module.__name__} has no tests {sorted(missing)}"
    return chosen
