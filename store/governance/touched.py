"""What each memory type's receipt says about a read or a write of it (pure).

Every builder takes what the call already holds (a fact, a checkpoint, a procedure version,
an episode id) and keeps only ids, times and flags: nothing it says reaches a receipt.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from uuid import UUID

from store.contract.common import MemoryType
from store.contract.episodes import Episode
from store.contract.facts import Fact
from store.contract.memory import Checkpoint
from store.contract.procedures import ActiveProcedure, ProcedureVersion
from store.contract.receipts import Invalidation, procedure_owner
from store.governance.receipts import Touched


def _belief(retired_at: datetime | None, now: datetime) -> Invalidation:
    """Whether a version was still believed at ``now``, or a later write had retired it."""
    return "current" if retired_at is None or retired_at > now else "superseded"


def fact_read(
    fact: Fact, *, now: datetime, activated: bool = True, asked: str | None = None
) -> Touched:
    """A fact version served; ``asked`` is the subject the request named, if not its own."""
    return Touched(
        memory_type="semantic",
        key=fact.attribute,
        owner=fact.subject,
        version=str(fact.version_id),
        written_at=fact.recorded_at,
        provenance=fact.source_episode_id,
        activated=activated,
        invalidation=_belief(fact.retired_at, now),
        asked=asked,
    )


def _nothing(memory_type: MemoryType, key: str, owner: str) -> Touched:
    """A read for a decision that found nothing to serve: only what was asked for."""
    return Touched(
        memory_type=memory_type,
        key=key,
        owner=owner,
        version=None,
        written_at=None,
        provenance=None,
        activated=False,
    )


def fact_missing(subject: str, attribute: str) -> Touched:
    """A key read for a decision that had no value to serve."""
    return _nothing("semantic", attribute, subject)


def fact_written(
    subject: str, attribute: str, *, version_id: UUID, now: datetime, source_episode_id: str
) -> Touched:
    """A fact version a candidate wrote (known as it is sent, before it is read back)."""
    return Touched(
        memory_type="semantic",
        key=attribute,
        owner=subject,
        version=str(version_id),
        written_at=now,
        provenance=source_episode_id,
        activated=False,
        invalidation="current",
    )


def _checkpoint_ref(version: int) -> str:
    return f"checkpoint:{version}"


def checkpoint_read(checkpoint: Checkpoint, *, latest: int) -> Touched:
    """A checkpoint served; it is current only while no later version exists."""
    current = checkpoint.version >= latest
    return replace(
        checkpoint_written(checkpoint),
        activated=True,
        invalidation="current" if current else "superseded",
    )


def checkpoint_missing(thread_id: str) -> Touched:
    """A thread read for a decision that had no such checkpoint."""
    return _nothing("working", thread_id, thread_id)


def checkpoint_written(checkpoint: Checkpoint) -> Touched:
    """A checkpoint version written."""
    return Touched(
        memory_type="working",
        key=checkpoint.thread_id,
        owner=checkpoint.thread_id,
        version=str(checkpoint.version),
        written_at=checkpoint.written_at,
        provenance=f"checkpoint:{checkpoint.version}",
        activated=False,
        invalidation="current",
    )


def _approval_ref(version: ProcedureVersion) -> str | None:
    return None if version.approved_at is None else f"approval:{version.version}"


def procedure_read(active: ActiveProcedure) -> Touched:
    """The version active in a scope, served."""
    return replace(procedure_written(active, scope=active.scope), activated=True)


def procedure_missing(name: str, scope: str) -> Touched:
    """A procedure read for a decision with no version active in the scope."""
    return _nothing("procedural", name, procedure_owner(name, scope))


def procedure_written(version: ProcedureVersion, *, scope: str | None = None) -> Touched:
    """A procedure version written, approved, or made active in ``scope``."""
    return Touched(
        memory_type="procedural",
        key=version.name,
        owner=version.name if scope is None else procedure_owner(version.name, scope),
        version=str(version.version),
        written_at=version.created_at,
        provenance=_approval_ref(version),
        activated=False,
        invalidation="current",
        approved=version.status == "approved",
    )


def episode_read(
    episode_id: str, *, activated: bool, written_at: datetime | None = None
) -> Touched:
    """An episode retrieved for a decision; its outcome, and its write time when not given,
    are looked up as the receipt is written."""
    return replace(outcome_written(episode_id, written_at), activated=activated)


def episode_written(episode: Episode) -> Touched:
    """An episode recorded."""
    return outcome_written(episode.id, episode.recorded_at)


def outcome_written(episode_id: str, written_at: datetime | None) -> Touched:
    """An episode, or what came of it, written at ``written_at``."""
    return Touched(
        memory_type="episodic",
        key=episode_id,
        owner=None,
        version=None,
        written_at=written_at,
        provenance=episode_id,
        activated=False,
        invalidation="current",
    )
