"""Bulk import, the pure part: import lines, their outcome, and one key's writes in memory.

An import file holds one JSON object a line: an episode's fields (``id``, ``occurred_at``,
``text``, ``kind``...), the ``tenant`` it belongs to and its ``updates`` (MemoryUpdate
candidates). Importing it records what recording each episode and then applying its
candidates, one call at a time in file order, at a single system time would record; see
``store.episodes.bulk_write`` for the transaction that writes it.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from uuid import UUID, uuid4

from pydantic import BaseModel, Field

from store.contract.common import UpdateStatus
from store.contract.episodes import Episode
from store.contract.results import UpdateResult
from store.contract.values import JsonValue
from store.episodes.bulk_lines import BadLine, ImportLine, at_line, parse_lines
from store.facts.temporal import Plan, Version, plan_assert
from store.facts.versions import IdFactory, Key
from store.facts.writes import Accepted

__all__ = [  # the lines are read in ``store.episodes.bulk_lines``; its names are used from here
    "BadLine",
    "Candidate",
    "ImportLine",
    "ImportResult",
    "KeyWrites",
    "Outcomes",
    "RefusedCandidate",
    "at_line",
    "drawn_in_blocks",
    "has_float",
    "parse_lines",
    "plan_key",
]


class RefusedCandidate(BaseModel):
    """A candidate the import did not write as a fact, and why."""

    line: int
    index: int
    status: UpdateStatus
    reason: str | None = None
    field: str | None = None


class ImportResult(BaseModel):
    """What an import recorded: episodes, candidate outcomes, and the vectors added after."""

    lines: int = Field(description="Lines imported (blank lines aside).")
    episodes_recorded: int = Field(description="Episodes new to the store.")
    candidates: dict[str, int] = Field(description="Candidates by outcome status.")
    refused: list[RefusedCandidate] = Field(
        description="Invalid and conflicting candidates, by line; the others were written,"
        " unchanged or ignored."
    )
    recorded: list[tuple[str, str]] = Field(
        exclude=True, description="The new episodes as (tenant, episode id), to embed."
    )


@dataclass
class Outcomes:
    """Each candidate's outcome, gathered into an ``ImportResult``."""

    counts: Counter[str] = field(default_factory=Counter)
    refused: list[RefusedCandidate] = field(default_factory=list)

    def add(self, line: int, result: UpdateResult) -> None:
        """Count one candidate's result (keep it when it was refused)."""
        self.counts[result.status] += 1
        if result.status in {"invalid", "conflict"}:
            refused = RefusedCandidate(line=line, **result.model_dump(include=_REFUSED_FIELDS))
            self.refused.append(refused)

    def result(self, *, lines: int, recorded: list[tuple[str, str]]) -> ImportResult:
        """The import's result once every candidate is counted."""
        self.refused.sort(key=lambda item: (item.line, item.index))
        return ImportResult(
            lines=lines,
            episodes_recorded=len(recorded),
            candidates=dict(sorted(self.counts.items())),
            refused=self.refused,
            recorded=recorded,
        )


_REFUSED_FIELDS = {"index", "status", "reason", "field"}


@dataclass(frozen=True, slots=True)
class Candidate:
    """An accepted candidate of an import, with its line and the episode it cites."""

    line: int
    item: Accepted
    episode: Episode


@dataclass(slots=True)
class KeyWrites:
    """One key's writes for an import, planned in memory: what to retire and insert."""

    key: Key
    rows: list[tuple[UUID, Version]] = field(default_factory=list)
    """The new versions in write order, each with its version id."""
    inserted: set[UUID] = field(default_factory=set)
    retired_here: set[UUID] = field(default_factory=set)
    """Version ids of rows this import inserts and retires again at once."""
    retire: list[UUID] = field(default_factory=list)
    """Stored versions to retire."""
    counts: Counter[str] = field(default_factory=Counter)
    """The candidates' outcomes: written or unchanged."""
    shown: list[tuple[str, UUID]] = field(default_factory=list)
    """Each candidate's source episode and the version it shows (written, or the same value
    already there), for its receipt: the write path leaves one for each."""


def plan_key(
    key: Key,
    current: list[Version],
    *,
    candidates: list[Candidate],
    new_id: IdFactory,
    stored: Callable[[JsonValue], JsonValue],
) -> KeyWrites | None:
    """Apply a key's candidates, in order, to its ``current`` knowledge as the write path would.

    ``current`` holds the key's stored versions; ``stored`` gives a value as the database
    returns it, so each candidate compares its value with its predecessors' as the write path
    does. None when a candidate starts a different value where one already starts: the
    attribute's equal-start policy then goes through the write path itself.
    """
    writes = KeyWrites(key)
    state = list(current)
    for position, candidate in enumerate(candidates, start=1):
        new = candidate.item.new_fact(candidate.episode, new_id())
        # Onto nothing, ``plan_assert`` writes the new fact as it is (open, superseding
        # nothing): the same plan, without copying the fact. Most keys of a first load.
        plan = Plan("written", insert=(new,), shown=new) if not state else plan_assert(state, new)
        if plan.status == "conflict":
            return None
        writes.counts[plan.status] += 1
        if plan.status != "written":
            if plan.shown is not None and plan.shown.version_id is not None:
                writes.shown.append((candidate.episode.id, plan.shown.version_id))
            continue
        gone = {version.version_id for version in plan.retire}
        for version_id in gone:
            if version_id in writes.inserted:
                writes.retired_here.add(version_id)
            elif version_id is not None:
                writes.retire.append(version_id)
        inserted = [(new_id(), version) for version in plan.insert]
        writes.rows.extend(inserted)
        writes.shown.extend(
            (candidate.episode.id, version_id)
            for version_id, version in inserted
            if version is plan.shown
        )
        writes.inserted.update(version_id for version_id, _ in inserted)
        if position < len(candidates):  # the key's state as the next candidate reads it
            state = [version for version in state if version.version_id not in gone]
            state.extend(
                replace(version, version_id=version_id, value=stored(version.value))
                for version_id, version in inserted
            )
            state.sort(key=lambda version: version.valid_from)
    return writes


def drawn_in_blocks(new_id: IdFactory) -> IdFactory:
    """``new_id``, or where it is ``uuid4``, random version-4 ids read from the system's
    randomness 4,096 at a time rather than one read each: an import draws two a fact."""
    if new_id is not uuid4:
        return new_id  # a replay's counting ids, say: as given

    def ids() -> Iterator[UUID]:
        while True:
            block = os.urandom(16 * 4_096)
            for start in range(0, len(block), 16):
                yield UUID(bytes=block[start : start + 16], version=4)

    return partial(next, ids())


def has_float(value: JsonValue) -> bool:
    """Whether a JSON value holds a float anywhere (only those can change once stored)."""
    if isinstance(value, float):
        return True
    if isinstance(value, list):
        return any(has_float(item) for item in value)
    if isinstance(value, dict):
        return any(has_float(item) for item in value.values())
    return False
