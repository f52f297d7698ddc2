"""The roles of a database: a superuser bootstraps, ``sgam_owner`` owns, ``sgam_app`` serves.

In the embedded default the superuser only installs the extensions and creates the two login
roles (``bootstrap_embedded_roles``); migrations and the operator commands log in as
``sgam_owner``, which owns the schema, and the API's pool logs in as ``sgam_app``: no superuser,
no ``BYPASSRLS``, member of no role, so no statement of a session can leave row-level security.
A data directory made before the two roles existed is upgraded in place: the superuser hands
every schema object it owns over to ``sgam_owner``.

With an external ``DATABASE_URL`` the administrator makes the same two roles (docs: roles);
``pool_login`` checks what the API's pool logs in as, whichever setup is used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from store.errors import DatabaseUnavailable

OWNER_ROLE = "sgam_owner"
"""The login role that owns the schema, runs migrations and the operator commands."""

APP_ROLE = "sgam_app"
"""The role every pooled API connection works as, held by row-level security (migration 0012)."""

EXTENSIONS = ("btree_gist", "btree_gin", "vector", "pg_trgm")

_ROLES = """
DO $$
BEGIN
    IF to_regrole('sgam_owner') IS NULL THEN
        CREATE ROLE sgam_owner LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
    END IF;
    IF to_regrole('sgam_app') IS NULL THEN
        CREATE ROLE sgam_app LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
    ELSE
        -- a data directory from before: sgam_app was a role to SET, now it logs in
        ALTER ROLE sgam_app LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
    END IF;
END
$$;
GRANT sgam_app TO sgam_owner WITH SET TRUE;
GRANT USAGE, CREATE ON SCHEMA public TO sgam_owner;
"""

# Every object of the public schema a superuser owns, extensions' members left out, in an order
# ALTER ... OWNER accepts: tables (with their indexes and owned sequences), free sequences,
# functions, then types (domains).
_HAND_OVER = """
DO $$
DECLARE
    item record;
BEGIN
    FOR item IN
        SELECT c.oid, c.relkind FROM pg_class AS c
        JOIN pg_roles AS r ON r.oid = c.relowner
        WHERE c.relnamespace = 'public'::regnamespace AND r.rolsuper
          AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
          AND NOT EXISTS (SELECT 1 FROM pg_depend AS d WHERE d.classid = 'pg_class'::regclass
                          AND d.objid = c.oid AND d.deptype IN ('e', 'a', 'i'))
        ORDER BY c.relkind = 'S'
    LOOP
        EXECUTE format('ALTER %s %s OWNER TO sgam_owner',
                       CASE item.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW'
                            WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'f' THEN 'FOREIGN TABLE'
                            ELSE 'TABLE' END,
                       item.oid::regclass);
    END LOOP;
    FOR item IN
        SELECT p.oid FROM pg_proc AS p JOIN pg_roles AS r ON r.oid = p.proowner
        WHERE p.pronamespace = 'public'::regnamespace AND r.rolsuper
          AND NOT EXISTS (SELECT 1 FROM pg_depend AS d WHERE d.classid = 'pg_proc'::regclass
                          AND d.objid = p.oid AND d.deptype = 'e')
    LOOP
        EXECUTE format('ALTER ROUTINE %s OWNER TO sgam_owner', item.oid::regprocedure);
    END LOOP;
    FOR item IN
        SELECT t.oid FROM pg_type AS t JOIN pg_roles AS r ON r.oid = t.typowner
        WHERE t.typnamespace = 'public'::regnamespace AND r.rolsuper
          AND t.typtype IN ('d', 'e', 'r', 'm') AND t.typelem = 0
          AND NOT EXISTS (SELECT 1 FROM pg_depend AS d WHERE d.classid = 'pg_type'::regclass
                          AND d.objid = t.oid AND d.deptype = 'e')
    LOOP
        EXECUTE format('ALTER TYPE %s OWNER TO sgam_owner', item.oid::regtype);
    END LOOP;
END
$$;
ALTER DEFAULT PRIVILEGES FOR ROLE sgam_owner IN SCHEMA public
    GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO sgam_app;
