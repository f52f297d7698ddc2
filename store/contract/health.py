"""What a decision expected of memory, the evidence judged, and the verdict given.

An expectation names one memory by its own words (a subject and attribute, a thread, an
episode, a procedure); the classifier turns them into the hashes receipts carry with
``store.contract.receipts`` and never prints them back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from store.contract.common import Identifier, Integer, MemoryType
from store.contract.receipts import (
    LEGACY_SECRET_VERSION,
    OWNER_KINDS,
    Keyring,
    Receipt,
    memory_key,
    procedure_owner,
    scope_hash,
)

VerdictCode = Literal[
    "UNKNOWN",
    "WRITE_MISSING",
    "READ_MISSING",
    "SCOPE_MISMATCH",
    "STALE",
    "NO_PROVENANCE",
    "NOT_ACTIVATED",
    "CONTINUITY_LOST",
    "SUPERSEDED",
    "OUTCOMELESS_EPISODE",
    "UNSAFE_PROCEDURE",
    "HEALTHY",
]
Layer = Literal[
    "available",
    "written",
    "read",
    "scope",
    "freshness",
    "provenance",
    "activated",
    "invariant",
    "healthy",
]
OperatingState = Literal[
    "healthy", "investigate_execution", "degraded_dependency", "fix_memory_first", "uncertain"
]
TaskOutcome = Literal["verified", "missing"]


# JSON integers only (never true or "5"); bounds after a validator are pydantic's own keywords,
# so the schema states them itself.
CheckpointVersion = Annotated[
    Integer, Field(ge=1), WithJsonSchema({"type": "integer", "minimum": 1})
]
BudgetSeconds = Annotated[Integer, Field(ge=0), WithJsonSchema({"type": "integer", "minimum": 0})]


class _MemoryRef(BaseModel):
    """A memory named by the caller's own identifiers; hashed before any comparison."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def _parts(self) -> tuple[MemoryType, str, str | None]:
        """The memory's type, its own key and its owner (None: the tenant's)."""
        raise NotImplementedError

    def memory_key(self, *, secret: bytes) -> str:
        """The hash a receipt of this memory made with ``secret`` carries as ``memory_key``."""
        memory_type, key, _ = self._parts()
        return memory_key(memory_type, key, secret=secret)

    def scope_hash(self, tenant_id: str, scope: str | None, *, secret: bytes) -> str:
        """The scope hash a receipt of this memory made with ``secret`` must observe for
        ``tenant_id`` and the caller's ``scope`` string."""
        memory_type, _, owner = self._parts()
        return scope_hash(tenant_id, OWNER_KINDS[memory_type], owner, scope, secret=secret)


class SemanticMemory(_MemoryRef):
    """A fact: one attribute of one subject."""

    type: Literal["semantic"]
    subject: Identifier = Field(description="The subject the fact is about (its owner)")
    attribute: Identifier = Field(description="The attribute (the memory's key)")

    def _parts(self) -> tuple[MemoryType, str, str | None]:
        return "semantic", self.attribute, self.subject


class WorkingMemory(_MemoryRef):
    """A thread's checkpointed state."""

    type: Literal["working"]
    thread: Identifier = Field(description="The thread (both the memory's key and its owner)")
    version: CheckpointVersion | None = Field(
        default=None,
        description="The checkpoint version the decision must have read; null: the latest"
        " written before the read",
    )

    def _parts(self) -> tuple[MemoryType, str, str | None]:
        return "working", self.thread, self.thread


class EpisodicMemory(_MemoryRef):
    """A past attempt used as experience; its scope is the tenant's."""

    type: Literal["episodic"]
    episode_id: Identifier = Field(description="The episode's id (the memory's key)")

    def _parts(self) -> tuple[MemoryType, str, str | None]:
        return "episodic", self.episode_id, None


class ProceduralMemory(_MemoryRef):
    """A procedure, active in one activation scope."""

    type: Literal["procedural"]
    procedure: Identifier = Field(description="The procedure's name (the memory's key)")
    activation_scope: Identifier = Field(
        default="default", description="The scope the procedure must be active in"
    )

    def _parts(self) -> tuple[MemoryType, str, str | None]:
        return "procedural", self.procedure, procedure_owner(self.procedure, self.activation_scope)


MemoryRef = Annotated[
    SemanticMemory | WorkingMemory | EpisodicMemory | ProceduralMemory,
    Field(discriminator="type"),
]


class Expectation(BaseModel):
    """One memory a decision needed, and what the decision's own task achieved."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    decision_id: UUID = Field(description="The decision the memory had to reach")
    memory: MemoryRef = Field(description="The memory expected, chosen by its `type`")
    scope: Identifier | None = Field(
        default=None,
        description="The caller's scope string (as in X-SGAM-Scope, e.g. project:acme); null: none",
    )
    freshness_budget_s: BudgetSeconds | None = Field(
        default=None,
        description="The oldest, in seconds, the version read may have been when read; null:"
        " the budget the read itself recorded",
    )
    task_outcome: TaskOutcome | None = Field(
        default=None,
        description="The task's own, separately verified outcome; null counts as missing",
    )


class Verdict(BaseModel):
    """The health of one expected memory: the first layer that failed, or HEALTHY."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    decision_id: UUID = Field(description="The decision judged")
    memory_type: MemoryType = Field(description="The type of the memory expected")
    verdict: VerdictCode = Field(description="The first failing layer's code, or HEALTHY")
    layer: Layer = Field(description="The layer that failed; healthy when none did")
    receipt_id: UUID | None = Field(
        description="The read receipt judged; null when no read reached a receipt-level layer"
    )
    detail: str = Field(
        description="Why, in codes, counts and seconds only: never a subject, attribute,"
        " thread, episode or procedure name"
    )
    operating_state: OperatingState = Field(
        description="Memory health crossed with the task outcome: what to do next"
    )


class HealthFile(BaseModel):
    """Offline classifier input: one tenant's receipts and the expectations to judge."""

    model_config = ConfigDict(extra="forbid")

    tenant_id: str = Field(min_length=1, description="The tenant the receipts belong to")
    available: bool = Field(
        default=True,
        description="Whether the memory subsystem could be observed at all; false: UNKNOWN",
    )
    receipts: list[Receipt] = Field(description="Write and read receipts, in any order")
    expectations: list[Expectation] = Field(description="The memories decisions expected")

    def evidence(self) -> Evidence:
        """The file's receipts and availability as classifier evidence."""
        return Evidence(available=self.available, receipts=tuple(self.receipts))


@dataclass(frozen=True)
class Evidence:
    """What the classifier may look at: receipts, whether they could be collected, and the
    tenant's receipt secrets by version, which their hashes were made with (by default only
    version 0's: receipts made before secrets, as offline files hold)."""

    available: bool
    receipts: Sequence[Receipt]
    keyring: Keyring = field(default_factory=lambda: {LEGACY_SECRET_VERSION: b""})


MAX_EXPECTATIONS = 100
"""The most expectations one request may carry."""


class ClassifyRequest(BaseModel):
    """The expectations to judge against the tenant's receipts."""

    model_config = ConfigDict(extra="forbid")

    expectations: list[Expectation] = Field(
        min_length=1,
        max_length=MAX_EXPECTATIONS,
        description=f"1 to {MAX_EXPECTATIONS} expectations, each judged on its own",
    )


class ClassifyResult(BaseModel):
    """One verdict per expectation, in the expectations' order."""

    verdicts: list[Verdict]
    evidence_available: bool = Field(
        description="False when the receipts could not be read: every verdict is then UNKNOWN"
    )
