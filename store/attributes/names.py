"""Old names of renamed attributes: which new name one stands for, and which names one had.

A renamed attribute's row stays (its retired versions cite it) with ``renamed_to`` set; until
its migration's ``dual_read_until`` the old name reads and writes the new one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

import psycopg

from store.contract.facts import Fact
from store.errors import NotFound

_MAX_HOPS = 20

_TARGETS = """
WITH RECURSIVE hops (wanted, attribute, depth) AS (
    SELECT migrated_from, attribute, 1 FROM attribute_migrations
    WHERE tenant_id = %(tenant_id)s AND migrated_from = ANY(%(names)s)
        AND dual_read_until > %(now)s
    UNION ALL
    SELECT hops.wanted, m.attribute, hops.depth + 1
    FROM hops JOIN attribute_migrations AS m
        ON m.tenant_id = %(tenant_id)s AND m.migrated_from = hops.attribute
    WHERE m.dual_read_until > %(now)s AND hops.depth < %(max_hops)s
)
SELECT DISTINCT ON (wanted) wanted, attribute FROM hops ORDER BY wanted, depth DESC
"""

_FORMER = """
WITH RECURSIVE hops (name, depth) AS (
    SELECT migrated_from, 1 FROM attribute_migrations
    WHERE tenant_id = %(tenant_id)s AND attribute = %(attribute)s AND migrated_from IS NOT NULL
    UNION ALL
    SELECT m.migrated_from, hops.depth + 1
    FROM hops JOIN attribute_migrations AS m
        ON m.tenant_id = %(tenant_id)s AND m.attribute = hops.name
    WHERE m.migrated_from IS NOT NULL AND hops.depth < %(max_hops)s
)
SELECT DISTINCT name FROM hops ORDER BY name
"""


def ask_renamed_targets(
    conn: psycopg.Connection[Any], tenant_id: str, names: Iterable[str], *, now: datetime
) -> Callable[[], dict[str, str]]:
    """``renamed_targets``, asked now and read when called (on a pipelined connection the
    question travels with the statements sent beside it)."""
    cur = conn.cursor()
    cur.execute(
        _TARGETS.encode(),
        {"tenant_id": tenant_id, "names": sorted(set(names)), "now": now, "max_hops": _MAX_HOPS},
    )

    def targets() -> dict[str, str]:
        with cur:
            return {str(old): str(new) for old, new in cur.fetchall()}

    return targets


def renamed_targets(
    conn: psycopg.Connection[Any], tenant_id: str, names: Iterable[str], *, now: datetime
) -> dict[str, str]:
    """Each of ``names`` that is an old name still in its dual-read window at ``now``, mapped
    to the attribute's name now (following renames of renames)."""
    return ask_renamed_targets(conn, tenant_id, names, now=now)()


def former_names(conn: psycopg.Connection[Any], tenant_id: str, attribute: str) -> list[str]:
    """Every name ``attribute`` had before its renames (whose versions its history keeps)."""
    rows = conn.execute(
        _FORMER, {"tenant_id": tenant_id, "attribute": attribute, "max_hops": _MAX_HOPS}
    ).fetchall()
    return [str(row[0]) for row in rows]


def refuse_retired_name(conn: psycopg.Connection[Any], tenant_id: str, attribute: str) -> None:
    """NotFound for the old name of a rename whose dual-read window has passed."""
    row = conn.execute(
        "SELECT renamed_to FROM attributes WHERE tenant_id = %(tenant_id)s"
        " AND attribute = %(attribute)s AND renamed_to IS NOT NULL",
        {"tenant_id": tenant_id, "attribute": attribute},
    ).fetchone()
    if row is not None:
        raise NotFound(f"attribute {attribute!r} is not declared", field="attribute")


def mark_renamed(
    conn: psycopg.Connection[Any], tenant_id: str, facts: Sequence[Fact], *, now: datetime
) -> None:
    """Set ``migrated_from`` on facts of attributes renamed within their dual-read window at
    ``now`` (a profile names no attribute: it says which of its keys had another name)."""
    names = sorted({fact.attribute for fact in facts})
    if not names:
        return
    rows = conn.execute(
        "SELECT attribute, migrated_from FROM attribute_migrations"
        " WHERE tenant_id = %(tenant_id)s AND attribute = ANY(%(names)s)"
        " AND migrated_from IS NOT NULL AND dual_read_until > %(now)s ORDER BY migrated_at",
        {"tenant_id": tenant_id, "names": names, "now": now},
    ).fetchall()
    old_names = {str(new): str(old) for new, old in rows}  # the latest rename wins
    for fact in facts:
        fact.migrated_from = old_names.get(fact.attribute, fact.migrated_from)
