"""A Citus cluster on the loopback interface for the tests of tests/citus, started with the
cluster script of ``../shared/citus`` (a coordinator and N workers on the embedded wheel's
PostgreSQL with the Citus extension), and questions about where a tenant's rows live."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

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
        " WHERE shardid = get_shard_id_for_distribution_column(%s, %s)",
        (table, tenant),
    ).fetchone()
    assert row is not None, f"{table} has no shard for {tenant}: is it distributed?"
    return int(row[0])
