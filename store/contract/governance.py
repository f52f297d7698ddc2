"""Governance: retention classes, legal holds, the purge, and attribute migrations."""

from __future__ import annotations

from typing import Annotated, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from store.contract.common import Identifier, KeepDays, NoNul, Timestamp
from store.contract.facts import AttributeDeclaration
from store.contract.values import JsonValue, ValueType

CountsFrom = Literal["recorded", "session_end"]


class RetentionClassDeclaration(BaseModel):
    """What a tenant declares of a class: how long it keeps, counted from when."""

    model_config = ConfigDict(extra="forbid")

    keep_days: KeepDays | None = Field(
        description="Days kept before the purge deletes; null keeps for ever"
    )
    counts_from: CountsFrom = Field(
        default="recorded",
        description="For episodes: `recorded` counts from the episode's recorded_at,"
        " `session_end` from that of the last episode of its session",
    )


class RetentionClass(RetentionClassDeclaration):
    """A class as the tenant has it: a default (``declared_at`` null) or its declaration."""

    name: Identifier
    declared_at: Timestamp | None = None
    updated_at: Timestamp | None = None


DEFAULT_CLASSES: dict[str, RetentionClass] = {
    "ephemeral": RetentionClass(name="ephemeral", keep_days=1),
    "session": RetentionClass(name="session", keep_days=1, counts_from="session_end"),
    "standard": RetentionClass(name="standard", keep_days=365),
    "permanent": RetentionClass(name="permanent", keep_days=None),
}
"""The classes every tenant has unless it overrides them."""


class Hold(BaseModel):
    """A subject's legal hold, placed at ``placed_at``: ``held``, or just ``released``."""

    subject: str
    status: Literal["held", "released"] = "held"
    placed_at: Timestamp


class PurgedFact(BaseModel):
    """A fact every version of which a purge deleted: it existed, and was purged then."""

    fact_id: UUID
    status: Literal["purged"] = "purged"
    purged_at: Timestamp


class TenantPurge(BaseModel):
    """What one tenant's purge deleted (or, dry, would delete), counted."""

    tenant_id: str
    episodes_stubbed: int = 0
    episodes_deleted: int = 0
    vectors_deleted: int = 0
    fact_versions_deleted: int = 0
    facts_purged: int = 0
    receipts_deleted: int = 0
    weak_signals_deleted: int = 0
    extraction_jobs_deleted: int = 0
    tombstone_id: UUID | None = None


class TenantPurgeFailure(BaseModel):
    """A tenant whose purge failed: its transaction rolled back, so nothing of it went."""

    tenant_id: str
    code: str = Field(description="The store's error code (the problem codes' vocabulary)")
    detail: str


class PurgeReport(BaseModel):
    """What a purge of every tenant deleted (or, ``dry_run``, would delete), tenant by tenant.

    A tenant whose purge fails is listed in ``failed`` and the purge goes on with the others.
    """

    dry_run: bool
    tenants: list[TenantPurge]
    failed: list[TenantPurgeFailure] = Field(default_factory=list)


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
