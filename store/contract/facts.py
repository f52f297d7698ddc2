"""Attributes, candidates and facts: what a tenant declares, proposes and reads back."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    computed_field,
    model_validator,
)

from store.contract.common import (
    MAX_DESCRIPTION,
    MAX_TEXT,
    RETENTION_CLASS_RULE,
    EpisodeKind,
    EqualStartPolicy,
    FactStatus,
    Identifier,
    MemoryType,
    NoNul,
    SourceRank,
    SubjectName,
    Timestamp,
    UnverifiedEvidencePolicy,
    WeakQuorum,
    WeakWindowDays,
)
from store.contract.labels import version_label
from store.contract.values import JsonValue, ValueType

EndedByKind = Literal["fact", "expiry"]
"""What ended a version: a later fact, or an expiry."""


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid", str_max_length=MAX_TEXT)


class SubjectNamesDeclaration(_Input):
    """The names a tenant declares for one subject; they replace the declared ones before."""

    display_name: SubjectName | None = Field(
        default=None, description="How the subject is written in full, e.g. Adaeze Okafor"
    )
    aliases: list[SubjectName] = Field(
        default_factory=list,
        max_length=50,
        description="Other names it goes by (an acronym, a former name, a short form)",
    )


_ENUM_VALUES_RULE: dict[str, Any] = {
    "if": {"properties": {"value_type": {"const": "enum"}}, "required": ["value_type"]},
    "then": {"properties": {"enum_values": {"minItems": 1}}, "required": ["enum_values"]},
    "else": {"properties": {"enum_values": {"maxItems": 0}}},
}
"""``_enum_values_match_type`` as JSON Schema: enum_values exactly when value_type is enum."""


class AttributeDeclaration(_Input):
    """What a tenant declares about one attribute of its schema."""

    model_config = ConfigDict(json_schema_extra=_ENUM_VALUES_RULE)

    attribute: Identifier | None = Field(
        default=None,
        description="The attribute's name; unset = the name in the path. A different name is a"
        " rename, which only an attribute migration makes",
    )
    description: Annotated[str, Field(max_length=MAX_DESCRIPTION), NoNul] = ""
    value_type: ValueType
    enum_values: list[Annotated[str, StringConstraints(min_length=1, max_length=200), NoNul]] = (
        Field(default_factory=list, max_length=200, json_schema_extra={"uniqueItems": True})
    )
    aliases: list[Annotated[str, StringConstraints(min_length=1, max_length=200), NoNul]] = Field(
        default_factory=list, max_length=50
    )
    memory_type: MemoryType = "semantic"
    on_equal_start: EqualStartPolicy = "reject"
    source_ranks: dict[EpisodeKind, SourceRank] | None = Field(
        default=None,
        description="Override of the source ranks source_precedence compares, by episode"
        " kind (unnamed kinds keep their default rank)",
    )
    retention_class: Identifier = Field(default="standard", description=RETENTION_CLASS_RULE)
    weak_quorum: WeakQuorum = Field(
        default=2,
        description="How many independent episodes (distinct ids and content hashes) must"
        " support a weak candidate's value before it becomes a fact",
    )
    weak_window_days: WeakWindowDays = Field(
        default=30, description="How many days a buffered weak candidate waits for support"
    )
    on_unverified_evidence: UnverifiedEvidencePolicy | None = Field(
        default=None,
        description="A candidate whose evidence is not in its episode's text: accept (stored"
        " with evidence_verified false, labelled unverified) or refuse (an invalid result,"
        " field evidence, that writes nothing); unset = the tenant's default (accept unless"
        " set with PUT /v1/admin/tenants/{tenant})",
    )

    @model_validator(mode="after")
    def _enum_values_match_type(self) -> AttributeDeclaration:
        if not self.source_ranks:
            self.source_ranks = None
        if self.value_type is ValueType.ENUM and not self.enum_values:
            raise ValueError("an enum attribute needs enum_values")
        if self.value_type is not ValueType.ENUM and self.enum_values:
            raise ValueError("enum_values apply only to value_type enum")
        if len(set(self.enum_values)) != len(self.enum_values):
            raise ValueError("enum_values must be distinct")
        return self


class Attribute(AttributeDeclaration):
    """A declared attribute as stored, with the version of its declaration."""

    model_config = ConfigDict(extra="ignore")

    attribute: Identifier
    schema_version: int
    created_at: Timestamp
    updated_at: Timestamp


class MemoryUpdate(_Input):
    """A candidate fact, as a model's structured output proposes it (the seed's shape).

    Tenant and source episode are never part of it: the write path stamps them from the call.
    """

    evidence: Annotated[str, NoNul] = Field(description="Exact quote from the episode")
    subject: Identifier = Field(description="Normalized entity id, e.g. mira")
    attribute: Identifier = Field(description="Declared attribute being updated")
    current_value: Annotated[str, NoNul] | None = Field(
        default=None, description="Stored value shown in the prompt (advisory)"
    )
    change: Literal["new", "update", "no_change"]
    value: Annotated[str, NoNul] | None = Field(
        default=None, description="New value as text; null when change is no_change"
    )
    valid_from: Timestamp | None = Field(
        default=None,
        description="When the value starts to apply (RFC 3339 with offset); "
        "defaults to the episode's occurred_at",
    )
    strength: Literal["strong", "weak"] = "strong"
    subject_name: SubjectName | None = Field(
        default=None,
        description="The subject's name as the evidence writes it (e.g. Adaeze Okafor);"
        " learned as one of its names when the episode's text contains it",
    )


class Challenger(BaseModel):
    """A value disputing a fact at the same start, as it waits in the conflicts table."""

    conflict_id: UUID
    value: JsonValue
    source_episode_id: str
    source_kind: EpisodeKind
    evidence: str | None
    evidence_verified: bool


class ConflictRecord(BaseModel):
    """An equal-start disagreement: the incumbent fact and the challenger it met."""

    conflict_id: UUID
    subject: str
    attribute: str
    valid_from: Timestamp
    policy: EqualStartPolicy
    disputed: bool
    incumbent_fact_id: UUID
    challenger: Challenger
    status: Literal["open", "resolved"]
    created_at: Timestamp
    resolved_at: Timestamp | None
    resolution: Literal["incumbent", "challenger"] | None
    resolved_fact_id: UUID | None


class Fact(BaseModel):
    """One version of a fact, with its windows and its status relative to the read."""

    fact_id: UUID
    version_id: UUID
    subject: str
    attribute: str
    value: JsonValue
    valid_from: Timestamp
    valid_to: Timestamp | None
    recorded_at: Timestamp
    retired_at: Timestamp | None
    supersedes: UUID | None
    ended_by: UUID | None
    ended_by_kind: EndedByKind | None
    source_episode_id: str
    source_kind: EpisodeKind
    evidence: str | None
    evidence_verified: bool
    schema_version: int
    status: FactStatus
    disputed: bool = False
    challengers: list[Challenger] = Field(default_factory=list)
    migrated_from: str | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Present when the read named an attribute by the name it had before a"
        " rename (within the dual-read window): that old name",
    )
    unconvertible: bool = Field(
        default=False,
        exclude_if=lambda value: not value,
        description="Present (true) on a version an attribute migration left under the old"
        " declaration because its value could not convert (keep_unconvertible)",
    )

    @computed_field(  # type: ignore[prop-decorator]
        description="What the version is called, as the context block and the timeline page"
        " name it: its status, then ' · disputed' while its key is disputed and ' · unverified'"
        " when its evidence was not found in its episode (e.g. 'current · unverified')"
    )
    @property
    def label(self) -> str:
        """The version's label (``store.contract.labels``): status, dispute and evidence."""
        return version_label(
            status=self.status, disputed=self.disputed, evidence_verified=self.evidence_verified
        ).words
