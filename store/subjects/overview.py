"""The tenant's subjects found by id or name, each with its keys, open conflicts and last change.

A subject matches ``match`` when its id holds the text (case aside) or one of its names
(``store.subjects.names``: declared, learned, or its id's words) holds the text folded as names
are (``fold_name``). One statement lists a page, by id or by last change (newest first).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

import psycopg
from psycopg.rows import class_row

from store.contract.common import fold_name
from store.contract.results import SubjectOverview, SubjectSummary
from store.contract.times import parse_timestamp
from store.db.paging import check_limit, decode_any_cursor, encode_cursor
from store.errors import InvalidInput

SubjectOrder = Literal["id", "changed"]

MATCHED = """
SELECT subject FROM (
    SELECT subject FROM fact_versions WHERE tenant_id = %(tenant_id)s
    UNION
    SELECT subject FROM episode_subjects WHERE tenant_id = %(tenant_id)s
) AS held (subject)
-- A merged id keeps only the retired versions of keys its survivor also held: not listed.
WHERE subject NOT IN (SELECT merged_subject FROM subject_merges WHERE tenant_id = %(tenant_id)s)
  AND (%(match)s::text IS NULL
       OR strpos(lower(subject), %(match)s::text) > 0
       OR EXISTS (SELECT FROM subject_names AS n
                  WHERE n.tenant_id = %(tenant_id)s AND n.subject = held.subject
                    AND strpos(n.folded, %(folded)s::text) > 0))
"""
"""The tenant's listed subjects (facts held or episodes naming), those ``match`` finds."""

# Byte order ("C"), not the database's locale: the same pages on every server, and the
# cursor's comparison agrees with the sort.
_SUMMARIES = (
    """
SELECT * FROM (
    SELECT listed.subject, coalesce(v.keys, 0) AS keys,
           coalesce(c.open_conflicts, 0) AS open_conflicts,
           greatest(v.changed, c.changed, e.changed) AS last_change
    FROM ("""
    + MATCHED
    + """) AS listed
    LEFT JOIN LATERAL (
        SELECT count(DISTINCT attribute) FILTER (WHERE retired_at IS NULL) AS keys,
               max(greatest(recorded_at, retired_at)) AS changed
        FROM fact_versions
        WHERE tenant_id = %(tenant_id)s AND subject = listed.subject
    ) AS v ON true
    LEFT JOIN LATERAL (
        SELECT count(*) FILTER (WHERE status = 'open') AS open_conflicts,
               max(greatest(created_at, resolved_at)) AS changed
        FROM conflicts
        WHERE tenant_id = %(tenant_id)s AND subject = listed.subject
    ) AS c ON true
    LEFT JOIN LATERAL (
        SELECT max(episodes.recorded_at) AS changed
        FROM episode_subjects JOIN episodes
          ON episodes.tenant_id = episode_subjects.tenant_id
         AND episodes.id = episode_subjects.episode_id
        WHERE episode_subjects.tenant_id = %(tenant_id)s
          AND episode_subjects.subject = listed.subject
    ) AS e ON true
) AS summary
"""
)

_BY_ID = """
WHERE (%(after)s::text IS NULL OR subject COLLATE "C" > %(after)s::text COLLATE "C")
ORDER BY subject COLLATE "C"
LIMIT %(limit)s
"""

_BY_CHANGE = """
WHERE (%(after)s::text IS NULL OR last_change < %(after_change)s
       OR (last_change = %(after_change)s AND subject COLLATE "C" > %(after)s::text COLLATE "C"))
ORDER BY last_change DESC, subject COLLATE "C"
LIMIT %(limit)s
"""


def match_params(match: str | None) -> dict[str, str | None]:
    """``MATCHED``'s parameters for the text ``match`` (None or blank: every subject)."""
    text = (match or "").strip()
    if not text:
        return {"match": None, "folded": None}
    return {"match": text.lower(), "folded": fold_name(text) or text.lower()}


def overview(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    match: str | None,
    order: SubjectOrder,
    limit: int,
    cursor: str | None,
) -> SubjectOverview:
    """A page of the subjects ``match`` finds, by id or newest change first, with the cursor
    of the next page (one statement)."""
    if order not in ("id", "changed"):
        raise InvalidInput("order must be id or changed", field="order")
    after, after_change = _after(cursor, order)
    params = {
        "tenant_id": tenant_id,
        **match_params(match),
        "after": after,
        "after_change": after_change,
        "limit": check_limit(limit) + 1,
    }
    query = _SUMMARIES + (_BY_ID if order == "id" else _BY_CHANGE)
    with conn.cursor(row_factory=class_row(SubjectSummary)) as cur:
        rows = cur.execute(query, params).fetchall()
    page = rows[:limit]
    next_cursor = None
    if len(rows) > limit:
        last = page[-1]
        key = [last.subject] if order == "id" else [last.last_change.isoformat(), last.subject]
        next_cursor = encode_cursor(key)
    return SubjectOverview(subjects=page, next_cursor=next_cursor)


def _after(cursor: str | None, order: SubjectOrder) -> tuple[str | None, datetime | None]:
    """The subject (and last change) a cursor of ``order`` resumes after."""
    if cursor is None:
        return None, None
    key = decode_any_cursor(cursor)
    if order == "id" and len(key) == 1 and isinstance(key[0], str):
        return key[0], None
    if order == "changed" and len(key) == 2 and all(isinstance(part, str) for part in key):
        try:
            return key[1], parse_timestamp(key[0])
        except ValueError:
            pass
    raise InvalidInput("not a cursor this server issued", field="cursor")
