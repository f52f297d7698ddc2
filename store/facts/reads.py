"""Exact reads: a key (or a subject's keys) filtered by tenant, valid time and known time.

Knowledge at S is every version with ``recorded_at <= S < retired_at``; a read returns the one
version of each key valid at ``valid_at`` in knowledge at ``known_at``. The exclusion
constraint guarantees there is at most one. A period read returns every version valid at some
instant of a range, in the same knowledge.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import psycopg

from store.contract.facts import ConflictRecord, Fact
from store.errors import NotFound
from store.facts.conflicts import mark_disputes
from store.facts.versions import COLUMNS, select_facts

_KNOWN_AND_VALID = """
  AND recorded_at <= %(known_at)s AND (retired_at IS NULL OR retired_at > %(known_at)s)
  AND valid_from <= %(valid_at)s AND (valid_to IS NULL OR valid_to > %(valid_at)s)
"""
# A valid window overlapping [valid_from, valid_to), either end open when NULL.
_KNOWN_AND_OVERLAPPING = """
  AND recorded_at <= %(known_at)s AND (retired_at IS NULL OR retired_at > %(known_at)s)
  AND (%(valid_to)s::timestamptz IS NULL OR valid_from < %(valid_to)s::timestamptz)
  AND (%(valid_from)s::timestamptz IS NULL OR valid_to IS NULL
       OR valid_to > %(valid_from)s::timestamptz)
"""
# Recorded and retired at one instant: never believed, never shown.
_BELIEVED = """
  AND (retired_at IS NULL OR retired_at > recorded_at)
"""


_DISPUTES = """
    , coalesce(disputes.challengers, '[]') AS challengers,
    disputes.challengers IS NOT NULL AS disputed
FROM fact_versions LEFT JOIN LATERAL (
    SELECT jsonb_agg(
        jsonb_build_object(
            'conflict_id', c.conflict_id, 'value', c.value,
            'source_episode_id', c.source_episode_id, 'source_kind', c.source_kind,
            'evidence', c.evidence, 'evidence_verified', c.evidence_verified
        ) ORDER BY c.created_at, c.conflict_id
    ) AS challengers
    FROM conflicts AS c
    WHERE c.tenant_id = %(tenant_id)s AND c.tenant_id = fact_versions.tenant_id
      AND c.incumbent_fact_id = fact_versions.fact_id
      AND c.disputed AND c.created_at <= %(disputes_at)s
      AND (c.resolved_at IS NULL OR c.resolved_at > %(disputes_at)s)
) AS disputes ON true
"""
"""A version's open disputes at ``%(disputes_at)s``, read in the same statement: ``disputed``
and its challengers, oldest first (the conflicts index on the incumbent serves it, 0010). The
lateral names the tenant itself as well as through the version's row: Citus routes a statement
to the tenant's shard only when every table in it is filtered by the tenant."""

_SUBJECT = " AND subject = %(subject)s"
# The subject an id names now, found in the read's own statement: the survivor it was merged
# into (rows name the final survivor), or the id itself. As a scalar subquery of the column's
# type it is evaluated once (an InitPlan) and searched in the key's index like a constant; a
# bare coalesce() is compared as text, and on a small analyzed tenant the planner left it as a
# filter after an index search by the attribute alone.
_SUBJECT_NOW = """
  AND subject = (SELECT coalesce(
    (SELECT survivor FROM subject_merges
     WHERE subject_merges.tenant_id = %(tenant_id)s AND merged_subject = %(subject)s),
    %(subject)s::sgam_identifier))
"""


def _query(
    tenant_id: str,
    *,
    subject: str,
    attributes: Sequence[str] | None,
    window: str,
    order: str,
    times: dict[str, datetime | None],
    disputes_at: datetime | None,
    subject_filter: str = _SUBJECT,
) -> tuple[str, dict[str, Any]]:
    """The statement selecting the subject's versions (of ``attributes``, or all) in
    ``window``, and its parameters; with ``disputes_at``, each marked with the disputes open
    then. ``subject_filter`` is ``_SUBJECT_NOW`` where ``subject`` may be a merged id."""
    key = ""
    if attributes is not None:
        # One attribute as plain equality: the exact read's plan stays the simplest.
        many = len(attributes) != 1
        key = " AND attribute = ANY(%(attributes)s)" if many else " AND attribute = %(attribute)s"
    source = _DISPUTES if disputes_at is not None else " FROM fact_versions"
    query = (
        "SELECT"
        + COLUMNS
        + source
        + " WHERE fact_versions.tenant_id = %(tenant_id)s"
        + subject_filter
        + key
        + window
        + order
    )
    params = {
        "tenant_id": tenant_id,
        "subject": subject,
        "attribute": attributes[0] if attributes else None,
        "attributes": list(attributes or ()),
        "disputes_at": disputes_at,
        **times,
    }
    return query, params


def _select(conn: psycopg.Connection[Any], tenant_id: str, **chosen: Any) -> list[Fact]:
    """The versions ``_query`` selects, as facts (one statement)."""
    return select_facts(conn, *_query(tenant_id, **chosen))


