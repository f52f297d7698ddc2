"""What the store's calls answer: outcomes, pages, profiles, exports and receipts."""

from __future__ import annotations

from typing import Literal
from uuid import UUID

from pydantic import BaseModel, Field

from store.contract.common import Timestamp, UpdateStatus
from store.contract.episodes import Episode
from store.contract.facts import ConflictRecord, Fact
from store.contract.memory import BufferedSignal, EpisodeOutcome


class UpdateResult(BaseModel):
    """The outcome of one candidate: never an error, always one of the statuses."""

    index: int
    status: UpdateStatus
    reason: str | None = None
    field: str | None = None
    fact: Fact | None = None
    conflict_id: UUID | None = None
    supporting_episode_ids: list[str] | None = Field(
        default=None,
        description="For a weak candidate promoted to a fact: the other episodes whose buffered"
        " signals supported its value (the fact's source is the episode that completed the"
        " quorum), earliest first; null otherwise",
    )
    migrated_from: str | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Present when the candidate named its attribute by the name it had before"
        " a rename (within the dual-read window): that old name; it was written under the new",
    )


class RetractResult(BaseModel):
    """The outcome of a retraction: the fact withdrawn and any incumbent it brought back."""

    status: Literal["retracted", "unchanged"]
    fact_id: UUID
    restored_fact_id: UUID | None = None


class ConflictPage(BaseModel):
    """One page of conflicts and the cursor of the next (null on the last page)."""

    conflicts: list[ConflictRecord]
    next_cursor: str | None


class ResolveResult(BaseModel):
    """A settled conflict, and the fact now holding its start."""

    conflict: ConflictRecord
    fact: Fact | None


class ExpireResult(BaseModel):
    """The outcome of an expiry: ``expired`` with the closed version, or ``unchanged``.

    An expiry of a key that holds values is logged under ``expiry_id`` either way (a later
    retraction replays it); one of a key with no value at all is not, and ``expiry_id`` is
    null: it can never end anything.
    """

    status: Literal["expired", "unchanged"]
    expiry_id: UUID | None = None
    fact: Fact | None = None


class Profile(BaseModel):
    """Every attribute of one subject known at ``known_at`` and valid at ``valid_at``."""

    subject: str
    valid_at: Timestamp
    known_at: Timestamp
    facts: list[Fact]


class ErasureResult(BaseModel):
    """An erasure's receipt: what kind of thing went and the tombstone that records it (a
    thread's erasure deletes checkpoints and nothing else)."""

    status: Literal["erased"] = "erased"
    tombstone_id: UUID
    facts_retracted: int = 0
    episodes_deleted: int
    episodes_stubbed: int
    fact_versions_deleted: int
    conflicts_deleted: int
    expiries_deleted: int
    checkpoints_deleted: int = 0


class LearnedName(BaseModel):
    """A name text wrote for a subject, and the episode that showed it."""

    name: str
    episode_id: str
    learned_at: Timestamp


class SubjectNames(BaseModel):
    """The names a question may call a subject by, besides its id."""

    subject: str
    display_name: str | None = Field(description="The declared display name, if any")
    aliases: list[str] = Field(description="Other declared names, in byte order")
    learned: list[LearnedName] = Field(
        description="Names candidates (subject_name) or episodes (subject_names) wrote for it,"
        " each with the first episode that showed it, oldest first"
    )

    def named(self) -> bool:
        """Whether it is called by any name besides its id."""
        return bool(self.display_name or self.aliases or self.learned)


class MergeResult(BaseModel):
    """A subject merge's content-free receipt: the two ids and counts of what moved."""

    merged: str = Field(description="The duplicate's id: it resolves to `into` from now on")
    into: str = Field(description="The survivor (the final one, where `into` was itself merged)")
    versions_moved: int = Field(
        description="Fact versions re-keyed whole, or asserted into the survivor's keys"
    )
    conflicts_moved: int = Field(description="Open conflicts moved to the survivor")
    episodes_linked: int = Field(description="Episodes that named the duplicate and now name it")
    merge_id: UUID


class ApiKey(BaseModel):
    """An API key as listed: its id, tenant and times, never its secret."""

    key_id: UUID
    tenant_id: str
    created_at: Timestamp
    revoked_at: Timestamp | None


class ApiKeyIssued(ApiKey):
    """A new key with its token, ``sgam_<key_id hex>_<secret>``: shown once, stored hashed."""

    api_key: str


class ApiKeyRevoked(ApiKey):
    """A revocation's outcome: ``revoked`` now, or ``unchanged`` (revoked since ``revoked_at``)."""

    status: Literal["revoked", "unchanged"]


class SubjectPage(BaseModel):
    """One page of subject ids, by id, and the cursor of the next (null on the last page)."""

    subjects: list[str]
    next_cursor: str | None


class SubjectSummary(BaseModel):
    """A subject at a glance: the keys it holds now, its open conflicts, its last change."""

    subject: str
    keys: int = Field(description="Keys with a value believed now")
    open_conflicts: int
    last_change: Timestamp = Field(
        description="The latest write about it: a version recorded or retired, a conflict"
        " logged or resolved, an episode naming it recorded"
    )


class SubjectOverview(BaseModel):
    """One page of subject summaries and the cursor of the next (null on the last page)."""

    subjects: list[SubjectSummary]
    next_cursor: str | None


class SubjectExport(BaseModel):
    """Everything held about one subject at ``exported_at``.

    ``facts`` is its profile now; ``versions`` every version ever believed, by attribute then
    history order; ``episodes`` those that name it or source, expire or challenge its facts
    (stubs included); ``conflicts`` its conflicts, open and resolved, oldest first;
    ``outcomes`` every outcome those episodes were given, by episode then revision;
    ``weak_signals`` the weak candidates about it still buffered (not yet promoted, expired or
    purged), oldest first.
    """

    subject: str
    exported_at: Timestamp
    facts: list[Fact]
    versions: list[Fact]
    episodes: list[Episode]
    conflicts: list[ConflictRecord]
    outcomes: list[EpisodeOutcome]
    weak_signals: list[BufferedSignal]
    names: SubjectNames | None = Field(
        default=None, description="Its declared and learned names (PUT /v1/subjects/{subject})"
    )
