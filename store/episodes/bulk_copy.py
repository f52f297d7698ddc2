"""Bulk import, the fact versions: planned rows staged by binary COPY, inserted by one statement
a chunk, while the next chunk is planned.

The rows go first into a temporary table by COPY in PostgreSQL's binary format (each column's
type set once: UUIDs as their 16 bytes, instants as microseconds, values as jsonb), then into
``fact_versions`` by one ``INSERT … SELECT`` in plan order, so ``write_order`` follows the plan.
Most of an import's time is the server's inserting (the exclusion constraint's GiST index above
all), so the rows go in chunks of ``CHUNK_ROWS``, each written by a thread of its own while the
caller plans the next: the planning's Python and the server's inserting overlap instead of
taking turns. One chunk is written at a time, in order, on the import's own connection and
transaction, so ``write_order`` and all-or-nothing are as before; a chunk's failure stops the
import at the next chunk and rolls back everything.

Staging is for the ids. Tenant, subject, attribute and source episode are ``sgam_identifier``
values, whose CHECK is a regular expression with a bounded repetition (``{1,200}``) on which
PostgreSQL spends tens of microseconds a value: the 80,000 ids of 20,000 rows copied straight
into the table took about 2 s, as long as the exclusion constraint's work. Here each distinct
id is cast to the domain once, in a materialized CTE, and the rows take their ids from there,
already of the domain type, which PostgreSQL does not check again. Every other constraint (the
exclusion constraint, foreign keys, CHECKs) is checked row by row as ever.

Each chunk leaves its receipts (one for each candidate a version shows, as the write path
leaves them) after its rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from store.episodes.bulk import KeyWrites
from store.governance import receipts, touched
from store.governance.receipts import NO_TRACE, Touched

CHUNK_ROWS = 2_000
"""Rows a chunk: large enough that a chunk's statements cost little beside its rows, small
enough that the first chunk's planning and the last one's inserting, which overlap nothing,
are a small part of an import."""

_STAGE = """
CREATE TEMPORARY TABLE import_versions (
    n integer NOT NULL, retired boolean NOT NULL, version_id uuid NOT NULL,
    fact_id uuid NOT NULL, subject text NOT NULL, attribute text NOT NULL, value jsonb NOT NULL,
    valid_from timestamptz NOT NULL, valid_to timestamptz, supersedes uuid, ended_by uuid,
    ended_by_kind text, source_episode_id text NOT NULL, source_kind text NOT NULL,
    evidence text, evidence_verified boolean NOT NULL, schema_version integer NOT NULL
) ON COMMIT DROP
"""

_COPY = "COPY import_versions FROM STDIN (FORMAT BINARY)"

_TYPES = (
    "int4",
    "bool",
    "uuid",
    "uuid",
    "text",
    "text",
    "jsonb",
    "timestamptz",
    "timestamptz",
    "uuid",
    "uuid",
    "text",
    "text",
    "text",
    "text",
    "bool",
    "int4",
)
"""The staged columns' types, in order, for the binary COPY."""

_INSERT = """
WITH subjects AS MATERIALIZED (
    SELECT given, given::sgam_identifier AS checked
    FROM (SELECT DISTINCT subject AS given FROM import_versions) AS distinct_ids
), attributes AS MATERIALIZED (
    SELECT given, given::sgam_identifier AS checked
    FROM (SELECT DISTINCT attribute AS given FROM import_versions) AS distinct_ids
), sources AS MATERIALIZED (
    SELECT given, given::sgam_identifier AS checked
    FROM (SELECT DISTINCT source_episode_id AS given FROM import_versions) AS distinct_ids
)
INSERT INTO fact_versions (
    tenant_id, recorded_at, retired_at, version_id, fact_id, subject, attribute, value,
    valid_from, valid_to, supersedes, ended_by, ended_by_kind, source_episode_id, source_kind,
    evidence, evidence_verified, schema_version
)
SELECT
    (SELECT %(tenant_id)s::sgam_identifier), %(now)s,
    CASE WHEN staged.retired THEN %(now)s::timestamptz END, staged.version_id,
    staged.fact_id, subjects.checked, attributes.checked, staged.value, staged.valid_from,
    staged.valid_to, staged.supersedes, staged.ended_by, staged.ended_by_kind, sources.checked,
    staged.source_kind, staged.evidence, staged.evidence_verified, staged.schema_version
FROM import_versions AS staged
JOIN subjects ON subjects.given = staged.subject
JOIN attributes ON attributes.given = staged.attribute
JOIN sources ON sources.given = staged.source_episode_id
ORDER BY staged.n
"""
"""Every staged row, in plan order: ``write_order`` (its default) is drawn after the sort."""


Row = tuple[Any, ...]


def copy_versions(
    conn: psycopg.Connection[Any], tenant_id: str, *, planned: Iterable[KeyWrites], now: datetime
) -> int:
    """Write the planned rows in plan order, retired at once where planned, and their
    receipts; how many rows.

    ``planned`` may plan each key as it is asked for the next one: it runs on the caller's
    thread while the chunk before is written on another.
    """
    conn.execute(_STAGE)
    count = 0
    params = {"tenant_id": tenant_id, "now": now}
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="sgam-import") as writer:
        pending: Future[None] | None = None
        for rows, shown in _chunks(planned, now=now):
            if pending is not None:
                pending.result()  # one chunk at a time; its error stops the import here
            pending = writer.submit(_write_chunk, conn, rows, shown, params)
            count += len(rows)
        if pending is not None:
            pending.result()
    conn.execute("DROP TABLE import_versions")
    return count


def _chunks(
    planned: Iterable[KeyWrites], *, now: datetime
) -> Iterator[tuple[list[Row], list[Touched]]]:
    """The planned rows as staged rows, ``CHUNK_ROWS`` or a little more a chunk (a key's rows
    stay together), with the receipts of the candidates they answer."""
    rows: list[Row] = []
    shown: list[Touched] = []
    count = 0
    for writes in planned:
        subject, attribute = writes.key
        retired_here = writes.retired_here
        for version_id, version in writes.rows:
            rows.append(
                (
                    count,
                    version_id in retired_here,
                    version_id,
                    version.fact_id,
                    subject,
                    attribute,
                    Jsonb(version.value),  # JSON null is a value, not SQL NULL
                    version.valid_from,
                    version.valid_to,
                    version.supersedes,
                    version.ended_by,
                    version.ended_by_kind,
                    version.source_episode_id,
                    version.source_kind,
                    version.evidence,
                    version.evidence_verified,
                    version.schema_version,
                )
            )
            count += 1
        shown.extend(
            touched.fact_written(
                subject, attribute, version_id=version_id, now=now, source_episode_id=source
            )
            for source, version_id in writes.shown
        )
        if len(rows) >= CHUNK_ROWS:
            yield rows, shown
            rows, shown = [], []
    if rows or shown:
        yield rows, shown


def _write_chunk(
    conn: psycopg.Connection[Any], rows: list[Row], shown: list[Touched], params: dict[str, Any]
) -> None:
    """Stage one chunk's rows, insert them in order, and leave their receipts."""
    if rows:
        with conn.cursor() as cur, cur.copy(_COPY) as copy:
            copy.set_types(_TYPES)
            for row in rows:
                copy.write_row(row)
        conn.execute(_INSERT, params)
        conn.execute("TRUNCATE import_versions")
    if shown:
        receipts.leave_receipts(
            conn, params["tenant_id"], shown, action="write", trace=NO_TRACE, now=params["now"]
        )
