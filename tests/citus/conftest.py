"""The Citus tests: the store and the server on a coordinator with two workers.

They run when asked: ``pytest --citus``, ``SGAM_CITUS=1`` or under ``CI=true``; otherwise they
skip and say why. One cluster serves the whole run (``cluster up`` of ``../shared/citus``, or
the script ``SGAM_CITUS_CLUSTER`` names), migrated once on the coordinator with a small shard
count; each test gets a tenant of its own through the fixtures of tests/conftest.py, which
find the cluster's database through this folder's ``conninfo``. Under ``CI=true`` a cluster
that cannot start fails the run; elsewhere the tests skip with the script's words.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import psycopg
import pytest

from store.db.migrate import migrate_database
from store.db.roles import bootstrap_embedded_roles
from tests.citus_helpers import (
    SCRIPT_ENV,
    SHARD_COUNT,
    Cluster,
    ClusterFailed,
    cluster_script,
    start_cluster,
    stop_cluster,
)
from tests.receipt_audit import audit_receipts

SELECT_ENV = "SGAM_CITUS"


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def citus_selected(config: pytest.Config) -> bool:
    """Whether this run asked for the Citus tests."""
    asked = bool(config.getoption("citus", default=False))
    return asked or os.environ.get(SELECT_ENV) == "1" or _in_ci()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark this folder's tests ``citus`` and ``slow``; skip them unless the run asked."""
    selected = citus_selected(config)
    skip = pytest.mark.skip(
        reason=f"the Citus tests run with --citus, {SELECT_ENV}=1 or CI=true"
        " (scripts/test passes --citus when ../shared/citus/cluster is there)"
    )
    for item in items:
        if item.path.parent.name != "citus":
            continue
        item.add_marker(pytest.mark.citus)
        item.add_marker(pytest.mark.slow)
        if not selected:
            item.add_marker(skip)


def _unavailable(reason: str) -> None:
    if _in_ci():
        pytest.fail(f"CI=true and no Citus cluster: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def citus_cluster() -> Iterator[Cluster]:
    """A coordinator and two workers for the whole run, stopped (and its folder deleted) at
    the end. Tests that add a worker (``cluster.up(3)``) leave it in."""
    script = cluster_script()
    if not script.is_file():
        _unavailable(f"no cluster script at {script} (set {SCRIPT_ENV} to its path)")
    try:
        cluster = start_cluster(workers=2)
    except (ClusterFailed, OSError) as error:
        _unavailable(str(error))
    try:
        yield cluster
    finally:
        stop_cluster(cluster)


@pytest.fixture(scope="session")
def citus_conninfo(citus_cluster: Cluster) -> str:
    """The coordinator's database, migrated once for the run, as its superuser, with the
    owner and app roles and the extensions (``bootstrap_embedded_roles``, as the embedded
    server gets them) and ``citus.shard_count`` small."""
    url = citus_cluster.url
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"ALTER SYSTEM SET citus.shard_count = {SHARD_COUNT}".encode())
        conn.execute("SELECT pg_reload_conf()")
    bootstrap_embedded_roles(url)
    migrate_database(url)
    return url


@pytest.fixture(scope="module")
def conninfo(citus_conninfo: str) -> Iterator[str]:
    """The cluster's database in place of the single node's fresh one: tests/conftest.py's
    pool, store, tenant, api_settings and http fixtures then run on the coordinator."""
    yield citus_conninfo
    with psycopg.connect(citus_conninfo) as conn:
        audit_receipts(conn)
