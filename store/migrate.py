"""Numbered, append-only SQL migrations, applied in order and recorded in ``schema_migrations``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

import psycopg

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


def migrate(conn: psycopg.Connection[Any], *, target: int | None = None) -> list[Migration]:
    """Apply every pending migration (up to version ``target`` when given), each in its own
    transaction; return what was applied."""
    applied: list[Migration] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%(key)s)", {"key": _MIGRATION_LOCK})
        conn.execute(_CREATE_TABLE)
        for migration in pending_migrations(conn):
            if target is not None and migration.version > target:
                break
            with conn.transaction():
                conn.execute(migration.sql.encode())
                conn.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES (%(version)s, %(name)s)",
                    {"version": migration.version, "name": migration.name},
                )
            applied.append(migration)
    return applied
