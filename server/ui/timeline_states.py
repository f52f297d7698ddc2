"""What a timeline's versions and challengers are at one instant ``known_at``. Pure.

A version is believed at an instant when it was recorded by then and not yet retired; read at
``known_at`` (valid time and system time both S) it is ``retired``, ``future``, ``past`` or
``current``, and ``superseded`` when a fact believed then supersedes it. A fact facing an
equal-start conflict open at ``known_at`` carries its challengers. The words each is called by
are ``store.contract.labels``' rule; ``server.ui.timeline`` draws them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal
from uuid import UUID

from store.contract.facts import ConflictRecord, Fact
from store.contract.labels import Label, ReadStatus, version_label

State = Literal["current", "future", "past", "superseded", "retired"]


@dataclass(frozen=True, slots=True)
class Challenge:
    """A value contesting a fact from the same start, in an open conflict at ``known_at``."""

    value: str
    source_episode_id: str
    disputed: bool
    evidence_verified: bool = True

    @property
    def label(self) -> Label:
        """What the challenger is called: ``disputed`` or ``in conflict`` (its conflict is open),
        and ``unverified`` when its evidence was not found in its episode."""
        # The status named is the challenged version's; an open challenger's label ignores it.
        return version_label(
            status="current",
            disputed=self.disputed,
            role="challenger",
            conflict="open",
            evidence_verified=self.evidence_verified,
        )


def display_value(value: object) -> str:
    """A stored value as text: a string as it is, anything else as its JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def believed_at(version: Fact, at: datetime) -> bool:
    """Whether the version was in the server's knowledge at ``at``."""
    return version.recorded_at <= at and (version.retired_at is None or at < version.retired_at)


def challenges_at(
    conflicts: Sequence[ConflictRecord], known_at: datetime
) -> dict[UUID, tuple[Challenge, ...]]:
    """The challengers of each incumbent fact in conflicts open at ``known_at``."""
    found: dict[UUID, list[Challenge]] = {}
    for conflict in conflicts:
        opened = conflict.created_at <= known_at
        if not opened or (conflict.resolved_at is not None and conflict.resolved_at <= known_at):
            continue
        challenger = conflict.challenger
        found.setdefault(conflict.incumbent_fact_id, []).append(
            Challenge(
                value=display_value(challenger.value),
                source_episode_id=challenger.source_episode_id,
                disputed=conflict.disputed,
                evidence_verified=challenger.evidence_verified,
            )
        )
    return {fact_id: tuple(each) for fact_id, each in found.items()}


def _status(version: Fact, known_at: datetime) -> ReadStatus:
    """The version's status as read at ``known_at`` (valid time and system time both S)."""
    if not believed_at(version, known_at):
        return "retired"
    if version.valid_from > known_at:
        return "future"
    if version.valid_to is not None and version.valid_to <= known_at:
        return "past"
    return "current"


def bar_label(
    version: Fact, known_at: datetime, *, superseded: bool, challenges: Sequence[Challenge]
) -> Label:
    """The bar's label: its status at ``known_at`` (``superseded`` when a fact believed then
    supersedes it), disputed while an open dispute at ``known_at`` names it."""
    return version_label(
        status=_status(version, known_at),
        disputed=any(challenge.disputed for challenge in challenges),
        superseded=superseded,
        evidence_verified=version.evidence_verified,
    )
