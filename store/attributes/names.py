"""Attribute names: which new name a renamed attribute's old one stands for, which names one
had, and what an undeclared name is told (the declared names closest to it).

A renamed attribute's row stays (its retired versions cite it) with ``renamed_to`` set; until
its migration's ``dual_read_until`` the old name reads and writes the new one.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

import psycopg

from store.contract.facts import Fact
from store.errors import NotFound

_MAX_HOPS = 20

_HOPS = """
WITH RECURSIVE hops (wanted, attribute, depth) AS (
    SELECT migrated_from, attribute, 1 FROM attribute_migrations
    WHERE tenant_id = %(tenant_id)s AND migrated_from = ANY(%(names)s)
        AND dual_read_until > %(now)s
    UNION ALL
    SELECT hops.wanted, m.attribute, hops.depth + 1
    FROM hops JOIN attribute_migrations AS m ON m.migrated_from = hops.attribute
    WHERE m.tenant_id = %(tenant_id)s AND m.dual_read_until > %(now)s
        AND hops.depth < %(max_hops)s
)
"""
"""Each old name asked, with every name its renames led to in their dual-read windows."""

_TARGETS = (
    _HOPS + "SELECT DISTINCT ON (wanted) wanted, attribute FROM hops ORDER BY wanted, depth DESC"
)

_TARGETS_AND_SURVIVOR = (
    _HOPS
    + """, renamed AS (
    SELECT DISTINCT ON (wanted) wanted, attribute FROM hops ORDER BY wanted, depth DESC
)
SELECT wanted, attribute, false FROM renamed
UNION ALL
SELECT merged_subject, survivor, true FROM subject_merges
WHERE tenant_id = %(tenant_id)s AND merged_subject = %(subject)s
"""
)
"""``_TARGETS`` and ``store.subjects.merged_ids``'s survivor lookup in one statement: rows of
(old name, new name, false) and at most one (merged subject, survivor, true)."""

_FORMER = """
WITH RECURSIVE hops (name, depth) AS (
    SELECT migrated_from, 1 FROM attribute_migrations
    WHERE tenant_id = %(tenant_id)s AND attribute = %(attribute)s AND migrated_from IS NOT NULL
    UNION ALL
    SELECT m.migrated_from, hops.depth + 1
    FROM hops JOIN attribute_migrations AS m ON m.attribute = hops.name
    WHERE m.tenant_id = %(tenant_id)s AND m.migrated_from IS NOT NULL
        AND hops.depth < %(max_hops)s
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


def renames_and_survivor(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    names: Iterable[str],
    *,
    subject: str,
    now: datetime,
) -> tuple[dict[str, str], str]:
    """``renamed_targets`` of ``names`` and the subject ``subject`` names now (its survivor,
    if it was merged: ``store.subjects.merged_ids.resolve_subject``), in one round trip."""
    params = {"tenant_id": tenant_id, "names": sorted(set(names)), "now": now}
    rows = conn.execute(
        _TARGETS_AND_SURVIVOR, params | {"subject": subject, "max_hops": _MAX_HOPS}
    ).fetchall()
    survivor = next((str(new) for _, new, merged in rows if merged), subject)
    return {str(old): str(new) for old, new, merged in rows if not merged}, survivor


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


CLOSEST = 3
"""How many declared names an undeclared one's reason suggests, at most."""
_CLOSE = 0.6  # difflib's ratio from which a name is close
_NEAR_BEST = 0.15  # how far below the closest name another may be and still be named


def undeclared(attribute: str, declared: Iterable[str]) -> str:
    """The reason an undeclared ``attribute`` is refused, naming the declared names closest to
    it, best first: a typo or another case of one, or names of which it is a whole word."""
    asked = attribute.casefold()
    scored = []
    for name in declared:
        ratio = difflib.SequenceMatcher(None, asked, name.casefold()).ratio()
        is_word = asked in name.casefold().split("_")
        if ratio >= _CLOSE or is_word:
            scored.append((ratio, is_word, name))
    best = max((ratio for ratio, _, _ in scored), default=0.0)
    close = sorted(
        (item for item in scored if item[1] or item[0] >= best - _NEAR_BEST),
        key=lambda item: (-item[0], item[2]),
    )
    reason = f"attribute {attribute!r} is not declared"
    if close:
        names = " or ".join(repr(name) for _, _, name in close[:CLOSEST])
        reason += f"; did you mean {names}?"
    return reason


def declared_names(conn: psycopg.Connection[Any], tenant_id: str) -> list[str]:
    """Every name the tenant declared and has not renamed, by name."""
    rows = conn.execute(
        "SELECT attribute FROM attributes WHERE tenant_id = %(tenant_id)s"
        " AND renamed_to IS NULL ORDER BY attribute",
        {"tenant_id": tenant_id},
    ).fetchall()
    return [str(row[0]) for row in rows]


def refuse_undeclared(conn: psycopg.Connection[Any], tenant_id: str, attribute: str) -> None:
    """NotFound (``attribute``) naming the closest declared names, unless ``attribute`` is
    declared. A miss of a declared name stays "not known"; the caller asks only after one."""
    names = declared_names(conn, tenant_id)
    if attribute not in names:
        raise NotFound(undeclared(attribute, names), field="attribute")
