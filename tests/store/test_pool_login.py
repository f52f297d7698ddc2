"""A role boundary PostgreSQL enforces: the API's pool logs in as ``sgam_app`` and has no way out.

The pool's own login is no superuser, bypasses no row-level security and is a member of no
role, so ``RESET ROLE``, ``SET ROLE`` and ``SET SESSION AUTHORIZATION`` leave it where it is.
A setup that would serve behind a role a statement can undo (one superuser URL) is refused
unless a setting says so; a role that is missing is never replaced by the login's own. An
embedded data directory made before the two roles existed is upgraded in place, data kept.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg_pool import ConnectionPool, PoolTimeout

from store.db.database import make_pool, scratch_database
from store.db.migrate import migrate_database
from store.db.roles import (
    APP_ROLE,
    OWNER_ROLE,
    PoolLogin,
    bootstrap_embedded_roles,
    login_as,
    pool_login,
)
from store.errors import DatabaseUnavailable
from store.service import MemoryStore
from tests.helpers import assert_value, declare, record

_numbers = itertools.count(1)


@pytest.fixture(scope="module")
def app_pool(conninfo: str) -> Iterator[ConnectionPool]:
    """The pool as the API opens it without DATABASE_URL: logged in as ``sgam_app`` itself."""
    login = pool_login(conninfo, login_as(conninfo, APP_ROLE))
    with make_pool(login.conninfo, max_size=2, role=login.role) as opened:
        opened.wait()
        yield opened


@pytest.fixture
def acme(store: MemoryStore) -> str:
    """A tenant holding one fact, written through the ordinary store."""
    tenant = f"walled-{next(_numbers)}"
    store.admin.create_tenant(tenant)
    declare(store, tenant)
    record(store, tenant, "e1", "2026-05-01T00:00:00Z", subjects=["mira"])
    assert assert_value(store, tenant, "e1", "2026-07-15").status == "written"
    return tenant


def _who(conn: psycopg.Connection[Any]) -> tuple[Any, ...] | None:
    return conn.execute("SELECT current_user, session_user").fetchone()


def _facts_seen(conn: psycopg.Connection[Any], tenant: str | None) -> int:
    with conn.transaction():
        if tenant is not None:
            conn.execute("SELECT set_config('sgam.tenant_id', %s, true)", (tenant,))
        row = conn.execute("SELECT count(*) FROM fact_versions").fetchone()
    assert row is not None
    return int(row[0])


def test_reset_role_leaves_the_pool_as_sgam_app_behind_row_level_security(
    app_pool: ConnectionPool, acme: str
) -> None:
    with app_pool.connection() as conn:
        conn.autocommit = True
        assert _facts_seen(conn, acme) == 1
        conn.execute("RESET ROLE")
        conn.execute("SELECT set_config('role', 'none', false)")
        assert _who(conn) == (APP_ROLE, APP_ROLE)
        assert _facts_seen(conn, None) == 0  # no tenant named: nothing, as before
        assert _facts_seen(conn, acme) == 1
        assert _facts_seen(conn, "another-tenant") == 0


@pytest.mark.parametrize(
    "statement",
    [
        "SET ROLE postgres",
        "SET ROLE sgam_owner",
        "SET SESSION AUTHORIZATION postgres",
        "SET SESSION AUTHORIZATION sgam_owner",
        "SELECT set_config('role', 'postgres', false)",
    ],
)
def test_the_pool_cannot_take_another_role(app_pool: ConnectionPool, statement: str) -> None:
    with app_pool.connection() as conn:
        conn.autocommit = True
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(statement)
        assert _who(conn) == (APP_ROLE, APP_ROLE)


def test_the_login_is_no_superuser_bypasses_nothing_and_belongs_to_no_role(
    app_pool: ConnectionPool,
) -> None:
    with app_pool.connection() as conn:
        row = conn.execute(
            "SELECT rolsuper, rolbypassrls, rolcanlogin,"
            " (SELECT count(*) FROM pg_auth_members WHERE member = r.oid)"
            " FROM pg_roles AS r WHERE rolname = current_user"
        ).fetchone()
    assert row == (False, False, True, 0)


def test_one_superuser_url_is_refused_unless_a_setting_allows_it(conninfo: str) -> None:
    with pytest.raises(DatabaseUnavailable) as refused:
        pool_login(conninfo, None)
    message = str(refused.value)
    assert "\n" not in message
    assert "superuser postgres" in message
    assert "SGAM_APP_DATABASE_URL" in message
    assert "SGAM_ALLOW_SUPERUSER_DATABASE_URL=true" in message
    assert pool_login(conninfo, None, allow_superuser=True) == PoolLogin(conninfo, APP_ROLE)


def test_an_app_url_that_could_leave_the_wall_is_refused(conninfo: str) -> None:
    with pytest.raises(DatabaseUnavailable, match=r"logs in as postgres, .*\(a superuser"):
        pool_login(conninfo, conninfo)
    owner = login_as(conninfo, OWNER_ROLE)  # a member of sgam_app
    with pytest.raises(DatabaseUnavailable, match=f"a member of {APP_ROLE}"):
        pool_login(conninfo, owner)


def test_a_missing_role_refuses_the_connection_instead_of_keeping_the_login(
    conninfo: str,
) -> None:
    with make_pool(conninfo, max_size=1, role="sgam_nobody") as pool, pytest.raises(PoolTimeout):
        pool.wait(timeout=2)


# -- an embedded data directory from before the two login roles -----------------------------


def _as_before_the_roles(superuser: str) -> None:
    """Undo the bootstrap: no ``sgam_owner``, ``sgam_app`` a role without login, and the schema
    the superuser's, as every embedded data directory was before."""
    with psycopg.connect(superuser, autocommit=True) as conn:
        conn.execute("DROP OWNED BY sgam_owner")
        conn.execute("DROP ROLE sgam_owner")
        conn.execute("ALTER ROLE sgam_app NOLOGIN")


