"""Working, episodic and weak memory: thread checkpoints, outcomes, extraction jobs and the
buffer of weak signals, as they are written and read back."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    WithJsonSchema,
    field_validator,
)
from pydantic_core import PydanticCustomError

from store.contract.common import (
    MAX_METADATA_DEPTH,
    MAX_TEXT,
    NO_NUL_IN_OBJECT,
    Identifier,
    Integer,
    Timestamp,
)
from store.contract.values import JsonValue, check_stored_object

MAX_VERSION = 2**31 - 1
"""The last version a thread can reach (the column is a PostgreSQL integer)."""


MAX_STATE_BYTES = 64 * 1024
"""The most a checkpoint's state may take as compact JSON: working memory, not an archive."""


ExpectedVersion = Annotated[
    Integer,
    Field(ge=0, le=MAX_VERSION),
    # Bounds after a validator are written as pydantic's own keywords: state them as JSON Schema.
    WithJsonSchema({"type": "integer", "minimum": 0, "maximum": MAX_VERSION}),
]


class CheckpointWrite(BaseModel):
    """A thread's next checkpoint; with ``expected_version``, written only over that version."""

    model_config = ConfigDict(extra="forbid", str_max_length=MAX_TEXT)

    active_goal_id: Identifier | None = Field(
        default=None, description="The goal the thread is pursuing; null when none"
    )
    pending_dependency: Identifier | None = Field(
        default=None, description="What the thread waits on before its next step; null when none"
    )
    state: dict[str, Any] = Field(
        default_factory=dict,
        description=f"Whatever else the next step needs: a JSON object of at most"
        f" {MAX_STATE_BYTES} bytes, nested at most {MAX_METADATA_DEPTH} levels;"
        f" {NO_NUL_IN_OBJECT}",
    )
    expected_version: ExpectedVersion | None = Field(
        default=None,
        description="Compare-and-set: the version this write follows (0 for a thread without"
        " checkpoints); any other latest version answers 409 naming this field",
    )

    @field_validator("state")
    @classmethod
    def _state_fits(cls, state: dict[str, Any]) -> dict[str, Any]:
        check_stored_object(state, "state", max_depth=MAX_METADATA_DEPTH, max_bytes=MAX_STATE_BYTES)
        return state


class Checkpoint(BaseModel):
    """One version of a thread's checkpoint, as written."""

    thread_id: str
    version: int
    active_goal_id: str | None
    pending_dependency: str | None
    state: dict[str, Any]
    written_at: Timestamp


OutcomeStatus = Literal["succeeded", "failed", "partial", "unknown"]


def _bool_only(value: object) -> object:
    if not isinstance(value, bool):
        raise PydanticCustomError("bool_type", "Input should be a valid boolean")
    return value


Flag = Annotated[StrictBool, BeforeValidator(_bool_only)]
"""true or false, never "true" or 1 (the HTTP layer validates bodies in lax mode)."""


class OutcomeInput(BaseModel):
    """What came of an episode, as the caller observed it."""

    model_config = ConfigDict(extra="forbid")

    status: OutcomeStatus
    outcome_receipt_id: Identifier | None = Field(
        default=None, description="The receipt that proves the outcome, when there is one"
    )
    verified: Flag = Field(
        default=False, description="Whether the outcome was checked, not just reported"
    )
    human_intervened: Flag = Field(
        default=False, description="Whether a person stepped in to reach it"
    )
    budget_exhausted: Flag = Field(
        default=False, description="Whether the task ran out of its budget"
    )


class EpisodeOutcome(BaseModel):
    """An episode's outcome as stored: ``revision`` counts the outcomes it was given."""

    episode_id: str
    revision: int
    status: OutcomeStatus
    outcome_receipt_id: str | None
    verified: bool
    human_intervened: bool
    budget_exhausted: bool
    recorded_at: Timestamp
    observed: bool = Field(
        description="Whether the outcome was observed (any status but unknown): only an"
        " observed outcome makes the episode experience"
    )


JobStatus = Literal["queued", "failed", "done", "dead"]


class CandidateOutcome(BaseModel):
    """What came of one extracted candidate: its result status and reason, never its values."""

    index: int
    status: str
    reason: str | None = None


class ExtractionState(BaseModel):
    """An episode's extraction job, without content."""

    status: JobStatus = Field(
        description="queued (waiting), failed (an attempt failed; another is due at run_after),"
        " done, or dead (attempts spent; POST .../extraction/retry requeues it)"
    )
    prompt_version: str
    attempts: int
    queued_at: datetime
    run_after: datetime
    finished_at: datetime | None
    last_error: str | None = Field(description="The last failure's class, without content")
    candidates: list[CandidateOutcome] = Field(
        default_factory=list, description="Each extracted candidate's result (status, reason)"
    )


class BufferedSignal(BaseModel):
    """A weak candidate waiting in the buffer for independent support."""

    signal_id: UUID
    subject: str
    attribute: str
    value: JsonValue
    episode_id: str
    content_hash: str
    evidence: str | None
    evidence_verified: bool
    valid_from: Timestamp
    buffered_at: Timestamp
    expires_at: Timestamp


class BufferPage(BaseModel):
    """One page of live buffered signals, oldest first, and the cursor of the next page."""

    signals: list[BufferedSignal]
    next_cursor: str | None
