"""The text search configuration of the episodes' full-text documents (migration 0032).

Lexical evidence search (``store.episodes.lexical``) parses a query with the configuration the
stored documents were built with, or its words would not meet theirs (``english`` stems
"orders" to "order", ``simple`` keeps it). The configuration is a setting
(``SGAM_TEXT_SEARCH_CONFIG``); ``migrate`` makes the generated column's expression name it,
rebuilding the column's documents (and its index) when it names another one.
"""

from __future__ import annotations

import re
from typing import Any

import psycopg
from psycopg import sql

DEFAULT_TEXT_SEARCH_CONFIG = "simple"
"""Words lowercased, no stemming and no stop words: right for ids, codes and names in any
language."""

_EXPRESSION = """
SELECT pg_get_expr(d.adbin, d.adrelid)
FROM pg_attrdef AS d
JOIN pg_attribute AS a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
WHERE d.adrelid = to_regclass('episodes') AND a.attname = 'text_search'
"""
_NAMED = re.compile(r"to_tsvector\('((?:[^']|'')+)'::regconfig")


def current_config(conn: psycopg.Connection[Any]) -> str | None:
    """The configuration the episodes' documents are built with; None before migration 0032."""
    row = conn.execute(_EXPRESSION).fetchone()
    if row is None:
        return None
    match = _NAMED.search(str(row[0]))
    return match[1].replace("''", "'") if match else None


def apply_config(conn: psycopg.Connection[Any], config: str) -> bool:
    """Make the documents' configuration ``config`` (an existing text search configuration:
    PostgreSQL refuses an unknown one); whether the column was rebuilt.

    Run by ``migrate``, in its transaction and under its lock: the rewrite locks ``episodes``
    while every document is made again.
    """
    current = current_config(conn)
    if current is None:
        return False
    row = conn.execute("SELECT %(config)s::regconfig::text", {"config": config}).fetchone()
    wanted = str(row[0]) if row else config
    if wanted == current:
        return False
    conn.execute(
        sql.SQL(
            "ALTER TABLE episodes ALTER COLUMN text_search SET EXPRESSION AS"
            " (to_tsvector({}::regconfig, coalesce(text, '')))"
        ).format(sql.Literal(wanted))
    )
    return True
