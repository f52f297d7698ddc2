"""The schema on the cluster as ``sgam migrate`` leaves it, and the tenant wall on the workers:
every tenant table distributed by tenant_id and colocated, API keys a reference table, a second
migrate changing nothing, and a worker's shard showing the API's role the tenant its
transaction names and nothing without one."""

from __future__ import annotations

import itertools
from typing import Any
from uuid import uuid4

import psycopg
from psycopg import sql

from store.api.transactions import Transactions
from store.db.clock import wall_clock
from store.db.database import make_pool
from store.db.distribution import plan, read_schema
from store.db.migrate import migrate_database
from store.db.roles import APP_ROLE, login_as
from store.governance.keys import KEY_CHANGED_CHANNEL
from store.service import MemoryStore
from tests.citus_helpers import Cluster

_PLACED = """
SELECT table_name::text, citus_table_type, distribution_column, colocation_id
FROM citus_tables ORDER BY 1
"""


def _placed(conninfo: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(conninfo) as conn:
        return conn.execute(_PLACED).fetchall()


def test_every_tenant_table_is_distributed_by_tenant_and_colocated(citus_conninfo: str) -> None:
    placed = _placed(citus_conninfo)
    with psycopg.connect(citus_conninfo) as conn:
        tenant_tables = {
            row[0]
            for row in conn.execute(
                "SELECT c.relname FROM pg_class AS c JOIN pg_attribute AS a"
                " ON a.attrelid = c.oid AND a.attname = 'tenant_id'"
                " WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r'"
            )
        }
    distributed = {row[0]: row for row in placed if row[1] == "distributed"}
    assert set(distributed) == tenant_tables - {"api_keys"}
    assert {row[2] for row in distributed.values()} == {"tenant_id"}
    assert len({row[3] for row in distributed.values()}) == 1  # one colocation group
    assert [row[:2] for row in placed if row[1] != "distributed"] == [("api_keys", "reference")]


def test_migrating_again_changes_nothing(citus_conninfo: str) -> None:
    before = _placed(citus_conninfo)

    assert migrate_database(citus_conninfo) == []

    assert _placed(citus_conninfo) == before
    with psycopg.connect(citus_conninfo) as conn:
        assert plan(*read_schema(conn)).empty


def _same_shard_tenants(conn: psycopg.Connection[Any]) -> tuple[str, str]:
    """Two tenant names whose rows share one shard of the distributed tables."""
    seen: dict[int, str] = {}
    for number in itertools.count():
        name = f"wall-{number}"
        row = conn.execute(
            "SELECT get_shard_id_for_distribution_column('legal_holds', %s::text)", (name,)
        ).fetchone()
        assert row is not None
        if row[0] in seen:
            return seen[row[0]], name
        seen[row[0]] = name
    raise AssertionError("unreachable")


def _shard(conn: psycopg.Connection[Any], tenant: str) -> tuple[str, int]:
    row = conn.execute(
        "SELECT shard_name, nodeport FROM citus_shards"
        " WHERE shardid = get_shard_id_for_distribution_column('legal_holds', %s::text)",
        (tenant,),
    ).fetchone()
    assert row is not None
    return str(row[0]), int(row[1])


def test_a_workers_shard_shows_the_named_tenant_only_and_nothing_without_one(
    citus_cluster: Cluster, citus_conninfo: str, store: MemoryStore
) -> None:
    with psycopg.connect(citus_conninfo, autocommit=True) as conn:
        first, second = _same_shard_tenants(conn)
        for name in (first, second):
            store.admin.create_tenant(name)
            conn.execute(
                "INSERT INTO legal_holds VALUES (%s, %s, now())", (name, f"held-by-{name}")
            )
        shard, port = _shard(conn, first)
        assert _shard(conn, second) == (shard, port)

    # Through the store's own calls, as the API's role, with no filter on the tenant.
    everything = "SELECT tenant_id::text, subject::text FROM legal_holds ORDER BY 1"
    pool = make_pool(login_as(citus_conninfo, APP_ROLE), role=None)
    with pool:
        transactions = Transactions(pool, wall_clock, uuid4)
        for call in (transactions.read, transactions.run):
            assert call(lambda conn, _: conn.execute(everything).fetchall(), tenant_id=first) == [
                (first, f"held-by-{first}")
            ]
            assert call(lambda conn, _: conn.execute(everything).fetchall(), tenant_id=None) == []

    # On the worker itself, the shard table as the API's role.
    worker = citus_cluster.url_at(port)
    with psycopg.connect(login_as(worker, APP_ROLE)) as conn:
        read_shard = sql.SQL("SELECT tenant_id::text FROM {} ORDER BY 1").format(
            sql.Identifier(shard)
        )
        assert conn.execute(read_shard).fetchall() == []
        conn.execute(sql.SQL("SET LOCAL sgam.tenant_id = {}").format(sql.Literal(second)))
        assert conn.execute(read_shard).fetchall() == [(second,)]
        conn.rollback()
        assert conn.execute(read_shard).fetchall() == []


def test_every_shard_of_the_episode_vectors_has_its_hnsw_index(citus_conninfo: str) -> None:
    with psycopg.connect(citus_conninfo) as conn:
        rows = conn.execute(
            "SELECT shardid, result FROM run_command_on_shards('episode_vectors',"
            " $$SELECT count(*) FROM pg_indexes WHERE tablename = '%s'"
            " AND indexdef LIKE '%%USING hnsw%%'$$)"
        ).fetchall()
    assert rows
    assert all(int(result) >= 1 for _, result in rows)


def test_a_revoked_key_is_announced_on_the_coordinator(
    citus_conninfo: str, store: MemoryStore, tenant: str
) -> None:
    key = store.admin.create_api_key(tenant)
    with psycopg.connect(citus_conninfo, autocommit=True) as listener:
        listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(KEY_CHANGED_CHANNEL)))
        store.admin.revoke_api_key(key.key_id)
        heard = list(listener.notifies(timeout=10, stop_after=1))
    assert [note.payload for note in heard] == [str(key.key_id)]
    assert store.admin.authenticate(key.api_key) is None
