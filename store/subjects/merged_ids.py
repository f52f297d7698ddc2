"""Merged subject ids: the survivor each now names.

``store.subjects.merges`` folds one subject into another and records the link read here.

Rows of ``subject_merges`` always name the final survivor, so one lookup resolves an id.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import psycopg

_SURVIVOR = """
SELECT survivor FROM subject_merges
WHERE tenant_id = %(tenant_id)s AND merged_subject = %(subject)s
"""

_SURVIVORS = """
SELECT merged_subject, survivor FROM subject_merges
WHERE tenant_id = %(tenant_id)s AND merged_subject = ANY(%(subjects)s)
"""

_MERGED_INTO = """
SELECT merged_subject FROM subject_merges
WHERE tenant_id = %(tenant_id)s AND survivor = %(subject)s ORDER BY merged_subject
"""


def resolve_subject(conn: psycopg.Connection[Any], tenant_id: str, subject: str) -> str:
    """The subject an id names now: the survivor it was merged into, or the id itself."""
    row = conn.execute(_SURVIVOR, {"tenant_id": tenant_id, "subject": subject}).fetchone()
    return subject if row is None else str(row[0])


def resolve_subjects(
    conn: psycopg.Connection[Any], tenant_id: str, subjects: Iterable[str]
) -> dict[str, str]:
    """The merged ids among ``subjects``, each with its survivor (one statement)."""
    wanted = sorted(set(subjects))
    if not wanted:
        return {}
    rows = conn.execute(_SURVIVORS, {"tenant_id": tenant_id, "subjects": wanted}).fetchall()
    return {str(merged): str(survivor) for merged, survivor in rows}


def merged_into(conn: psycopg.Connection[Any], tenant_id: str, survivor: str) -> list[str]:
    """Every id merged into ``survivor`` (chains included: rows name the final survivor)."""
    rows = conn.execute(_MERGED_INTO, {"tenant_id": tenant_id, "subject": survivor}).fetchall()
    return [str(row[0]) for row in rows]
