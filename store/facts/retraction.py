"""Retraction: a fact that was never true (a bad extraction) is withdrawn from knowledge.

The key is rebuilt from its log (every assertion and expiry, in arrival order) without the
withdrawn fact, and current knowledge moves to the rebuilt state: the fact's versions are
retired (history keeps them), the neighbours it closed get their windows back, and an
incumbent it replaced at the same start returns, exactly as if it had never been asserted.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg

from store.attributes.names import former_names
from store.contract.facts import Fact
from store.contract.results import RetractResult
from store.db.clock import Clock
from store.errors import NotFound
from store.facts import versions
from store.facts.temporal import Expiry, Version, plan_rebuild, rebuild
from store.facts.versions import COLUMNS, IdFactory, as_version, select_facts


def retract(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    subject: str,
    attribute: str,
    fact_id: UUID | None = None,
    valid_from: datetime | None = None,
    clock: Clock,
    new_id: IdFactory,
) -> RetractResult:
    """Withdraw the fact named by ``fact_id``, or the one whose current version starts at
    ``valid_from``; an already withdrawn or replaced fact is ``unchanged``."""
    key = {"tenant_id": tenant_id, "subject": subject, "attribute": attribute}
    now = versions.hold_key(conn, clock, **key)
    current = versions.load_current(conn, now=now, **key)
    fact_id = _target(conn, current, fact_id=fact_id, valid_from=valid_from, **key)
    return retract_current(conn, fact_id=fact_id, now=now, new_id=new_id, current=current, **key)


def retract_current(
    conn: psycopg.Connection[Any],
    *,
    tenant_id: str,
    subject: str,
    attribute: str,
    fact_id: UUID,
    now: datetime,
    new_id: IdFactory,
    current: list[Fact] | None = None,
) -> RetractResult:
    """Retract in a transaction that already holds the key's lock.

    ``current`` is the key's current knowledge when the caller has just loaded it.
    """
    key = {"tenant_id": tenant_id, "subject": subject, "attribute": attribute}
    if current is None:
        current = versions.load_current(conn, now=now, **key)
    if not any(row.fact_id == fact_id for row in current):
        return RetractResult(status="unchanged", fact_id=fact_id)
    conn.execute(
        """
        INSERT INTO retractions (tenant_id, fact_id, subject, attribute, retracted_at)
        VALUES (%(tenant_id)s, %(fact_id)s, %(subject)s, %(attribute)s, %(now)s)
        ON CONFLICT DO NOTHING
        """,
        {**key, "fact_id": fact_id, "now": now},
    )
    target = rebuild(_log(conn, now=now, **key))
    plan = plan_rebuild([as_version(row) for row in current], target)
    versions.apply_plan(conn, plan, current=current, now=now, new_id=new_id, **key)
    before = {row.fact_id for row in current}
    restored = next((v.fact_id for v in target if v.fact_id not in before), None)
    return RetractResult(status="retracted", fact_id=fact_id, restored_fact_id=restored)


def _log(
    conn: psycopg.Connection[Any],
    *,
    tenant_id: str,
    subject: str,
    attribute: str,
    now: datetime,
) -> list[Version | Expiry]:
    """The key's assertions (less retracted facts) and expiries, in arrival order.

    A fact's start never changes across its versions; its latest version carries its current
    provenance (evidence may have been cleared by an erasure). A renamed attribute's log is
    also the one it kept under its former names: a migrated fact arrived when it was first
    asserted, and the expiries logged under an old name still end its values.
    """
    names = [attribute, *former_names(conn, tenant_id, attribute)]
    params = {"tenant_id": tenant_id, "subject": subject, "attribute": attribute, "names": names}
    latest = select_facts(
        conn,
        "SELECT DISTINCT ON (fact_id)"
        + COLUMNS
        + """
        FROM fact_versions
        WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s
          AND attribute = ANY(%(names)s)
          AND fact_id IN (SELECT fact_id FROM fact_versions
                          WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s
                            AND attribute = %(attribute)s)
          AND fact_id NOT IN (SELECT fact_id FROM retractions
                              WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s
                                AND attribute = ANY(%(names)s))
        ORDER BY fact_id, write_order DESC
        """,
        {**params, "now": now},
    )
    arrival = dict(
        conn.execute(
            """
            SELECT fact_id, min(write_order) FROM fact_versions
            WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s
              AND attribute = ANY(%(names)s)
            GROUP BY fact_id
            """,
            params,
        ).fetchall()
    )
    entries: list[tuple[int, Version | Expiry]] = [
        (
            arrival[row.fact_id],
            replace(
                as_version(row),
                version_id=None,
                valid_to=None,
                supersedes=None,
                ended_by=None,
                ended_by_kind=None,
            ),
        )
        for row in latest
    ]
    entries.extend(
        (order, Expiry(at=at, expiry_id=expiry_id))
        for expiry_id, at, order in conn.execute(
            "SELECT expiry_id, at, write_order FROM expiries WHERE tenant_id = %(tenant_id)s"
            " AND subject = %(subject)s AND attribute = ANY(%(names)s)",
            params,
        )
    )
    entries.sort(key=lambda entry: entry[0])
    return [entry for _, entry in entries]


def _target(
    conn: psycopg.Connection[Any],
    current: list[Fact],
    *,
    fact_id: UUID | None,
    valid_from: datetime | None,
    tenant_id: str,
    subject: str,
    attribute: str,
) -> UUID:
    if valid_from is not None:
        starting = next((row for row in current if row.valid_from == valid_from), None)
        if starting is None:
            raise NotFound(
                f"no fact of {subject}.{attribute} starts at that instant", field="valid_from"
            )
        return starting.fact_id
    assert fact_id is not None
    known = conn.execute(
        "SELECT 1 FROM fact_versions WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s"
        " AND attribute = %(attribute)s AND fact_id = %(fact_id)s LIMIT 1",
        {"tenant_id": tenant_id, "subject": subject, "attribute": attribute, "fact_id": fact_id},
    ).fetchone()
    if known is None:
        raise NotFound(f"fact {fact_id} of {subject}.{attribute} does not exist", field="fact_id")
    return fact_id
