"""Procedural memory's vocabulary: what a client sends and what it reads back."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
    model_validator,
)

from store.contract.common import (
    MAX_METADATA_DEPTH,
    NO_NUL_IN_OBJECT,
    NO_NUL_PATTERN,
    Identifier,
    NoNul,
    Timestamp,
)
from store.contract.values import check_stored_object

MAX_VERSION = 2**31 - 1
"""The last version a procedure can reach (the column is a PostgreSQL integer)."""
MAX_STEPS = 100_000
"""The most characters a version's steps may take."""
MAX_DEFINITION_BYTES = 256 * 1024
"""The most a version's definition may take as compact JSON."""
DEFAULT_SCOPE = "default"


def _given(value: object) -> object:
    # A default is not validated: this refuses only an explicit null, which names no body.
    if value is None:
        raise ValueError("give a value, or leave this field out")
    return value


def _definition_fits(definition: dict[str, Any]) -> dict[str, Any]:
    check_stored_object(
        definition, "definition", max_depth=MAX_METADATA_DEPTH, max_bytes=MAX_DEFINITION_BYTES
    )
    return definition


Steps = Annotated[
    Annotated[str, Field(min_length=1, max_length=MAX_STEPS), NoNul] | None,
    BeforeValidator(_given),
    WithJsonSchema(
        {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_STEPS,
            "pattern": NO_NUL_PATTERN,
            "description": "The steps as text",
        }
    ),
]
Definition = Annotated[
    Annotated[dict[str, Any], AfterValidator(_definition_fits)] | None,
    BeforeValidator(_given),
    WithJsonSchema(
        {
            "type": "object",
            "description": f"The procedure as a JSON object of at most {MAX_DEFINITION_BYTES}"
            f" bytes, nested at most {MAX_METADATA_DEPTH} levels; {NO_NUL_IN_OBJECT}",
        }
    ),
]


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ProcedureInput(_Input):
    """A new draft version of a procedure: its steps, its definition, or both."""

    model_config = ConfigDict(
        json_schema_extra={"anyOf": [{"required": ["steps"]}, {"required": ["definition"]}]}
    )

    name: Identifier
    steps: Steps = None
    definition: Definition = None

    @model_validator(mode="after")
    def _has_a_body(self) -> ProcedureInput:
        if self.steps is None and self.definition is None:
            raise ValueError("a procedure version needs steps, a definition, or both")
        return self


class ApprovalInput(_Input):
    """Who approved a version, under which policy, with which evaluation."""

    approver: Identifier = Field(description="Who approved it")
    policy: Identifier = Field(description="The policy it was approved under")
    evaluation_ref: Identifier | None = Field(
        default=None, description="The evaluation that supports it; null when none"
    )


class ActivationInput(_Input):
    """Where to make an approved version the active one."""

    scope: Identifier = DEFAULT_SCOPE


class RollbackInput(_Input):
    """Where to put the version active before the current one back."""

    scope: Identifier = DEFAULT_SCOPE


class ProcedureVersion(BaseModel):
    """One version of a procedure; an approved one records its approval."""

    name: str
    version: int
    status: Literal["draft", "approved"]
    steps: str | None
    definition: dict[str, Any] | None
    created_at: Timestamp
    approver: str | None
    policy: str | None
    evaluation_ref: str | None
    approved_at: Timestamp | None


class ActiveProcedure(ProcedureVersion):
    """The version active in a scope: always an approved one."""

    scope: str
    activated_at: Timestamp = Field(description="When it last became the active version")
    rollback_target: int | None = Field(
        description="The version a rollback in this scope makes active again; null when none"
    )
