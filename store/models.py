"""The store's vocabulary as pydantic models: what goes in, what comes back, in JSON's words."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    StrictInt,
    StringConstraints,
    computed_field,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from store.labels import version_label
from store.names import MAX_NAME, fold_name
from store.temporal import EndedByKind
from store.times import format_timestamp, parse_timestamp
from store.values import MAX_JSON_DEPTH, JsonValue, ValueType, has_nul, json_depth

IDENTIFIER_PATTERN = r"^[A-Za-z0-9_.:@-]{1,200}$"

Identifier = Annotated[str, StringConstraints(pattern=IDENTIFIER_PATTERN)]
"""Tenant, subject, attribute, episode and session ids: 1-200 of ``A-Z a-z 0-9 _ . : @ -``."""

Timestamp = Annotated[
    datetime,
    BeforeValidator(parse_timestamp),
    PlainSerializer(format_timestamp, return_type=str),
]
"""An instant: RFC 3339 with an offset in, UTC with ``Z`` out."""

EpisodeKind = Literal[
    "message", "tool_result", "event", "file", "ticket", "user_confirmation", "inference"
]
MemoryType = Literal["working", "semantic", "episodic", "procedural"]
EqualStartPolicy = Literal["reject", "source_precedence", "confirmed_wins"]
UnverifiedEvidencePolicy = Literal["accept", "refuse"]
"""What becomes of a candidate whose evidence is not in its episode's text: stored and labelled
unverified (``accept``), or refused as ``invalid`` (``refuse``)."""
FactStatus = Literal["current", "past", "future", "retired"]
UpdateStatus = Literal["written", "unchanged", "ignored", "conflict", "invalid", "buffered"]

MAX_TEXT = 100_000
MAX_DESCRIPTION = 2_000


def _refuse_nul(text: str) -> str:
    if "\x00" in text:
        raise ValueError("text must not contain NUL characters")
    return text


def _integer_only(value: object) -> object:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise PydanticCustomError("int_type", "Input should be a valid integer")
    return value


Integer = Annotated[StrictInt, BeforeValidator(_integer_only)]
"""An integer as JSON Schema counts one (5 or 5.0), never true or "5". The HTTP layer
validates bodies in lax mode, which overrides ``StrictInt`` alone."""

SourceRank = Annotated[StrictInt, Field(ge=0, le=100), BeforeValidator(_integer_only)]
"""A rank ``source_precedence`` compares (its bounds inside, so the JSON Schema states them)."""

WeakQuorum = Annotated[StrictInt, Field(ge=1, le=100), BeforeValidator(_integer_only)]
"""How many independent episodes make a weak signal a fact."""

WeakWindowDays = Annotated[StrictInt, Field(ge=1, le=3650), BeforeValidator(_integer_only)]
"""How many days a buffered weak signal waits for support."""
RETENTION_CLASS_RULE = (
    "A retention class the tenant has: ephemeral, session, standard, permanent, or one declared"
    " with PUT /v1/retention-classes/{name}; any other is refused (422, field retention_class)"
)
"""The rule no schema can state: which classes exist depends on what the tenant declared."""
KeepDays = Annotated[StrictInt, Field(ge=0, le=36500), BeforeValidator(_integer_only)]
"""How many days a retention class keeps what it covers (store/retention.py)."""

MAX_METADATA_DEPTH = MAX_JSON_DEPTH
"""How deep episode metadata may nest: what is stored must also serialize when read back."""

NoNul = AfterValidator(_refuse_nul)
"""PostgreSQL text cannot hold NUL: refuse it where it arrives, naming the field."""


def _has_a_word(name: str) -> str:
    if not fold_name(name):
        raise ValueError("a name needs a letter or a digit")
    return name


NAME_RULE = "A name needs a letter or a digit; one of punctuation alone is refused (422)"
"""The rule no schema states portably: which characters Unicode counts as letters."""

SubjectName = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_NAME),
    NoNul,
    AfterValidator(_has_a_word),
    Field(description=NAME_RULE),
]
"""A name a subject is called by: 1-200 characters with a letter or digit (folded for lookup,
``store.names``)."""


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


class EpisodeInput(_Input):
    """A raw input to remember: the source that facts cite."""

    id: Identifier | None = None
    occurred_at: Timestamp
    text: Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEXT), NoNul]
    kind: EpisodeKind = "message"
    session_id: Identifier | None = None
    subjects: list[Identifier] = Field(default_factory=list, max_length=100)
    retention_class: Identifier = Field(default="standard", description=RETENTION_CLASS_RULE)
    metadata: dict[str, Any] = Field(default_factory=dict)
    subject_names: dict[Identifier, SubjectName] = Field(
        default_factory=dict,
        max_length=100,
        json_schema_extra={"propertyNames": {"pattern": IDENTIFIER_PATTERN}},
        description="Names the text writes for subjects, by subject id (each id is added to"
        " subjects); learned as their names when the text contains them",
    )

    def all_subjects(self) -> list[str]:
        """The subjects it names: ``subjects`` and the ids of ``subject_names``, sorted."""
        return sorted({*self.subjects, *self.subject_names})

    @field_validator("metadata")
    @classmethod
    def _metadata_fits(cls, metadata: dict[str, Any]) -> dict[str, Any]:
        # Deeper metadata would be stored, then fail to serialize on every read.
        if json_depth(metadata) > MAX_METADATA_DEPTH:
            raise ValueError(f"metadata may nest at most {MAX_METADATA_DEPTH} levels deep")
        if has_nul(metadata):
            raise ValueError("metadata must not contain NUL characters")
        return metadata


class Episode(BaseModel):
    """A recorded episode; after an erasure or a purge only its stub (id, hash, times, kind)
    remains."""

    id: str
    occurred_at: Timestamp
    recorded_at: Timestamp
    kind: EpisodeKind
    session_id: str | None
    subjects: list[str]
    text: str | None
    content_hash: str
    retention_class: str
    metadata: dict[str, Any]
    erased_at: Timestamp | None
    purged_at: Timestamp | None = Field(
        default=None,
        description="When the retention purge removed its content (text, embeddings); a"
        " purged episode that facts still cite stays as this stub",
    )
    embedding_truncated: bool = Field(
        default=False,
        description="Whether the text ran past the embedding model's input (256 tokens for"
        " all-MiniLM-L6-v2) and its vector stands for its beginning only",
    )


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
        """The version's label (``store.labels``), from its status, dispute and evidence."""
        return version_label(
            status=self.status, disputed=self.disputed, evidence_verified=self.evidence_verified
        ).words
