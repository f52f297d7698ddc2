"""Where ``sgam bench`` runs: a scratch embedded PostgreSQL, a temporary database on a given
server, or a given Citus cluster's database itself.

A Citus cluster's database cannot be copied into a temporary one (the workers hold their own
databases and the coordinator's metadata names them), so the benchmark runs on the database the
URL names, which must not be migrated yet: the run migrates it (``sgam migrate`` distributes the
schema), makes the owner and app roles as the embedded server has them, and leaves its tenant
there.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from store.bench import bootstrap_embedded_roles, raw_connection, scratch_database


class NotFresh(RuntimeError):
    """A Citus database given to the benchmark already holds SGAM's schema."""


def is_citus(conninfo: str) -> bool:
    """Whether ``conninfo``'s database has the Citus extension (a cluster's coordinator)."""
    with raw_connection(conninfo) as conn:
        row = conn.execute("SELECT count(*) FROM pg_extension WHERE extname = 'citus'").fetchone()
    return bool(row and row[0])


def _require_fresh(conninfo: str) -> None:
    with raw_connection(conninfo) as conn:
        row = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()
    if row and row[0]:
        raise NotFresh(
            f"{described(conninfo)} is already migrated: sgam bench loads its own tenant into a"
            " Citus database, so give it a fresh cluster's (../shared/citus/cluster up DIR)"
        )


@contextmanager
def bench_database(database_url: str | None) -> Iterator[str]:
    """The database a run loads and serves: with no URL a scratch embedded server, with a
    Citus coordinator's URL that database (fresh, its roles made), else a temporary database
    on the URL's server; the scratch and temporary ones are gone afterwards."""
    if database_url and is_citus(database_url):
        _require_fresh(database_url)
        bootstrap_embedded_roles(database_url)
        yield database_url
        return
    with scratch_database(database_url) as conninfo:
        yield conninfo


def described(conninfo: str | None) -> str:
    """The URL without its password, for results and messages ("embedded" without one)."""
    if not conninfo:
        return "embedded"
    hidden = re.sub(r"(://[^:/@]*):[^@]*@", r"\1@", conninfo)  # user:password@host
    return re.sub(r"password\s*=\s*('[^']*'|\S+)", "password=...", hidden)


def database_facts(conninfo: str) -> dict[str, Any]:
    """The server's version and memory settings, pgvector's version and, on a Citus
    coordinator, Citus's version, the active workers and the shard count of new tables."""
    with raw_connection(conninfo) as conn:
        row = conn.execute(
            "SELECT current_setting('server_version'), current_setting('shared_buffers'),"
            " (SELECT extversion FROM pg_extension WHERE extname = 'vector'),"
            " (SELECT extversion FROM pg_extension WHERE extname = 'citus')"
        ).fetchone()
        assert row is not None
        facts: dict[str, Any] = {"postgres": row[0], "shared_buffers": row[1], "pgvector": row[2]}
        if row[3] is None:
            return facts
        workers = conn.execute("SELECT count(*) FROM citus_get_active_worker_nodes()").fetchone()
        shards = conn.execute("SELECT current_setting('citus.shard_count')").fetchone()
    assert workers is not None
    assert shards is not None
    return facts | {"citus": row[3], "workers": int(workers[0]), "shard_count": int(shards[0])}
