"""Request and response bodies of the HTTP API that are not already another contract model."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema

from store.contract.common import (
    NO_NUL_IN_OBJECT,
    Identifier,
    Timestamp,
    UnverifiedEvidencePolicy,
)
from store.contract.episodes import Episode, EpisodeInput
from store.contract.facts import Attribute, AttributeDeclaration
from store.contract.governance import RetentionClass
from store.contract.memory import ExtractionState
from store.contract.results import UpdateResult

MAX_CANDIDATES = 100
MAX_BATCH = 100

Candidate = Annotated[
    dict[str, Any],
    Field(
        description="A MemoryUpdate candidate (see /v1/memory-update-schema);"
        f" {NO_NUL_IN_OBJECT}, or the candidate's result is invalid"
    ),
]
"""A candidate as a body carries it: judged on its own, into its own result."""


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TenantCreate(_Body):
    """A tenant to create."""

    tenant_id: Identifier
    on_unverified_evidence: UnverifiedEvidencePolicy = Field(
        default="accept",
        description="The tenant's default for a candidate whose evidence is not in its"
        " episode's text: accept (stored, labelled unverified) or refuse (an invalid result);"
        " an attribute's own on_unverified_evidence wins over it",
    )


class TenantCreated(BaseModel):
    """The created tenant."""

    tenant_id: str
    on_unverified_evidence: UnverifiedEvidencePolicy = "accept"


class TenantSettings(BaseModel):
    """A tenant's settings as they stand."""

    tenant_id: str
    on_unverified_evidence: UnverifiedEvidencePolicy


class TenantChange(_Body):
    """Settings of a tenant to change; a field left out keeps its value."""

    on_unverified_evidence: UnverifiedEvidencePolicy | None = Field(
        default=None,
        description="The tenant's default for a candidate whose evidence is not in its"
        " episode's text: accept or refuse (applies to later writes; stored facts keep their"
        " label); an attribute's own on_unverified_evidence wins over it",
    )


class EpisodeBody(EpisodeInput):
    """An episode to record, optionally with candidates extracted from it."""

    updates: list[Candidate] = Field(
        default_factory=list,
        max_length=MAX_CANDIDATES,
        description="MemoryUpdate candidates citing this episode (see /v1/memory-update-schema);"
        " each gets its own result.",
    )
    extract: Literal["none", "now", "background"] = Field(
        default="none",
        description="Send the episode's text to the configured extractor: `now` before"
        " answering (its candidates' results come back in `extracted` and hold for the next"
        " read), `background` queued for a worker; without a configured extractor anything but"
        " `none` is 409 `conflict` naming `extract`.",
    )

    def episode(self) -> EpisodeInput:
        """The episode without its candidates and extraction request."""
        return EpisodeInput.model_validate(self.model_dump(exclude={"updates", "extract"}))


class EpisodeRead(Episode):
    """A recorded episode and its extraction state (null when it was never sent)."""

    extraction: ExtractionState | None = None


class EpisodeRecorded(EpisodeRead):
    """The recorded episode, one result per candidate sent with it, and those of the
    candidates extracted from it before answering (`extract: now`)."""

    results: list[UpdateResult] = Field(default_factory=list)
    extracted: list[UpdateResult] = Field(
        default_factory=list,
        description="Results of the candidates the extractor proposed (`extract: now`)",
    )


class EpisodeBatch(_Body):
    """Several episodes recorded in one transaction (all or none)."""

    episodes: list[EpisodeBody] = Field(min_length=1, max_length=MAX_BATCH)


class EpisodeBatchRecorded(BaseModel):
    """The recorded episodes, in the order sent."""

    episodes: list[EpisodeRecorded]


class CandidatesBody(_Body):
    """Candidates from a later extraction of one episode."""

    candidates: list[Candidate] = Field(
        min_length=1,
        max_length=MAX_CANDIDATES,
        description="MemoryUpdate objects (see /v1/memory-update-schema).",
    )


class CandidateResults(BaseModel):
    """One result per candidate, in the order sent; none of them is an error."""

    results: list[UpdateResult]


class ExpireBody(_Body):
    """End a key's value at ``at``, citing the episode that said so."""

    at: Timestamp
    source_episode_id: Identifier


class MergeBody(_Body):
    """The survivor a duplicate subject is folded into."""

    into: Identifier = Field(
        description="The survivor's id; one itself merged resolves to its own survivor"
    )


def _given(value: object) -> object:
    # A default is not validated: this refuses only an explicit null, which names no fact.
    if value is None:
        raise ValueError("name the fact, or leave this field out")
    return value


class RetractBody(_Body):
    """The fact to withdraw, by ``fact_id`` or by its ``valid_from`` (exactly one)."""

    # The store refuses neither or both (422 naming fact_id); the document states the same.
    model_config = ConfigDict(
        json_schema_extra={"oneOf": [{"required": ["fact_id"]}, {"required": ["valid_from"]}]}
    )

    fact_id: Annotated[
        UUID | None, BeforeValidator(_given), WithJsonSchema({"type": "string", "format": "uuid"})
    ] = None
    valid_from: Annotated[
        Timestamp | None,
        BeforeValidator(_given),
        WithJsonSchema({"type": "string", "format": "date-time"}),
    ] = None


class ResolveBody(_Body):
    """How to settle a conflict."""

    choose: Literal["incumbent", "challenger"]


class AttributeList(BaseModel):
    """The tenant's declared attributes."""

    attributes: list[Attribute]


class RetentionClassList(BaseModel):
    """The tenant's retention classes by name: the four defaults unless overridden, and the
    classes it declared (``declared_at`` set)."""

    classes: list[RetentionClass]


# The MCP tools' own arguments; the other tools take the HTTP bodies above.


class KeyInput(BaseModel):
    """One key: a subject and one of its attributes."""

    model_config = ConfigDict(extra="forbid")

    subject: Identifier = Field(description="The subject, e.g. mira")
    attribute: Identifier = Field(description="A declared attribute, e.g. passport_deadline")


class FactInput(KeyInput):
    """A key, and the valid time and knowledge time to read it at (both default to now)."""

    valid_at: Timestamp | None = Field(
        default=None,
        description="When the value must hold (RFC 3339 with an offset); default now, or"
        " known_at when only that is given",
    )
    known_at: Timestamp | None = Field(
        default=None,
        description="What was believed at this system time (RFC 3339 with an offset); default now",
    )


class AttributeInput(AttributeDeclaration):
    """An attribute to declare or redeclare, by name."""

    attribute: Identifier = Field(description="The attribute's id, e.g. passport_deadline")


class NoInput(BaseModel):
    """A tool that takes no arguments."""

    model_config = ConfigDict(extra="forbid")
