"""Bulk import, the fact versions: one ``INSERT … SELECT`` a chunk of planned rows, sent in
pipeline mode while the next chunk is planned.

Most of an import's time is the server's inserting (the exclusion constraint's GiST index above
all), so the rows go in chunks of ``CHUNK_ROWS``, each one statement whose rows travel as one
array a column. The statements go in pipeline mode: sending one does not wait for the one
before to finish, so the server inserts a chunk while the import plans the next, on one thread,
one connection and one transaction. Each chunk's rows are inserted in plan order after the
chunk before, so ``write_order`` follows the plan; any chunk's error rolls everything back.

Each distinct id is cast to its domain once. Tenant, subject, attribute and source episode are
``sgam_identifier`` values, whose CHECK is a regular expression with a bounded repetition
(``{1,200}``) on which PostgreSQL spends tens of microseconds a value: the 80,000 ids of 20,000
rows checked one by one took about 2 s, as long as the exclusion constraint's work. Here each
distinct id of a chunk is cast in a materialized CTE and the rows take their ids from there,
already of the domain type, which PostgreSQL does not check again. Every other constraint (the
exclusion constraint, foreign keys, CHECKs) is checked row by row as ever.

The receipts (one for each candidate a version shows, as the write path leaves them) go in
one statement once every chunk is sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from store.episodes.bulk import KeyWrites
from store.governance import receipts, touched
from store.governance.receipts import NO_TRACE, Touched

CHUNK_ROWS = 2_000
"""Rows a chunk: large enough that a statement's own cost is small beside its rows', small
enough that the first chunk's planning and the last one's inserting, which overlap nothing,
are a small part of an import."""

_COLUMNS = (
    ("n", "int4"),
    ("retired", "bool"),
    ("version_id", "uuid"),
    ("fact_id", "uuid"),
    ("subject", "text"),
    ("attribute", "text"),
    ("value", "jsonb"),
    ("valid_from", "timestamptz"),
    ("valid_to", "timestamptz"),
    ("supersedes", "uuid"),
    ("ended_by", "uuid"),
    ("ended_by_kind", "text"),
    ("source_episode_id", "text"),
    ("source_kind", "text"),
    ("evidence", "text"),
    ("evidence_verified", "bool"),
    ("schema_version", "int4"),
)
"""A chunk's columns, each sent as one array of its type."""

_UNNEST = ", ".join(f"%({name})b::{kind}[]" for name, kind in _COLUMNS)
_NAMES = ", ".join(name for name, _ in _COLUMNS)

_INSERT = f"""
WITH staged AS MATERIALIZED (
    SELECT * FROM unnest({_UNNEST}) AS given ({_NAMES})
), subjects AS MATERIALIZED (
    SELECT given, given::sgam_identifier AS checked
    FROM (SELECT DISTINCT subject AS given FROM staged) AS distinct_ids
), attributes AS MATERIALIZED (
    SELECT given, given::sgam_identifier AS checked
    FROM (SELECT DISTINCT attribute AS given FROM staged) AS distinct_ids
), sources AS MATERIALIZED (
    SELECT given, given::sgam_identifier AS checked
    FROM (SELECT DISTINCT source_episode_id AS given FROM staged) AS distinct_ids
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
FROM staged
JOIN subjects ON subjects.given = staged.subject
JOIN attributes ON attributes.given = staged.attribute
JOIN sources ON sources.given = staged.source_episode_id
ORDER BY staged.n
RETURNING true  -- on Citus: inserted on each shard, not COPied (store.db.distribution)
"""
"""A chunk's rows, in plan order: ``write_order`` (its default) is drawn after the sort."""

Columns = dict[str, list[Any]]


def copy_versions(
    conn: psycopg.Connection[Any], tenant_id: str, *, planned: Iterable[KeyWrites], now: datetime
) -> int:
    """Write the planned rows in plan order, retired at once where planned, and their
    receipts; how many rows.

    ``planned`` may plan each key as it is asked for the next one: it runs while the chunks
    before are inserted.
    """
    count = 0
    shown: list[Touched] = []
    params = {"tenant_id": tenant_id, "now": now}
    with conn.pipeline():
        for columns in _chunks(planned, shown, now=now):
            send_chunk(conn, columns, params)
            count += len(columns["n"])
    if shown:
        receipts.leave_receipts(conn, tenant_id, shown, action="write", trace=NO_TRACE, now=now)
    return count


def _chunks(
    planned: Iterable[KeyWrites], shown: list[Touched], *, now: datetime
) -> Iterator[Columns]:
    """The planned rows by column, ``CHUNK_ROWS`` or a little more a chunk (a key's rows stay
    together); the receipts of the candidates they answer are added to ``shown``."""
    rows: list[tuple[Any, ...]] = []
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
            yield _by_column(rows)
            rows = []
    if rows:
        yield _by_column(rows)


def _by_column(rows: list[tuple[Any, ...]]) -> Columns:
    """The rows' values by column (each row has every column)."""
    by_column = zip(*rows, strict=True)
    return {name: list(values) for (name, _), values in zip(_COLUMNS, by_column, strict=True)}


def send_chunk(conn: psycopg.Connection[Any], columns: Columns, params: dict[str, Any]) -> None:
    """Send one chunk's insert (in pipeline mode: without waiting for it). Its arrays go in
    binary: in text, escaping their values took the command more time than planning them, and
    one JSON document of the rows cost the server more than it saved the command."""
    conn.execute(_INSERT, params | columns)
