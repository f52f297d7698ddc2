"""Searching the whole database for content: every text-like column of every table.

Used by erasure tests to prove that nothing of an erased subject or episode survives.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql


@dataclass(frozen=True)
class Column:
    """A text-like column of a public table, and whether its table is split by tenant."""

    table: str
    column: str
    by_tenant: bool

    @property
    def name(self) -> str:
        """``table.column``."""
        return f"{self.table}.{self.column}"


_COLUMNS = """
SELECT c.table_name, c.column_name, c.data_type, c.udt_name
FROM information_schema.columns AS c
JOIN information_schema.tables AS t
  ON t.table_schema = c.table_schema AND t.table_name = c.table_name
WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
ORDER BY c.table_name, c.ordinal_position
"""
# information_schema reports a domain column (sgam_identifier) by its base type, text.
_TEXT_TYPES = {"text", "character varying", "character", "json", "jsonb"}
_TEXT_ARRAYS = {"_text", "_varchar", "_bpchar", "_json", "_jsonb"}


def public_columns(conn: psycopg.Connection[Any]) -> tuple[set[str], list[Column]]:
    """Every public table, and every text, varchar, text[] and json(b) column among them."""
    rows = conn.execute(_COLUMNS).fetchall()
    tables = {table for table, _, _, _ in rows}
    split = {table for table, column, _, _ in rows if column == "tenant_id"}
    columns = [
        Column(table, column, table in split)
        for table, column, data_type, udt in rows
        if data_type in _TEXT_TYPES or (data_type == "ARRAY" and udt in _TEXT_ARRAYS)
    ]
    return tables, columns


def find_needles(conninfo: str, tenant: str, needles: Iterable[str]) -> dict[str, set[str]]:
    """Where each needle occurs (case-folded) among the tenant's rows, as ``table.column``.

    Tables with a ``tenant_id`` are searched in the tenant's rows; any other table whole.
    """
    wanted = list(needles)
    found: dict[str, set[str]] = {needle: set() for needle in wanted}
    with psycopg.connect(conninfo) as conn:
        tables, columns = public_columns(conn)
        # The discovery must see the schema's tables and the columns that hold content.
        assert {
            "tenants",
            "attributes",
            "episodes",
            "fact_versions",
            "conflicts",
            "expiries",
            "tombstones",
            "schema_migrations",
        } <= tables
        assert {
            "episodes.text",
            "episode_subjects.subject",
            "episodes.metadata",
            "episodes.session_id",
            "fact_versions.subject",
            "fact_versions.value",
            "fact_versions.evidence",
            "conflicts.value",
            "conflicts.evidence",
            "expiries.subject",
            "attributes.enum_values",
            "tombstones.target_hash",
            "tombstones.episode_hashes",
        } <= {column.name for column in columns}
        for column in columns:
            for needle in needles_in(conn, column.table, column, tenant, wanted):
                found[needle].add(column.name)
    return found


def needles_in(
    conn: psycopg.Connection[Any], relation: str, column: Column, tenant: str, needles: list[str]
) -> list[str]:
    """The needles that occur (case-folded) in ``column`` of ``relation`` (its table, or one of
    its table's shards on a Citus worker), in the tenant's rows when the table has a tenant."""
    scope = sql.SQL("AND t.tenant_id = %(tenant)s" if column.by_tenant else "")
    query = sql.SQL(
        "SELECT needle FROM unnest(%(needles)s::text[]) AS needle WHERE EXISTS ("
        " SELECT 1 FROM {relation} AS t"
        " WHERE position(lower(needle) IN lower(t.{column}::text)) > 0 {scope})"
    ).format(
        relation=sql.Identifier(relation),
        column=sql.Identifier(column.column),
        scope=scope,
    )
    return [row[0] for row in conn.execute(query, {"needles": needles, "tenant": tenant})]


_GENERATED = """
SELECT table_name, array_agg(column_name::text) FROM information_schema.columns
WHERE table_schema = 'public' AND is_generated = 'ALWAYS' GROUP BY table_name
"""


def generated_columns(conn: psycopg.Connection[Any]) -> dict[str, list[str]]:
    """Each public table's generated columns (``episodes.text_search``): what a row's own
    columns make of it, left out where rows are compared."""
    return {str(table): list(names) for table, names in conn.execute(_GENERATED)}


def tenant_rows(conninfo: str, tenant: str) -> dict[str, list[str]]:
    """Every row of the tenant in every table that has a ``tenant_id``, as sorted JSON, without
    the generated columns (``episodes.text_search``: what the row's own columns make it)."""
    with psycopg.connect(conninfo) as conn:
        _, columns = public_columns(conn)
        generated = generated_columns(conn)
        tables = sorted({column.table for column in columns if column.by_tenant})
        return {
            table: [
                row[0]
                for row in conn.execute(
                    sql.SQL(
                        "SELECT (to_jsonb(t) - %(generated)s::text[])::text FROM {table} AS t"
                        " WHERE t.tenant_id = %(tenant)s ORDER BY 1"
                    ).format(table=sql.Identifier(table)),
                    {"tenant": tenant, "generated": generated.get(table, [])},
                )
            ]
            for table in tables
        }
