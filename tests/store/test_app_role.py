"""A ``DATABASE_URL`` whose role is no superuser: refused with the SQL to run, then served.

Migrations create the role the API works as (``sgam_app``) when the URL's role may create
roles; one that may neither create it nor ``SET ROLE`` to it is refused with a message naming
the statements an administrator runs. Once they have run, the same URL migrates and its pooled
connections work as ``sgam_app``, held by row-level security.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

from server.runtime.resources import readiness_pending
from store.db.database import APP_ROLE, check_app_role, make_pool
from store.db.migrate import MigrationFailed, migrate
from store.errors import DatabaseUnavailable
from store.service import MemoryStore


@pytest.fixture
def plain_role_database(conninfo: str) -> Iterator[tuple[str, str]]:
    """A database owned by a fresh login role without superuser or CREATEROLE, its
    extensions installed by a superuser (as a hosted PostgreSQL would have them); the role's
    name and its connection string. ``conninfo`` is migrated, so ``sgam_app`` exists."""
    role = f"sgam_plain_{secrets.token_hex(4)}"
    database = f"sgam_plain_{secrets.token_hex(4)}"
    with psycopg.connect(conninfo, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        admin.execute(
            sql.SQL("CREATE DATABASE {} OWNER {}").format(
                sql.Identifier(database), sql.Identifier(role)
            )
        )
    with psycopg.connect(make_conninfo(conninfo, dbname=database), autocommit=True) as su:
        su.execute("CREATE EXTENSION vector")
        su.execute("CREATE EXTENSION btree_gist")
    try:
        yield role, make_conninfo(conninfo, dbname=database, user=role)
    finally:
        with psycopg.connect(conninfo, autocommit=True) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database))
            )
            admin.execute(
                sql.SQL("REVOKE {} FROM {}").format(*map(sql.Identifier, (APP_ROLE, role)))
            )
            admin.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def test_a_role_that_may_not_set_role_is_refused_with_the_sql_to_run(
    plain_role_database: tuple[str, str], conninfo: str
) -> None:
    role, plain = plain_role_database
    with psycopg.connect(plain) as conn, pytest.raises(MigrationFailed) as refused:
        migrate(conn)
    hint = refused.value.hint or ""
    assert f"may not SET ROLE {APP_ROLE}" in str(refused.value)
    assert f"GRANT {APP_ROLE} TO {role} WITH SET TRUE;" in str(refused.value)
    assert f"GRANT {APP_ROLE} TO {role} WITH SET TRUE;" in hint
    with psycopg.connect(plain) as conn:  # the refusal left no half-migrated schema
        row = conn.execute("SELECT to_regclass('schema_migrations')").fetchone()
    assert row == (None,)

    # A server whose migrations are already applied checks the same before it opens its pool.
    with pytest.raises(DatabaseUnavailable) as unusable:
        check_app_role(plain)
    assert f"GRANT {APP_ROLE} TO {role} WITH SET TRUE;" in str(unusable.value)

    # The administrator runs what the hint names; then the same URL migrates and serves.
    with psycopg.connect(conninfo, autocommit=True) as admin:
        admin.execute(sql.SQL(hint.removeprefix("An administrator runs: ").split(";")[1]))
    check_app_role(plain)
    with psycopg.connect(plain) as conn:
        assert migrate(conn)
    with make_pool(plain, max_size=1) as pool:
        pool.wait()
        store = MemoryStore(pool)
        store.admin.create_tenant("acme")
        with pool.connection() as conn:
            assert conn.execute("SELECT current_user").fetchone() == (APP_ROLE,)
            assert conn.execute("SELECT count(*) FROM tenants").fetchone() == (0,)
        assert store.admin.list_attributes("acme") == []


def test_readiness_replaces_connections_opened_before_the_role_existed(conninfo: str) -> None:
    # As a pool started on a schema from before 0012 would hold them: the URL's own role.
    with make_pool(conninfo, max_size=1, role=None) as pool:
        pool.wait()
        with pool.connection() as conn:
            before = conn.info.backend_pid
        assert readiness_pending(pool) == 0
        with pool.connection() as conn:
            assert conn.info.backend_pid != before
    with make_pool(conninfo, max_size=1) as walled:
        walled.wait()
        with walled.connection() as conn:
            kept = conn.info.backend_pid
        assert readiness_pending(walled) == 0
        with walled.connection() as conn:
            assert conn.info.backend_pid == kept
