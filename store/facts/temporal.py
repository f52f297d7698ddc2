"""The temporal rules of one key, as pure functions over its current-knowledge versions.

A plan says which versions to retire and which to insert; ``store.facts.writes`` runs it in one
transaction. Versions are never edited: changing a window retires the old row and inserts a
new version of the same fact, so every earlier belief stays readable at its ``known_at``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal
from uuid import UUID

from store.contract.facts import EndedByKind
from store.contract.values import JsonValue, same_value


@dataclass(frozen=True, slots=True)
class Version:
    """One row of a key's history; ``version_id`` is None until the store assigns one."""

    fact_id: UUID
    value: JsonValue
    valid_from: datetime
    valid_to: datetime | None
    source_episode_id: str
    source_kind: str
    evidence: str | None
    evidence_verified: bool
    schema_version: int
    supersedes: UUID | None = None
    ended_by: UUID | None = None
    ended_by_kind: EndedByKind | None = None
    version_id: UUID | None = None

    def contains(self, instant: datetime) -> bool:
        """Whether ``instant`` lies strictly inside the valid window (after its start)."""
        return self.valid_from < instant and (self.valid_to is None or instant < self.valid_to)


@dataclass(frozen=True, slots=True)
class Plan:
    """What one write does to a key: the status, the rows to retire and the rows to insert.

    ``shown`` is the version the caller sees: the new fact when written, the
    existing one when unchanged, the incumbent on a conflict, the closed one on an expiry.
    """

    status: Literal["written", "unchanged", "conflict", "expired", "invalid", "retracted"]
    retire: tuple[Version, ...] = ()
    insert: tuple[Version, ...] = ()
    shown: Version | None = None
    reason: str | None = None


def plan_assert(current: Sequence[Version], new: Version) -> Plan:
    """Assert ``new`` (a fact with an open window from ``new.valid_from``) against a key.

    Rule 1: a version starting exactly there is an equal start (same value: unchanged; else a
    conflict for the attribute's policy). Rule 2: a version containing the start is closed
    there and the new fact inherits the rest of its window. Rule 3: otherwise the new fact runs
    to the next version's start (or stays open) and nothing else changes, so a delayed
    extraction never closes a later value.
    """
    start = new.valid_from
    for version in current:
        if version.valid_from == start:
            if same_value(version.value, new.value):
                return Plan("unchanged", shown=version, reason="same value")
            return Plan(
                "conflict",
                shown=version,
                reason="a different value already starts at this instant",
            )
    for version in current:
        if version.contains(start):
            if same_value(version.value, new.value):
                return Plan("unchanged", shown=version, reason="same value")
            closed = replace(
                version, version_id=None, valid_to=start, ended_by=new.fact_id, ended_by_kind="fact"
            )
            successor = replace(
                new,
                valid_to=version.valid_to,
                ended_by=version.ended_by,
                ended_by_kind=version.ended_by_kind,
                supersedes=version.fact_id,
            )
            return Plan("written", retire=(version,), insert=(closed, successor), shown=successor)
    later = [version for version in current if version.valid_from > start]
    following = min(later, key=lambda version: version.valid_from, default=None)
    placed = replace(
        new,
        valid_to=following.valid_from if following else None,
        ended_by=following.fact_id if following else None,
        ended_by_kind="fact" if following else None,
        supersedes=None,
    )
    return Plan("written", insert=(placed,), shown=placed)


def plan_expire(current: Sequence[Version], *, at: datetime, expiry_id: UUID) -> Plan:
    """End the value valid at ``at``: its version closes there with no successor.

    ``at`` equal to a version's start would leave an empty window: that is a retraction, so
    it is invalid here. Nothing valid at ``at`` is an idempotent no-op.
    """
    for version in current:
        if version.valid_from == at:
            return Plan(
                "invalid",
                shown=version,
                reason="a version starts at this instant; retract it instead of expiring it",
            )
    for version in current:
        if version.contains(at):
            closed = replace(
                version, version_id=None, valid_to=at, ended_by=expiry_id, ended_by_kind="expiry"
            )
            return Plan("expired", retire=(version,), insert=(closed,), shown=closed)
    return Plan("unchanged", reason="nothing is valid at this instant")


def plan_replace(incumbent: Version, new: Version) -> Plan:
    """A newcomer takes an equal-start incumbent's place: its window, its ``ended_by``.

    The incumbent is retired, not deleted; the newcomer ``supersedes`` it.
    """
    placed = replace(
        new,
        valid_from=incumbent.valid_from,
        valid_to=incumbent.valid_to,
        ended_by=incumbent.ended_by,
        ended_by_kind=incumbent.ended_by_kind,
        supersedes=incumbent.fact_id,
    )
    return Plan("written", retire=(incumbent,), insert=(placed,), shown=placed)


@dataclass(frozen=True, slots=True)
class Expiry:
    """An expiry as logged: where it ended the value, and its id for ``ended_by``."""

    at: datetime
    expiry_id: UUID


def rebuild(log: Sequence[Version | Expiry]) -> list[Version]:
    """A key's current knowledge from its assertions and expiries in arrival order.

    Each logged assertion was written when it arrived, so an equal start with a different
    value can only have been a replacement: it is replayed as one.
    """
    current: list[Version] = []
    for entry in log:
        if isinstance(entry, Expiry):
            plan = plan_expire(current, at=entry.at, expiry_id=entry.expiry_id)
        else:
            plan = plan_assert(current, entry)
            if plan.status == "conflict" and plan.shown is not None:
                plan = plan_replace(plan.shown, entry)
        current = [v for v in current if not any(v is gone for gone in plan.retire)]
        current.extend(plan.insert)
    return sorted(current, key=lambda version: version.valid_from)


def _same_window(left: Version, right: Version) -> bool:
    return (
        left.fact_id == right.fact_id
        and left.valid_from == right.valid_from
        and left.valid_to == right.valid_to
        and left.supersedes == right.supersedes
        and left.ended_by == right.ended_by
        and left.ended_by_kind == right.ended_by_kind
    )


def plan_rebuild(current: Sequence[Version], target: Sequence[Version]) -> Plan:
    """Move a key from ``current`` to ``target`` knowledge: retire and insert the difference.

    Versions equal in fact, window, ``supersedes`` and ``ended_by`` are kept as they are.
    """
    retire = tuple(v for v in current if not any(_same_window(v, t) for t in target))
    insert = tuple(
        replace(t, version_id=None) for t in target if not any(_same_window(t, v) for v in current)
    )
    return Plan("retracted", retire=retire, insert=insert)
