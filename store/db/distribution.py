"""The schema on a Citus cluster: which table is a reference table, which is distributed.

On a database where the ``citus`` extension exists, ``migrate`` calls ``distribute`` after the
migrations it applies, in a transaction of its own; elsewhere nothing here runs. The rule, kept in
``placement``:

- every table with a ``tenant_id`` is distributed by it, tenants included, and all of them are
  colocated: a tenant's rows of every table live in shards on the same worker, so a statement
  that names one tenant runs on one worker, joins and foreign keys included;
- the global tables (``GLOBAL_TABLES``: API keys, whose ``key_id`` is unique across tenants and
  looked up before any tenant is known) and every table without a ``tenant_id`` are reference
  tables, a copy on every node. A reference table may not reference a distributed one, so the
  key's tenant is checked by the code that issues it (migration 0031 dropped that foreign key;
  tenants are never deleted); a page's session, distributed, still references its key;
- ``schema_migrations`` stays on the coordinator (``LOCAL_TABLES``): only ``migrate`` reads it.

Later migrations need nothing of their own: they create their tables as plain PostgreSQL
tables, and the ``distribute`` that follows places every table not yet placed by the same rule
(``plan``), idempotently. A foreign key stands in the way while one of its tables changes
placement, so the plan drops the foreign keys of the tables it moves and adds them again once
every table is placed. The shard count of
new distributed tables is Citus's ``citus.shard_count`` (32 unless set; a test cluster sets a
small one for the database or the migrating session).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

import psycopg
from psycopg import sql

Placement = Literal["local", "reference", "distributed"]

GLOBAL_TABLES = frozenset({"api_keys"})
"""Tables with a ``tenant_id`` that are read before a tenant is known: reference tables."""

LOCAL_TABLES = frozenset({"schema_migrations"})
"""Tables left on the coordinator alone."""

TENANT_COLUMN = "tenant_id"

SINGLE_NODE_TRIGGERS = {"api_keys": ("api_keys_changed", "api_keys_truncated")}
"""Triggers dropped as their table is placed, since Citus places no table with triggers. Each
one's work is done by the code too: the key-change notification of migration 0008 is sent by
``store.governance.keys`` as well, so on Citus only a change made by hand in SQL goes
unannounced."""


@dataclass(frozen=True, slots=True)
class Table:
    """A table of the schema as the cluster holds it now."""

    name: str
    has_tenant: bool
    placement: Placement


@dataclass(frozen=True, slots=True)
class ForeignKey:
    """A foreign key constraint: where it is, what it references, how to make it again."""

    table: str
    name: str
    references: str
    definition: str


@dataclass(frozen=True, slots=True)
class Plan:
    """What ``distribute`` does, in order: drop, place, add back."""

    drop: tuple[ForeignKey, ...]
    reference: tuple[str, ...]
    distribute: tuple[str, ...]
    colocate_with: str | None
    add: tuple[ForeignKey, ...]

    @property
    def empty(self) -> bool:
        """Whether the schema is already placed as the rule says."""
        return not (self.drop or self.reference or self.distribute)


def placement(table: Table) -> Placement:
    """Where the rule puts ``table``."""
    if table.name in LOCAL_TABLES:
        return "local"
    if table.name in GLOBAL_TABLES or not table.has_tenant:
        return "reference"
    return "distributed"


def plan(tables: Iterable[Table], foreign_keys: Iterable[ForeignKey]) -> Plan:
    """The steps that place every table by ``placement``; an empty plan when all are placed.

    Distributed tables are colocated with one already distributed, if any, else with the first
    distributed by this plan. Tables that already have their placement are left as they are.
    """
    tables = sorted(tables, key=lambda table: table.name)
    moving = {table.name for table in tables if placement(table) != table.placement}
    blocking = tuple(key for key in foreign_keys if key.table in moving or key.references in moving)
    placed = [table.name for table in tables if table.placement == "distributed"]
    to_distribute = tuple(
        table.name for table in tables if table.name in moving and placement(table) == "distributed"
    )
    anchor = placed[0] if placed else None
    return Plan(
        drop=blocking,
        reference=tuple(
            table.name
            for table in tables
            if table.name in moving and placement(table) == "reference"
        ),
        distribute=to_distribute,
        colocate_with=anchor,
        add=blocking,
    )


_TABLES = """
SELECT c.relname,
       EXISTS (SELECT 1 FROM pg_attribute AS a WHERE a.attrelid = c.oid
               AND a.attname = %(tenant)s AND NOT a.attisdropped),
       coalesce((SELECT CASE WHEN p.partmethod = 'h' THEN 'distributed'
                             WHEN p.repmodel = 't' THEN 'reference' ELSE 'local' END
                 FROM pg_dist_partition AS p WHERE p.logicalrelid = c.oid), 'local')