def read_at(
    conn: psycopg.Connection[Any], tenant_id: str, now: datetime, **key: Any
) -> Fact | None:
    """The fact valid at ``valid_at`` as known at ``known_at`` (None: not known), of the
    subject ``subject`` names now: a merged id reads its survivor's key, in the same statement.
    ``key`` names the subject, attribute and times as ``read_at_query`` takes them.
    """
    found = select_facts(conn, *read_at_query(tenant_id, now, **key))
    return found[0] if found else None


def read_at_query(
    tenant_id: str,
    now: datetime,
    *,
    subject: str,
    attribute: str,
    valid_at: datetime | None,
    known_at: datetime | None,
) -> tuple[str, dict[str, Any]]:
    """``read_at``'s one statement and its parameters at system time ``now`` (``FactCalls.aat``
    sends it on the event loop). ``known_at`` defaults to ``now``, ``valid_at`` to
    ``known_at``."""
    known = known_at or now
    return _query(
        tenant_id,
        subject=subject,
        attributes=[attribute],
        window=_KNOWN_AND_VALID,
        order="",  # the exclusion constraint leaves at most one version
        times={"valid_at": valid_at or known, "known_at": known, "now": now},
        disputes_at=known,
        subject_filter=_SUBJECT_NOW,
    )


def not_known(subject: str, attribute: str) -> NotFound:
    """What a read of a key with no fact at its times raises."""
    return NotFound(f"{subject}.{attribute} is not known at that time", field="attribute")


def read_profile(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    subject: str,
    attributes: Sequence[str] | None = None,
    valid_at: datetime,
    known_at: datetime,
    now: datetime,
    conflicts: Sequence[ConflictRecord] | None = None,
) -> list[Fact]:
    """Every attribute of ``subject`` (or those named) valid at ``valid_at`` as known at
    ``known_at``.

    Disputes are marked from ``conflicts`` when the caller has read the subject's already.
    """
    facts = _select(
        conn,
        tenant_id,
        subject=subject,
        attributes=attributes,
        window=_KNOWN_AND_VALID,
        order=" ORDER BY attribute",
        times={"valid_at": valid_at, "known_at": known_at, "now": now},
        disputes_at=known_at if conflicts is None else None,
    )
    return facts if conflicts is None else mark_disputes(facts, conflicts, known_at=known_at)


def read_period(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    subject: str,
    attributes: Sequence[str] | None = None,
    valid_from: datetime | None,
    valid_to: datetime | None,
    known_at: datetime,
    now: datetime,
    conflicts: Sequence[ConflictRecord] | None = None,
) -> list[Fact]:
    """Every version of the keys of ``subject`` (or those named) whose valid window overlaps
    ``[valid_from, valid_to)`` (None: open) as known at ``known_at``: by attribute, then
    valid_from (disputes marked as in ``read_profile``)."""
    facts = _select(
        conn,
        tenant_id,
        subject=subject,
        attributes=attributes,
        window=_KNOWN_AND_OVERLAPPING,
        order=" ORDER BY attribute, valid_from, version_id",
        times={"valid_from": valid_from, "valid_to": valid_to, "known_at": known_at, "now": now},
        disputes_at=known_at if conflicts is None else None,
    )
    return facts if conflicts is None else mark_disputes(facts, conflicts, known_at=known_at)


def read_history(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    subject: str,
    attributes: Sequence[str] | None = None,
    now: datetime,
    conflicts: Sequence[ConflictRecord] | None = None,
) -> list[Fact]:
    """Every version ever believed of the keys (or of every key of ``subject``): by attribute,
    then valid_from, then recorded_at (disputes marked as in ``read_profile``)."""
    facts = _select(
        conn,
        tenant_id,
        subject=subject,
        attributes=attributes,
        window=_BELIEVED,
        order=" ORDER BY attribute, valid_from, recorded_at, version_id",
        times={"now": now},
        disputes_at=now if conflicts is None else None,
    )
    return facts if conflicts is None else mark_disputes(facts, conflicts, known_at=now)


FIND_SUBJECTS = """
    SELECT DISTINCT subject FROM fact_versions
    WHERE tenant_id = %(tenant_id)s AND subject_folded = ANY(%(names)s)
    ORDER BY subject
"""
"""Which folded names are subjects with facts; an index on the stored folded name serves it, by
plain equality, which row-level security lets an index serve (0009, 0014)."""


def find_subjects(conn: psycopg.Connection[Any], tenant_id: str, *, names: list[str]) -> list[str]:
    """Which of ``names`` (compared case-insensitively) are subjects the tenant holds facts on."""
    rows = conn.execute(
        FIND_SUBJECTS, {"tenant_id": tenant_id, "names": [name.lower() for name in names]}
    ).fetchall()
    return [str(row[0]) for row in rows]


_SOURCED = (
    "SELECT"
    + COLUMNS
    + " FROM fact_versions WHERE tenant_id = %(tenant_id)s AND source_episode_id = %(episode_id)s"
    + _BELIEVED
    + " ORDER BY subject, attribute, valid_from, recorded_at, version_id"
)


def read_sourced(
    conn: psycopg.Connection[Any], tenant_id: str, episode_id: str, *, now: datetime
) -> list[Fact]:
    """Every version ever believed that ``episode_id`` is the source of: by subject, attribute,
    valid_from, recorded_at."""
    params = {"tenant_id": tenant_id, "episode_id": episode_id, "now": now}
    return select_facts(conn, _SOURCED, params)
