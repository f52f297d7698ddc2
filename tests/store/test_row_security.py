"""The second wall between tenants: row-level security, in force for the role the API works as.

Every table with a ``tenant_id`` shows the pooled role (``sgam_app``) only the rows of the
tenant its transaction names. The catalog test covers tables added later too; the wall holds
with a wrong or missing tenant setting, and it holds with the application's own tenant filter
taken out of every query.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg import errors, sql
from psycopg_pool import ConnectionPool

from store.db.clock import ManualClock
from store.db.database import APP_ROLE, make_pool
from store.db.tenants import enter_tenant
from store.errors import NotFound
from store.service import MemoryStore
from tests.helpers import assert_value, declare, owner_connection, record

_TENANT_TABLES = """
SELECT c.relname, c.relrowsecurity
FROM pg_class AS c
JOIN pg_namespace AS n ON n.oid = c.relnamespace
JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
ORDER BY c.relname
"""

_WALL = "(tenant_id = current_setting('sgam.tenant_id'::text, true))"
"""A policy's condition as the catalog prints it: the row's tenant is the one named."""


def _tenant_tables(conn: psycopg.Connection[Any]) -> dict[str, bool]:
    return {str(name): bool(on) for name, on in conn.execute(_TENANT_TABLES)}


def test_every_table_with_a_tenant_id_has_row_level_security_in_force(pool: ConnectionPool) -> None:
    with owner_connection(pool) as conn:
        tables = _tenant_tables(conn)
        policies = conn.execute(
            "SELECT tablename, cmd, roles::text[], qual, with_check FROM pg_policies"
            " WHERE schemaname = 'public'"
        ).fetchall()
    assert {"fact_versions", "episodes", "api_keys", "tenants"} <= tables.keys()
    assert [name for name, on in tables.items() if not on] == []
    walled = {
        table
        for table, cmd, roles, qual, check in policies
        if cmd == "ALL" and roles == ["public"] and qual == check == _WALL
    }
    assert sorted(tables.keys() - walled) == []


def test_the_pooled_role_owns_nothing_and_cannot_bypass_the_wall(pool: ConnectionPool) -> None:
    with pool.connection() as conn:
        row = conn.execute(
            "SELECT current_user, rolsuper, rolbypassrls,"
            " (SELECT count(*) FROM pg_tables WHERE tableowner = current_user)"
            " FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
    assert row == (APP_ROLE, False, False, 0)


@pytest.fixture
def seeded(store: MemoryStore, tenant: str) -> str:
    """A tenant holding a fact, its episode, a declared attribute and an API key."""
    declare(store, tenant)
    record(store, tenant, "e1", "2026-05-01T00:00:00Z", subjects=["mira"])
    assert assert_value(store, tenant, "e1", "2026-07-15").status == "written"
    store.admin.create_api_key(tenant)
    return tenant


def _counts(pool: ConnectionPool, setting: str | None) -> dict[str, int]:
    """Rows the pooled role sees in each tenant table with ``sgam.tenant_id`` at ``setting``."""
    with pool.connection() as conn, conn.transaction():
        if setting is not None:
            enter_tenant(conn, setting)  # as the store names it: on Citus, the workers too
        counts = {}
        for table in _tenant_tables(conn):
            query = sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table))
            row = conn.execute(query).fetchone()
            counts[table] = 0 if row is None else int(row[0])
        return counts


@pytest.mark.parametrize("setting", [None, "", "another-tenant", "%"], ids=repr)
def test_a_wrong_or_missing_tenant_setting_shows_nothing(
    pool: ConnectionPool, seeded: str, setting: str | None
) -> None:
    assert set(_counts(pool, setting).values()) == {0}
    own = _counts(pool, seeded)
    for table in ("tenants", "attributes", "episodes", "fact_versions", "api_keys"):
        assert own[table] >= 1, table


def _as(conn: psycopg.Connection[Any], setting: str, statement: str, value: str) -> int:
    """Run ``statement`` with ``sgam.tenant_id`` at ``setting``; the rows it changed."""
    with conn.transaction():
        enter_tenant(conn, setting)
        return conn.execute(statement, [value]).rowcount


def test_a_write_for_another_tenant_than_the_one_named_is_refused(
    pool: ConnectionPool, seeded: str
) -> None:
    update = "UPDATE episodes SET text = 'overwritten' WHERE tenant_id = %s"
    insert = "INSERT INTO tenants (tenant_id, created_at) VALUES (%s, now())"
    with pool.connection() as conn:
        for setting in ("", "another-tenant"):
            assert _as(conn, setting, update, seeded) == 0  # no row of it is visible
            with pytest.raises(errors.InsufficientPrivilege):
                _as(conn, setting, insert, f"{seeded}-new")
        assert _as(conn, f"{seeded}-new", insert, f"{seeded}-new") == 1  # its own: allowed
    with owner_connection(pool) as conn:
        texts = conn.execute("SELECT text FROM episodes WHERE tenant_id = %s", [seeded]).fetchall()
    assert texts == [("an episode",)]


_TENANT_FILTER = re.compile(r"\b(?:\w+\.)?tenant_id\s*=\s*%\(tenant_id\)s")


@pytest.fixture
def unfiltered(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every statement runs with the application's ``tenant_id = %(tenant_id)s`` filters
    replaced by ``TRUE``; the list counts the filters removed."""
    return remove_tenant_filters(monkeypatch)


