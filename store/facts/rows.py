"""The shape of a ``fact_versions`` row: its columns read as a ``Fact``, a ``Version``, a new
row's JSON, and the key filter every key-wise statement shares."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import fields
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
from psycopg.rows import class_row

from store.contract.common import FactStatus
from store.contract.facts import Fact
from store.facts.temporal import Version

IdFactory = Callable[[], UUID]

Key = tuple[str, str]
"""A key of one tenant: (subject, attribute)."""

STORED = """
    version_id, fact_id, subject, attribute, value, valid_from, valid_to, recorded_at,
    retired_at, supersedes, ended_by, ended_by_kind, source_episode_id, source_kind, evidence,
    evidence_verified, schema_version,"""

STATUS = """
    CASE
        WHEN retired_at IS NOT NULL AND retired_at <= %(now)s THEN 'retired'
        WHEN valid_from > %(now)s THEN 'future'
        WHEN valid_to IS NOT NULL AND valid_to <= %(now)s THEN 'past'
        ELSE 'current'
    END AS status,"""
"""Where a version stands at ``%(now)s`` (``status_at`` in Python)."""

UNCONVERTIBLE = """
    EXISTS (
        SELECT FROM attribute_migrations AS m
        WHERE m.tenant_id = %(tenant_id)s AND m.tenant_id = fact_versions.tenant_id
          AND (m.attribute = fact_versions.attribute OR m.migrated_from = fact_versions.attribute)
          AND fact_versions.fact_id = ANY(m.kept_fact_ids)
          AND fact_versions.schema_version < m.schema_version
    ) AS unconvertible
"""
"""Whether a migration of the version's attribute kept it under the old declaration (the
lookup names the tenant itself, as every subquery must for Citus to route the statement whole
to the tenant's shard)."""

COLUMNS = STORED + STATUS + UNCONVERTIBLE
"""A version's columns read as a ``Fact``."""

KEYS = """
    tenant_id = %(tenant_id)s
    AND (subject, attribute) IN (SELECT * FROM unnest(%(subjects)s::text[], %(attributes)s::text[]))
"""


def select_facts(conn: psycopg.Connection[Any], query: str, params: dict[str, Any]) -> list[Fact]:
    """Rows of ``query`` (SQL of this package selecting ``COLUMNS``) as facts."""
    with conn.cursor(row_factory=class_row(Fact)) as cur:
        cur.execute(query.encode(), params)
        return cur.fetchall()


_VERSION_FIELDS = tuple(field.name for field in fields(Version))


def as_version(fact: Fact) -> Version:
    """A stored fact as the temporal rules see it: the fields a ``Version`` has, as stored."""
    return Version(**{name: getattr(fact, name) for name in _VERSION_FIELDS})


def key_params(tenant_id: str, keys: Iterable[Key]) -> dict[str, Any]:
    """The parameters of ``KEYS`` for these keys, in key order, each once."""
    wanted = sorted(set(keys))
    return {
        "tenant_id": tenant_id,
        "subjects": [subject for subject, _ in wanted],
        "attributes": [attribute for _, attribute in wanted],
    }


def status_at(fact: Fact, now: datetime) -> FactStatus:
    """Where a version stands at ``now``: ``COLUMNS``'s status, in Python."""
    if fact.retired_at is not None and fact.retired_at <= now:
        return "retired"
    if fact.valid_from > now:
        return "future"
    if fact.valid_to is not None and fact.valid_to <= now:
        return "past"
    return "current"


def new_row(version: Version, *, subject: str, attribute: str, version_id: UUID) -> dict[str, Any]:
    """A new version of the key as JSON: what ``_INSERT`` reads (tenant and system time aside).

    One JSON parameter for all rows costs a fraction of binding each column as an array.
    """
    return {
        "version_id": str(version_id),
        "fact_id": str(version.fact_id),
        "subject": subject,
        "attribute": attribute,
        "value": version.value,
        "valid_from": version.valid_from.isoformat(),
        "valid_to": _text(version.valid_to),
        "supersedes": _text(version.supersedes),
        "ended_by": _text(version.ended_by),
        "ended_by_kind": version.ended_by_kind,
        "source_episode_id": version.source_episode_id,
        "source_kind": version.source_kind,
        "evidence": version.evidence,
        "evidence_verified": version.evidence_verified,
        "schema_version": version.schema_version,
    }


def _text(value: UUID | datetime | None) -> str | None:
    if value is None:
        return None
    return value.isoformat() if isinstance(value, datetime) else str(value)


# One statement for every new version of a call, in the rows' order (``write_order``). The
# versions are read back through a CTE named as the table, not by the INSERT's RETURNING: on a
# Citus cluster a RETURNING may name neither another table nor a parameter.
INSERT_VERSIONS = (
    """
WITH fact_versions AS (
    INSERT INTO fact_versions (
        tenant_id, recorded_at, version_id, fact_id, subject, attribute, value, valid_from,
        valid_to, supersedes, ended_by, ended_by_kind, source_episode_id, source_kind,
        evidence, evidence_verified, schema_version
    )
    SELECT %(tenant_id)s, %(now)s, version_id, fact_id, subject, attribute,
        -- jsonb_to_recordset reads a JSON null as SQL NULL: a value is never absent.
        coalesce(value, 'null'::jsonb), valid_from, valid_to, supersedes, ended_by,
        ended_by_kind, source_episode_id, source_kind, evidence, evidence_verified,
        schema_version
    FROM jsonb_to_recordset(%(rows)s) AS row(
        version_id uuid, fact_id uuid, subject text, attribute text, value jsonb,
        valid_from timestamptz, valid_to timestamptz, supersedes uuid, ended_by uuid,
        ended_by_kind text, source_episode_id text, source_kind text, evidence text,
        evidence_verified boolean, schema_version integer
    )
    RETURNING *
), kept AS (
    -- Which facts a migration kept under an older declaration, by attribute name (either of
    -- the migration's two) and fact: ``UNCONVERTIBLE`` uncorrelated, as Citus needs it beside
    -- a CTE.
    SELECT kept_name, kept_fact_id, max(m.schema_version) AS newest
    FROM attribute_migrations AS m,
        unnest(ARRAY[m.attribute::text, m.migrated_from::text]) AS kept_name,
        unnest(m.kept_fact_ids) AS kept_fact_id
    WHERE m.tenant_id = %(tenant_id)s AND kept_name IS NOT NULL
    GROUP BY kept_name, kept_fact_id
)
SELECT"""
    + STORED
    + STATUS
    + """
    coalesce(fact_versions.schema_version < kept.newest, false) AS unconvertible
FROM fact_versions
LEFT JOIN kept
    ON kept.kept_name = fact_versions.attribute AND kept.kept_fact_id = fact_versions.fact_id
"""
)