ALTER DEFAULT PRIVILEGES FOR ROLE sgam_owner IN SCHEMA public
    GRANT USAGE, SELECT ON SEQUENCES TO sgam_app;
"""


def bootstrap_embedded_roles(superuser_conninfo: str) -> None:
    """As the embedded cluster's superuser: the extensions, the two login roles, and every
    schema object the superuser still owns handed to ``sgam_owner``. Idempotent, one
    transaction; run at each start, so a data directory from before the roles is upgraded."""
    with psycopg.connect(superuser_conninfo) as conn:
        for extension in EXTENSIONS:
            conn.execute(f"CREATE EXTENSION IF NOT EXISTS {extension}".encode())
        conn.execute(_ROLES.encode())
        conn.execute(_HAND_OVER.encode())


def login_as(conninfo: str, role: str) -> str:
    """``conninfo`` logging in as ``role`` instead (the embedded cluster trusts its socket)."""
    return make_conninfo(conninfo, user=role)


@dataclass(frozen=True, slots=True)
class PoolLogin:
    """What the API's pool connects with, and the role it then sets (None: the login's own)."""

    conninfo: str
    role: str | None


def pool_login(
    owner_conninfo: str, app_conninfo: str | None, *, allow_superuser: bool = False
) -> PoolLogin:
    """How the API's pool logs in, refusing a setup that leaves it a way out of row-level
    security.

    With ``app_conninfo`` the pool logs in as that URL's role, which must be no superuser, not
    bypass row-level security and be a member of no role. Without it, the pool logs in as
    ``owner_conninfo``'s role and sets ``APP_ROLE``, which any statement can undo: refused for a
    superuser unless ``allow_superuser`` (the setting SGAM_ALLOW_SUPERUSER_DATABASE_URL).
    """
    if app_conninfo is not None:
        user, superuser, bypass, member_of = _role_of(app_conninfo)
        if superuser or bypass or member_of:
            raise DatabaseUnavailable(
                f"SGAM_APP_DATABASE_URL logs in as {user}, which can leave row-level security"
                f" ({_why(superuser=superuser, bypass=bypass, member_of=member_of)}); give it a"
                " login role like sgam_app: NOSUPERUSER, NOBYPASSRLS and a member of no role"
            )
        return PoolLogin(app_conninfo, None)
    user, superuser, _, _ = _role_of(owner_conninfo)
    if superuser and not allow_superuser:
        raise DatabaseUnavailable(
            f"DATABASE_URL logs in as the superuser {user}, which no row-level security holds;"
            " set SGAM_APP_DATABASE_URL to a login role like sgam_app (NOSUPERUSER NOBYPASSRLS),"
            " or SGAM_ALLOW_SUPERUSER_DATABASE_URL=true to serve as the superuser anyway"
        )
    return PoolLogin(owner_conninfo, APP_ROLE)


def _role_of(conninfo: str) -> tuple[str, bool, bool, list[str]]:
    try:
        with psycopg.connect(conninfo, connect_timeout=10) as conn:
            row = conn.execute(
                "SELECT r.rolname, r.rolsuper, r.rolbypassrls,"
                " ARRAY(SELECT g.rolname FROM pg_auth_members AS m"
                "       JOIN pg_roles AS g ON g.oid = m.roleid WHERE m.member = r.oid)"
                " FROM pg_roles AS r WHERE r.rolname = current_user"
            ).fetchone()
    except psycopg.OperationalError as error:
        where = conninfo_to_dict(conninfo).get("user") or "its role"
        raise DatabaseUnavailable(f"cannot connect to the database as {where}: {error}") from error
    assert row is not None  # current_user is always a role
    return row[0], row[1], row[2], list(row[3])


def _why(*, superuser: bool, bypass: bool, member_of: list[Any]) -> str:
    reasons = ["a superuser"] if superuser else []
    reasons += ["BYPASSRLS"] if bypass else []
    reasons += [f"a member of {', '.join(member_of)}"] if member_of else []
    return ", ".join(reasons)
