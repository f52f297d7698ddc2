"""Numbered, append-only SQL migrations, applied in order and recorded in ``schema_migrations``.

``migrate`` is the one place that changes the schema: ``sgam migrate``, ``sgam serve``'s start
(unless SGAM_MIGRATE_ON_START=false) and code that sets up a database of its own (tests,
evaluations) call it. Everything else checks with ``require_current_schema`` and refuses a
database whose schema is behind or ahead of this code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

import psycopg

from store.db.distribution import citus_installed, distribute
from store.db.text_search import apply_config
from store.errors import DatabaseUnavailable

_NAME = re.compile(r"(\d{4})_([a-z0-9_]+)\.sql")
# Any constant shared by every migrator: concurrent starts apply each migration once.
_MIGRATION_LOCK = 0x5347414D


@dataclass(frozen=True, slots=True)
class Migration:
    """One numbered SQL file of ``store/migrations``."""

    version: int
    name: str
    sql: str


def available_migrations() -> list[Migration]:
    """Every migration shipped with the package, in version order."""
    found = []
    for entry in resources.files("store.migrations").iterdir():
        match = _NAME.fullmatch(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    found.sort(key=lambda migration: migration.version)
    versions = [migration.version for migration in found]
    if versions != list(range(1, len(found) + 1)):
        raise RuntimeError(f"migrations must be numbered 1..n without gaps, found {versions}")
    return found


_CREATE_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY,
    name text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)
"""


def applied_versions(conn: psycopg.Connection[Any]) -> set[int]:
    """The versions already recorded (empty on a blank database)."""
    exists = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()
    if not exists or not exists[0]:
        return set()
    return {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}


def pending_migrations(conn: psycopg.Connection[Any]) -> list[Migration]:
    """Migrations not yet applied to this database."""
    done = applied_versions(conn)
    return [migration for migration in available_migrations() if migration.version not in done]


def unknown_versions(conn: psycopg.Connection[Any]) -> list[int]:
    """Versions recorded in the database that this code does not ship (a newer release's)."""
    known = {migration.version for migration in available_migrations()}
    return sorted(applied_versions(conn) - known)


class SchemaNotCurrent(DatabaseUnavailable):
    """The database's schema is not the one this code was written for."""


class MigrationFailed(DatabaseUnavailable):
    """A migration the database refused; none of the run's migrations is kept.

    The message names the migration, the database's reason and its hint, which for the
    application role (0012) is the SQL an administrator runs.
    """

    def __init__(self, migration: Migration, error: psycopg.Error) -> None:
        reason = error.diag.message_primary or str(error)
        hint = f" ({error.diag.message_hint})" if error.diag.message_hint else ""
        super().__init__(
            f"migration {migration.version:04d}_{migration.name} failed: {reason}{hint};"
            " no migration of this run was applied"
        )
        self.hint = error.diag.message_hint


def require_current_schema(conn: psycopg.Connection[Any]) -> None:
    """Refuse a database with pending migrations or with versions this code does not know.

    Nothing but ``migrate`` changes the schema, so a command that finds it behind says which
    migrations are missing and how to apply them, and changes nothing.
    """
    refuse_schema_ahead(conn)
    pending = pending_migrations(conn)
    if pending:
        names = ", ".join(f"{migration.version:04d}_{migration.name}" for migration in pending)
        raise SchemaNotCurrent(
            f"the database schema is behind this version of sgam: migrations {names} are"
            " pending; run `sgam migrate` (or start `sgam serve`, which applies them unless"
            " SGAM_MIGRATE_ON_START=false)"
        )


def refuse_schema_ahead(conn: psycopg.Connection[Any]) -> None:
    """Refuse a database that records migrations this code does not know (a newer release's)."""
    ahead = ", ".join(f"{version:04d}" for version in unknown_versions(conn))
    if ahead:
        raise SchemaNotCurrent(
            f"the database schema is ahead of this version of sgam: it records migrations"
            f" {ahead}, which this version does not know; run a sgam release that ships them"
            " (a migrated database cannot be downgraded)"
        )


def migrate(
    conn: psycopg.Connection[Any],
    *,
    target: int | None = None,
    text_search_config: str | None = None,
) -> list[Migration]:
    """Apply every pending migration (up to version ``target`` when given), each in its own
    transaction; return what was applied.

    With ``text_search_config`` (``SGAM_TEXT_SEARCH_CONFIG``), the episodes' full-text
    documents are then built with that configuration (``store.db.text_search``), rebuilt if
    they were built with another.

    A database that records versions this code does not know is refused (``SchemaNotCurrent``)
    and left as it is. On a database with the ``citus`` extension, the tables are then placed
    on the cluster (``store.db.distribution``) in a transaction of its own, applied or not.
    """
    applied: list[Migration] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%(key)s)", {"key": _MIGRATION_LOCK})
        conn.execute(_CREATE_TABLE)
        refuse_schema_ahead(conn)
        for migration in pending_migrations(conn):
            if target is not None and migration.version > target:
                break
            try:
                with conn.transaction():
                    conn.execute(migration.sql.encode())
                    conn.execute(
                        "INSERT INTO schema_migrations (version, name)"
                        " VALUES (%(version)s, %(name)s)",
                        {"version": migration.version, "name": migration.name},
                    )
            except psycopg.Error as error:
                raise MigrationFailed(migration, error) from error
            applied.append(migration)
        if text_search_config is not None:
            try:
                apply_config(conn, text_search_config)
            except psycopg.Error as error:  # no such configuration, most likely
                reason = error.diag.message_primary or str(error)
                raise DatabaseUnavailable(
                    f"SGAM_TEXT_SEARCH_CONFIG {text_search_config!r}: {reason}"
                ) from error
    if citus_installed(conn):
        # A transaction of its own: Citus creates a distributed table's dependencies (the
        # sequences of its defaults) on the workers over other connections, which cannot see
        # objects this transaction made. Idempotent, so a failed run is completed by the next.
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%(key)s)", {"key": _MIGRATION_LOCK})
            distribute(conn)
    return applied


def migrate_database(
    conninfo: str, *, target: int | None = None, text_search_config: str | None = None
) -> list[Migration]:
    """``migrate`` on a connection of its own to ``conninfo``."""
    with psycopg.connect(conninfo) as conn:
        return migrate(conn, target=target, text_search_config=text_search_config)
