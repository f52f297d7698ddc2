"""Attribute migrations in JSON's words: the change asked for and what it does to the facts."""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

from pydantic import BaseModel, Field, StringConstraints

from store.models import AttributeDeclaration, NoNul, Timestamp
from store.values import JsonValue, ValueType

MapText = Annotated[str, StringConstraints(min_length=1, max_length=10_000), NoNul]


class AttributeChange(AttributeDeclaration):
    """The new declaration of an attribute, as a migration takes it (a rename names it in
    ``attribute``), with an optional map of old values to new ones."""

    value_map: dict[MapText, MapText] = Field(
        default_factory=dict,
        max_length=1000,
        description="Old value (as text: strings bare, numbers and JSON compact, booleans"
        " true/false) to the new value's text, parsed by the new value_type; e.g."
        ' {"silver": "standard"} when an enum member is removed',
    )


class MigrationRequest(AttributeChange):
    """``POST /v1/attributes/{attribute}/migrations``: the new declaration and how to run."""

    dry_run: bool = Field(default=False, description="Report what would change; change nothing")
    keep_unconvertible: bool = Field(
        default=False,
        description="Leave values that cannot convert under the old declaration (flagged in the"
        " answer) instead of refusing the whole migration",
    )


class ConvertedValue(BaseModel):
    """A current version rewritten under the new declaration (same fact_id)."""

    fact_id: UUID
    version_id: UUID
    subject: str
    value: JsonValue
    converted_value: JsonValue


class UnconvertibleValue(BaseModel):
    """A current version whose value the new declaration cannot hold, and why."""

    fact_id: UUID
    version_id: UUID
    subject: str
    value: JsonValue
    reason: str


class MigrationResult(BaseModel):
    """What a migration did (or, on a dry run, would do) to one attribute of one tenant."""

    migration_id: UUID | None = Field(description="Null on a dry run")
    dry_run: bool
    attribute: str = Field(description="The attribute's name after the migration")
    migrated_from: str | None = Field(description="The old name of a rename; null otherwise")
    from_schema_version: int
    schema_version: int
    from_value_type: ValueType
    value_type: ValueType
    converted: list[ConvertedValue]
    unconvertible: list[UnconvertibleValue]
    kept_unconvertible: bool = Field(
        description="Whether the unconvertible values stay under the old declaration (they"
        " keep their old schema_version and, on a rename, their old name)"
    )
    dual_read_until: Timestamp | None = Field(
        description="Until when the old name of a rename still reads and writes the new one"
    )