FROM pg_class AS c
WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
  AND NOT c.relispartition
  AND NOT EXISTS (SELECT 1 FROM pg_depend AS d WHERE d.classid = 'pg_class'::regclass
                  AND d.objid = c.oid AND d.deptype = 'e')
"""

_FOREIGN_KEYS = """
SELECT k.conrelid::regclass::text, k.conname, k.confrelid::regclass::text,
       pg_get_constraintdef(k.oid)
FROM pg_constraint AS k
WHERE k.contype = 'f' AND k.connamespace = 'public'::regnamespace AND k.conparentid = 0
ORDER BY 1, 2
"""


def citus_installed(conn: psycopg.Connection[Any]) -> bool:
    """Whether the database has the ``citus`` extension."""
    found = conn.execute("SELECT " + HAS_CITUS).fetchone()
    return bool(found and found[0])


def read_schema(conn: psycopg.Connection[Any]) -> tuple[list[Table], list[ForeignKey]]:
    """The tables and foreign keys of the schema, as the cluster holds them now."""
    tables = [
        Table(name, has_tenant, placement)
        for name, has_tenant, placement in conn.execute(_TABLES, {"tenant": TENANT_COLUMN})
    ]
    keys = [
        ForeignKey(table, name, references, definition)
        for table, name, references, definition in conn.execute(_FOREIGN_KEYS)
    ]
    return tables, keys


def distribute(conn: psycopg.Connection[Any]) -> Plan:
    """Place every table of the schema by the rule, on a database with Citus; return the plan.

    Runs in the caller's transaction. Idempotent: a placed schema gives an empty plan.
    """
    found = plan(*read_schema(conn))
    if found.empty:
        return found
    # Citus refuses parallel shard connections in a transaction that then changes metadata.
    conn.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")
    for key in found.drop:
        conn.execute(
            sql.SQL("ALTER TABLE {} DROP CONSTRAINT {}").format(
                sql.Identifier(key.table), sql.Identifier(key.name)
            )
        )
    for name in found.reference:
        for trigger in SINGLE_NODE_TRIGGERS.get(name, ()):
            conn.execute(
                sql.SQL("DROP TRIGGER IF EXISTS {} ON {}").format(
                    sql.Identifier(trigger), sql.Identifier(name)
                )
            )
        conn.execute("SELECT create_reference_table(%(table)s)", {"table": name})
    anchor = found.colocate_with
    for name in found.distribute:
        conn.execute(
            "SELECT create_distributed_table(%(table)s, %(column)s, colocate_with => %(with)s)",
            {"table": name, "column": TENANT_COLUMN, "with": anchor or "none"},
        )
        anchor = anchor or name
    for key in found.add:
        conn.execute(
            sql.SQL("ALTER TABLE {} ADD CONSTRAINT {} ").format(
                sql.Identifier(key.table), sql.Identifier(key.name)
            )
            + sql.SQL(key.definition)
        )
    return found


HAS_CITUS = "EXISTS (SELECT FROM pg_extension WHERE extname = 'citus')"
"""SQL: whether the database has Citus (asked once per pooled connection, when it opens)."""

_ON_CITUS: weakref.WeakSet[psycopg.Connection[Any] | psycopg.AsyncConnection[Any]]
_ON_CITUS = weakref.WeakSet()


def mark_on_citus(conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> None:
    """Remember that ``conn`` works on a Citus coordinator (``store.db.database`` asks)."""
    _ON_CITUS.add(conn)


def on_citus(conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> bool:
    """Whether ``conn``, a pooled connection, works on a Citus coordinator: a read of one
    statement then goes in a transaction block (``store.db.tenants.tenant_statement``)."""
    return conn in _ON_CITUS
