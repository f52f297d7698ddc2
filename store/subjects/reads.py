"""One subject's memory for one read: what the read path asks of the store, in one snapshot.

The context assembler must know every value any key of the subject ever held (design section
5, read path step 4) and route only among the keys the subject holds (step 3), so it reads the
subject whole: the facts valid at the asked instant, every value ever believed (with the system
window it was believed in, nothing more) and every conflict. The attribute schema
(``ReadSnapshot.attributes``) is read before, to start the encoder on the question; the episodes
the shown facts cite are read once the keys to show are chosen (``ReadSnapshot.episodes``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

import psycopg
from psycopg.rows import args_row

from store.contract.facts import ConflictRecord, Fact
from store.contract.values import JsonValue
from store.facts.conflicts import subject_conflicts
from store.facts.reads import read_period, read_profile

ValidRange = tuple[datetime | None, datetime | None]
"""A valid-time range ``[valid_from, valid_to)``; None: that end is open."""


class BelievedValue(NamedTuple):
    """A value one version of a key held, the system window it was believed in, and the
    valid window it held in (what an evidence line of another period is marked with)."""

    attribute: str
    value: JsonValue
    recorded_at: datetime
    retired_at: datetime | None
    valid_from: datetime
    valid_to: datetime | None


BELIEVED_VALUES = """
    SELECT attribute, value, recorded_at, retired_at, valid_from, valid_to FROM fact_versions
    WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s
      AND (retired_at IS NULL OR retired_at > recorded_at)
    ORDER BY attribute, valid_from, recorded_at, version_id
"""
"""Every version of the subject ever believed (one recorded and retired at one instant never
was), oldest first per key: the six columns the read path judges by, not the whole fact."""


def read_believed_values(
    conn: psycopg.Connection[Any], tenant_id: str, *, subject: str
) -> list[BelievedValue]:
    """The subject's ``BELIEVED_VALUES``."""
    with conn.cursor(row_factory=args_row(BelievedValue)) as cur:
        cur.execute(BELIEVED_VALUES, {"tenant_id": tenant_id, "subject": subject})
        return cur.fetchall()


@dataclass(frozen=True)
class SubjectMemory:
    """A subject's facts at (``valid_at``, ``known_at``) and every value it ever held."""

    subject: str
    valid_at: datetime
    known_at: datetime
    facts: list[Fact]
    """One per key valid at ``valid_at`` in knowledge at ``known_at``, disputes at known-at."""
    believed: list[BelievedValue]
    """Every value ever believed, of every key of the subject (unless not asked for)."""
    conflicts: list[ConflictRecord]
    """Every conflict logged on the subject's keys, open or resolved."""
    period: ValidRange | None = None
    """For a period read, the valid-time range: ``facts`` then holds every version valid in
    it (several per key, by valid_from)."""

    def held_attributes(self) -> list[str]:
        """Attributes the subject holds as known at ``known_at``: a version or an open conflict.

        Held means the store believed some value of the key then, valid at any time: the keys
        a question about the subject can be routed to.
        """
        held = {
            version.attribute
            for version in self.believed
            if version.recorded_at <= self.known_at
            and (version.retired_at is None or version.retired_at > self.known_at)
        }
        held |= {
            conflict.attribute
            for conflict in self.conflicts
            if conflict.created_at <= self.known_at
            and (conflict.resolved_at is None or conflict.resolved_at > self.known_at)
        }
        return sorted(held)

    def cited(self, attributes: Sequence[str]) -> set[str]:
        """The episodes the facts of ``attributes`` cite: sources and disputing challengers."""
        shown = [fact for fact in self.facts if fact.attribute in attributes]
        return {fact.source_episode_id for fact in shown} | {
            challenger.source_episode_id for fact in shown for challenger in fact.challengers
        }

    def fact(self, attribute: str) -> Fact | None:
        """The fact of ``attribute`` valid at the asked instant (for a period, the latest valid
        in it), or None: not known."""
        found = self.facts_of(attribute)
        return found[-1] if found else None

    def facts_of(self, attribute: str) -> list[Fact]:
        """Every fact of ``attribute`` the read holds, by valid_from (one, except for a period)."""
        return [fact for fact in self.facts if fact.attribute == attribute]

    def values_ever(self) -> list[tuple[str, JsonValue]]:
        """(attribute, value) of every version and every conflict challenger, first seen first."""
        pairs = [(version.attribute, version.value) for version in self.believed]
        pairs += [(conflict.attribute, conflict.challenger.value) for conflict in self.conflicts]
        return pairs


def read_subject_memory(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    subject: str,
    valid_at: datetime,
    known_at: datetime,
    now: datetime,
    history: bool = True,
    attributes: Sequence[str] | None = None,
    period: ValidRange | None = None,
) -> SubjectMemory:
    """Everything a context read needs about ``subject``, from one transaction.

    A read that checks no evidence needs no ``history``: left out, ``believed`` is empty. A
    read of named keys without history needs only those: given ``attributes``, only their
    facts are read, each with its open disputes, and ``conflicts`` is empty. Given a
    ``period``, the facts are every version valid in it (``read_period``), not at ``valid_at``.
    """
    if attributes is not None and history:
        raise ValueError("a read of named keys only cannot read the subject's history")
    conflicts = (
        [] if attributes is not None else subject_conflicts(conn, tenant_id, subject=subject)
    )
    marked = None if attributes is not None else conflicts
    if period is not None:
        facts = read_period(
            conn,
            tenant_id,
            subject=subject,
            attributes=attributes,
            valid_from=period[0],
            valid_to=period[1],
            known_at=known_at,
            now=now,
            conflicts=marked,
        )
    else:
        facts = read_profile(
            conn,
            tenant_id,
            subject=subject,
            attributes=attributes,
            valid_at=valid_at,
            known_at=known_at,
            now=now,
            conflicts=marked,
        )
    return SubjectMemory(
        subject=subject,
        valid_at=valid_at,
        known_at=known_at,
        facts=facts,
        believed=read_believed_values(conn, tenant_id, subject=subject) if history else [],
        conflicts=conflicts,
        period=period,
    )
