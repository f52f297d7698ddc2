"""Episodes: the raw inputs facts cite, as sent and as stored."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from store.contract.common import (
    IDENTIFIER_PATTERN,
    MAX_METADATA_DEPTH,
    MAX_TEXT,
    NO_NUL_IN_OBJECT,
    RETENTION_CLASS_RULE,
    EpisodeKind,
    Identifier,
    NoNul,
    SubjectName,
    Timestamp,
)
from store.contract.values import has_nul, json_depth


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid", str_max_length=MAX_TEXT)


class EpisodeInput(_Input):
    """A raw input to remember: the source that facts cite."""

    id: Identifier | None = None
    occurred_at: Timestamp
    text: Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEXT), NoNul]
    kind: EpisodeKind = "message"
    session_id: Identifier | None = None
    subjects: list[Identifier] = Field(default_factory=list, max_length=100)
    retention_class: Identifier = Field(default="standard", description=RETENTION_CLASS_RULE)
    metadata: dict[str, Any] = Field(
        default_factory=dict,
        description=f"A JSON object nested at most {MAX_METADATA_DEPTH} levels; {NO_NUL_IN_OBJECT}",
    )
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
