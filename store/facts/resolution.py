"""Settling an equal-start conflict: keep the incumbent, or write the challenger in its place.

Choosing the challenger replaces the incumbent (retired, not deleted), so history keeps both;
other challengers of the same start then dispute the chosen value.
"""

from __future__ import annotations

from typing import Any, Literal
from uuid import UUID

import psycopg

from store.attributes.registry import get_attribute
from store.contract.facts import Fact
from store.contract.results import ResolveResult
from store.db.clock import Clock
from store.errors import Conflict
from store.facts import versions
from store.facts.conflicts import follow_replacement, get_conflict, with_disputes
from store.facts.temporal import Version, plan_assert, plan_replace
from store.facts.versions import IdFactory, as_version


def resolve(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    conflict_id: UUID,
    choose: Literal["incumbent", "challenger"],
    clock: Clock,
    new_id: IdFactory,
) -> ResolveResult:
    """Settle an open conflict: keep the incumbent, or write the challenger in its place."""
    conflict = get_conflict(conn, tenant_id, conflict_id)
    key = {"tenant_id": tenant_id, "subject": conflict.subject, "attribute": conflict.attribute}
    now = versions.hold_key(conn, clock, **key)
    conflict = get_conflict(conn, tenant_id, conflict_id)  # as of holding the lock
    if conflict.status != "open":
        raise Conflict(f"conflict {conflict_id} is already resolved", field="conflict_id")
    current = versions.load_current(conn, now=now, **key)
    at_start = next((row for row in current if row.valid_from == conflict.valid_from), None)
    fact: Fact | None = at_start
    resolved_fact_id = None
    if choose == "challenger":
        if at_start is not None and at_start.fact_id != conflict.incumbent_fact_id:
            raise Conflict(
                "another fact holds this start since the conflict was logged; assert the"
                " challenger again instead",
                field="conflict_id",
            )
        attribute = get_attribute(conn, tenant_id, conflict.attribute)
        challenger = conflict.challenger
        new = Version(
            fact_id=new_id(),
            value=challenger.value,
            valid_from=conflict.valid_from,
            valid_to=None,
            source_episode_id=challenger.source_episode_id,
            source_kind=challenger.source_kind,
            evidence=challenger.evidence,
            evidence_verified=challenger.evidence_verified,
            schema_version=attribute.schema_version,
        )
        current_versions = [as_version(row) for row in current]
        plan = (
            plan_replace(as_version(at_start), new)
            if at_start is not None
            else plan_assert(current_versions, new)
        )
        fact = versions.apply_plan(conn, plan, current=current, now=now, new_id=new_id, **key)
        resolved_fact_id = new.fact_id
    conn.execute(
        """
        UPDATE conflicts SET status = 'resolved', resolved_at = %(now)s,
            resolution = %(choose)s, resolved_fact_id = %(resolved_fact_id)s
        WHERE tenant_id = %(tenant_id)s AND conflict_id = %(conflict_id)s
        """,
        {
            "tenant_id": tenant_id,
            "conflict_id": conflict_id,
            "now": now,
            "choose": choose,
            "resolved_fact_id": resolved_fact_id,
        },
    )
    if resolved_fact_id is not None and at_start is not None:
        # Other challengers of the same start now dispute the chosen value.
        follow_replacement(
            conn,
            valid_from=conflict.valid_from,
            replaced=at_start.fact_id,
            by=resolved_fact_id,
            **key,
        )
    settled = get_conflict(conn, tenant_id, conflict_id)
    if fact is not None:
        [fact] = with_disputes(conn, tenant_id, [fact], known_at=now)
    return ResolveResult(conflict=settled, fact=fact)
