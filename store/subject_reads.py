"""One subject's memory for one read: what the read path asks of the store, in one snapshot.

The context assembler must know every value any key of the subject ever held (design section
5, read path step 4) and route only among the keys the subject holds (step 3), so it reads the
subject whole: the facts valid at the asked instant, every version ever believed, every
conflict, the episodes the shown facts cite and the attribute schema.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from store.attributes import list_attributes
from store.conflicts import subject_conflicts
from store.episodes import get_episodes
from store.models import Attribute, ConflictRecord, Episode, Fact
from store.reads import read_history, read_profile
from store.values import JsonValue


@dataclass(frozen=True)
class SubjectMemory:
    """A subject's facts at (``valid_at``, ``known_at``), its whole history, and cited episodes."""

    subject: str
    valid_at: datetime
    known_at: datetime
    facts: list[Fact]
    """One per key valid at ``valid_at`` in knowledge at ``known_at``, disputes at known-at."""
    versions: list[Fact]
    """Every version ever believed, of every key of the subject (unless not asked for)."""
    conflicts: list[ConflictRecord]
    """Every conflict logged on the subject's keys, open or resolved."""
    episodes: dict[str, Episode]
    """The episodes ``facts`` cite, sources and disputing challengers, by id."""
    attributes: list[Attribute]
    """The tenant's declared attributes (routing scores the subject's among them; unless not
    asked for)."""

    def held_attributes(self) -> list[str]:
        """Attributes the subject holds as known at ``known_at``: a version or an open conflict.

        Held means the store believed some value of the key then, valid at any time: the keys
        a question about the subject can be routed to.
        """
        held = {
            version.attribute
            for version in self.versions
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

    def fact(self, attribute: str) -> Fact | None:
        """The fact of ``attribute`` valid at the asked instant, or None: not known."""
        return next((fact for fact in self.facts if fact.attribute == attribute), None)

    def values_ever(self) -> list[tuple[str, JsonValue]]:
        """(attribute, value) of every version and every conflict challenger, first seen first."""
        pairs = [(version.attribute, version.value) for version in self.versions]
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
    schema: bool = True,
    attributes: Sequence[str] | None = None,
) -> SubjectMemory:
    """Everything a context read needs about ``subject``, from one transaction.

    A read that checks no evidence needs no ``history``; one that routes no question needs no
    ``schema``: left out, ``versions`` and ``attributes`` are empty. A read of named keys
    without history needs only those: given ``attributes``, only their facts are read, each
    with its open disputes, and ``conflicts`` is empty.
    """
    if attributes is not None:
        if history:
            raise ValueError("a read of named keys only cannot read the subject's history")
        facts = read_profile(
            conn,
            tenant_id,
            subject=subject,
            attributes=attributes,
            valid_at=valid_at,
            known_at=known_at,
            now=now,
        )
        conflicts: list[ConflictRecord] = []
    else:
        conflicts = subject_conflicts(conn, tenant_id, subject=subject)
        facts = read_profile(
            conn,
            tenant_id,
            subject=subject,
            valid_at=valid_at,
            known_at=known_at,
            now=now,
            conflicts=conflicts,
        )
    cited = {fact.source_episode_id for fact in facts}
    cited |= {c.source_episode_id for fact in facts for c in fact.challengers}
    return SubjectMemory(
        subject=subject,
        valid_at=valid_at,
        known_at=known_at,
        facts=facts,
        versions=(
            read_history(conn, tenant_id, subject=subject, now=now, conflicts=conflicts)
            if history
            else []
        ),
        conflicts=conflicts,
        episodes=get_episodes(conn, tenant_id, cited),
        attributes=list_attributes(conn, tenant_id) if schema else [],
    )