def remove_tenant_filters(
    monkeypatch: pytest.MonkeyPatch, *, keeping: re.Pattern[str] | None = None
) -> list[int]:
    """Replace the application's tenant filters by ``TRUE`` in every statement but those
    ``keeping`` matches; the list counts the filters removed."""
    removed = [0]
    execute = psycopg.Cursor.execute

    def without_tenant_filter(
        cursor: psycopg.Cursor[Any], query: Any, *args: Any, **kwargs: Any
    ) -> Any:
        if isinstance(query, sql.Composable):
            query = query.as_string(cursor)
        if isinstance(query, bytes):
            query = query.decode()
        if keeping is None or not keeping.search(query):
            query, count = _TENANT_FILTER.subn("TRUE", query)
            removed[0] += count
        return execute(cursor, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "execute", without_tenant_filter)
    return removed


@pytest.fixture
def owner_pool(conninfo: str) -> Iterator[ConnectionPool]:
    """A pool working as the tables' owner, whom row-level security does not hold."""
    with make_pool(conninfo, max_size=2, role=None) as opened:
        opened.wait()
        yield opened


def reads_of(store: MemoryStore, tenant: str) -> dict[str, Any]:
    """What ``tenant`` can learn of subject ``mira`` and episode ``e1`` through the store."""

    def found(call: Any) -> Any:
        try:
            return call()
        except NotFound:
            return None

    current = found(lambda: store.facts.current(tenant, "mira", "passport_deadline"))
    history = found(lambda: store.facts.history(tenant, "mira", "passport_deadline"))
    episode = found(lambda: store.episodes.get(tenant, "e1"))
    return {
        "current": None if current is None else current.value,
        "history": None if history is None else [f.value for f in history],
        "episode": None if episode is None else episode.text,
        "subjects": store.subjects.list(tenant).subjects,
        "conflicts": store.conflicts.list(tenant).conflicts,
    }


def nothing_leaks_to_another_tenant(store: MemoryStore, seeded: str, unfiltered: list[int]) -> str:
    """With the filters taken out, a new tenant reads nothing of ``seeded``'s; the new tenant."""
    other = f"{seeded}-other"
    store.admin.create_tenant(other)
    nothing: dict[str, Any] = {
        "current": None,
        "history": None,
        "episode": None,
        "subjects": [],
        "conflicts": [],
    }
    assert reads_of(store, other) == nothing
    assert unfiltered[0] > 0  # the filters were really taken out
    return other


def test_with_the_application_s_tenant_filter_removed_nothing_leaks(
    store: MemoryStore,
    seeded: str,
    clock: ManualClock,
    owner_pool: ConnectionPool,
    unfiltered: list[int],
) -> None:
    other = nothing_leaks_to_another_tenant(store, seeded, unfiltered)
    # The same reads as the tables' owner, whom no policy holds, show the other tenant's rows:
    # only the wall kept them out above.
    leaked = reads_of(MemoryStore(owner_pool, clock=clock), other)
    assert (leaked["current"], leaked["episode"]) == ("2026-07-15", "an episode")
    assert leaked["history"]
    assert "mira" in leaked["subjects"]
