"""The bench-only database interface: what evaluations and benchmarks may do below the public API.

A benchmark measures the product beside its floor, the least the database itself can do for the
same answer: a raw statement, a ``COPY``, an ``EXPLAIN``, the vector index read directly. An
evaluation needs a database of its own for each arm. Neither belongs in ``MemoryStore``, so they
are offered here, in one place, and the import contracts (``pyproject.toml``) let only
``evals`` import this module: nothing in the product may depend on it.

Everything here is the store's own: the same pool settings, roles, migrations, index names and
search statement the product uses, so a floor measured through it is the product's floor.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeAlias
from unittest import mock

import psycopg
from psycopg import Error, sql
from psycopg.errors import Diagnostic
from psycopg_pool import ConnectionPool

from store.db import snapshot as _snapshot
from store.db.clock import wall_clock
from store.db.database import (
    APP_ROLE,
    make_pool,
    scratch_database,
    temporary_database,
)
from store.db.migrate import migrate, migrate_database
from store.db.roles import bootstrap_embedded_roles, login_as
from store.db.tenants import enter_tenant
from store.episodes.evidence import (
    EXACT_SCAN_LIMIT,
    HNSW_EF_SEARCH,
    EvidenceHit,
    SearchScope,
    search_evidence,
)
from store.episodes.hnsw import halfvec, index_name
from store.episodes.record import content_hash
from store.governance import receipts as _receipts
from store.governance.receipts import Trace
from store.subjects.names import AskedKeys, find_by_keys, find_similar

__all__ = [
    "APP_ROLE",
    "EXACT_SCAN_LIMIT",
    "HNSW_EF_SEARCH",
    "AskedKeys",
    "Connection",
    "ConnectionPool",
    "Diagnostic",
    "Error",
    "EvidenceHit",
    "SearchScope",
    "Trace",
    "app_login",
    "bootstrap_embedded_roles",
    "content_hash",
    "enter_tenant",
    "find_by_keys",
    "find_similar",
    "halfvec",
    "index_name",
    "login_as",
    "make_pool",
    "migrate",
    "migrate_database",
    "raw_connection",
    "receipts_left_out",
    "scratch_database",
    "search_evidence",
    "sql",
    "temporary_database",
    "wall_clock",
]


Connection: TypeAlias = psycopg.Connection[Any]
"""A connection to a benchmark's database, for its floors: raw statements, ``COPY``, plans."""


def app_login(conninfo: str) -> dict[str, Any]:
    """The settings that make a server's pool log in as ``sgam_app`` on ``conninfo``'s
    database when that role can log in (the embedded cluster's bootstrap makes it so), else
    the one-URL setup, where the pool sets the role itself (``docs/operations/roles.md``)."""
    with psycopg.connect(conninfo) as conn:
        row = conn.execute(
            "SELECT rolcanlogin FROM pg_roles WHERE rolname = %s", [APP_ROLE]
        ).fetchone()
    if row is not None and row[0]:
        return {"database_url": conninfo, "app_database_url": login_as(conninfo, APP_ROLE)}
    return {"database_url": conninfo, "allow_superuser_database_url": True}


def raw_connection(conninfo: str, *, autocommit: bool = False) -> Connection:
    """A plain connection as the URL's own role, with none of the pool's settings: the floor
    a benchmark measures the product beside. Use it as a context manager."""
    return psycopg.connect(conninfo, autocommit=autocommit)


@contextmanager
def receipts_left_out(left_out: bool = True) -> Iterator[None]:
    """Reads and writes inside leave no receipts (when ``left_out``), so a benchmark can measure
    what receipts cost. Both sides of such a comparison should enter this, with ``left_out``
    false for the side as served, so that entering it costs them alike."""
    leave = (lambda *_, **__: None) if left_out else _receipts.leave_receipts
    with (
        mock.patch.object(_snapshot, "leave_receipts", leave),
        mock.patch.object(_receipts, "leave_receipts", leave),
    ):
        yield