def test_a_data_directory_from_before_the_roles_is_upgraded_in_place() -> None:
    with scratch_database(None) as superuser:
        _as_before_the_roles(superuser)
        migrate_database(superuser)
        with make_pool(superuser, max_size=1) as old:  # SET ROLE sgam_app, as before
            store = MemoryStore(old)
            store.admin.create_tenant("acme")
            declare(store, "acme")
            record(store, "acme", "e1", "2026-05-01T00:00:00Z", subjects=["mira"])
            assert assert_value(store, "acme", "e1", "2026-07-15").status == "written"

        bootstrap_embedded_roles(superuser)

        with psycopg.connect(superuser) as conn:
            owners = conn.execute(
                "SELECT DISTINCT pg_get_userbyid(relowner) FROM pg_class"
                " WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'S')"
                "  AND NOT EXISTS (SELECT 1 FROM pg_depend WHERE objid = pg_class.oid"
                "                  AND deptype = 'e')"
            ).fetchall()
            functions = conn.execute(
                "SELECT DISTINCT pg_get_userbyid(proowner) FROM pg_proc"
                " WHERE proname LIKE 'sgam\\_%'"
            ).fetchall()
        assert owners == [(OWNER_ROLE,)]
        assert functions == [(OWNER_ROLE,)]
        owner = login_as(superuser, OWNER_ROLE)
        assert migrate_database(owner) == []  # the owner runs migrations from now on
        login = pool_login(owner, login_as(superuser, APP_ROLE))
        with make_pool(login.conninfo, max_size=1, role=login.role) as pool:
            pool.wait()
            with pool.connection() as conn:
                assert _who(conn) == (APP_ROLE, APP_ROLE)
                assert _facts_seen(conn, "acme") == 1  # the data of before, kept
            MemoryStore(pool).admin.create_tenant("beta")
        with psycopg.connect(owner) as conn:
            conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(APP_ROLE)))
            assert conn.execute("SELECT count(*) FROM tenants").fetchone() == (0,)
