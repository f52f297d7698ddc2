"""The surfaces a conformance scenario runs against, each behind the same small interface.

A scenario speaks the contract's words (bodies as JSON objects, answers as the contract's
models) to a ``Surface``; ``StoreSurface`` (``store_surface.py``) sends them to
``MemoryStore``, ``HttpSurface`` (``http_surface.py``) through ``SGAMClient`` to the app, and
``McpSurface`` (``mcp_surface.py``) the part MCP's tools serve through the MCP SDK's client.
Every refusal comes out as one exception, ``Refused``, with the contract's ``code`` and the
``field`` at fault, whichever surface refused.

Both surfaces act at the system time of the test's clock: the store reads it, the client
sends it as ``X-SGAM-Now``. Write bodies go out as given (no client-side checks), so a bad
body reaches each surface's own validation.
"""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, Literal

from store.contract.episodes import Episode
from store.contract.facts import Attribute, Fact
from store.contract.governance import Hold, MigrationResult, RetentionClass
from store.contract.memory import BufferPage, Checkpoint, EpisodeOutcome
from store.contract.procedures import ActiveProcedure, ProcedureVersion
from store.contract.results import (
    ConflictPage,
    ErasureResult,
    ExpireResult,
    MergeResult,
    Profile,
    ResolveResult,
    RetractResult,
    SubjectExport,
    UpdateResult,
)
from store.db.clock import ManualClock

Json = dict[str, Any]

_tenants = itertools.count(1)


class Refused(Exception):
    """A request a surface refused: the contract's ``code``, the ``field`` at fault, why."""

    def __init__(self, code: str, detail: str, *, field: str | None) -> None:
        super().__init__(f"{code}: {detail} (field {field})")
        self.code = code
        self.detail = detail
        self.field = field

    @property
    def fault(self) -> tuple[str, str | None]:
        """The code and the field, as scenarios compare them."""
        return self.code, self.field


def new_tenant_name(surface: str) -> str:
    """A tenant name of its own for each surface made in the test session."""
    return f"conformance-{surface}-{next(_tenants)}"


class FactSurface(ABC):
    """What every surface offers, MCP's tools included: the schema, episodes with their
    candidates, and the reads of one key."""

    name: str
    tenant: str

    @abstractmethod
    def declare_attribute(self, attribute: str, declaration: Json) -> Attribute:
        """Declare or redeclare an attribute."""

    @abstractmethod
    def record(self, episode: Json, updates: Sequence[Json] = ()) -> list[UpdateResult]:
        """Record an episode and apply the candidates citing it; their results."""

    @abstractmethod
    def fact(self, subject: str, attribute: str, *, valid_at: str | None = None) -> Fact:
        """The value of a key, now or valid at ``valid_at``."""

    @abstractmethod
    def history(self, subject: str, attribute: str) -> list[Fact]:
        """Every version of a key."""


class Surface(FactSurface):
    """The whole API a scenario may call: the store's and the HTTP client's."""

    clock: ManualClock

    @abstractmethod
    def other(self) -> Surface:
        """The same surface on a fresh tenant of its own."""

    @abstractmethod
    def migrate_attribute(
        self,
        attribute: str,
        change: Json,
        *,
        dry_run: bool = False,
        keep_unconvertible: bool = False,
    ) -> MigrationResult:
        """Change an attribute's declaration and convert its facts."""

    @abstractmethod
    def attributes(self) -> list[Attribute]:
        """The tenant's declared attributes."""

    @abstractmethod
    def record_batch(self, episodes: Sequence[Json]) -> list[list[UpdateResult]]:
        """Record episodes (each with its ``updates``) in one transaction; results by episode."""

    @abstractmethod
    def apply(self, episode_id: str, candidates: Sequence[Json]) -> list[UpdateResult]:
        """Apply later candidates citing a recorded episode."""

    @abstractmethod
    def episode(self, episode_id: str) -> Episode:
        """One recorded episode."""

    @abstractmethod
    def record_outcome(self, episode_id: str, outcome: Json) -> EpisodeOutcome:
        """Record what came of an episode."""

    @abstractmethod
    def outcome(self, episode_id: str) -> EpisodeOutcome:
        """An episode's current outcome."""

    @abstractmethod
    def expire(
        self, subject: str, attribute: str, *, at: str, source_episode_id: str
    ) -> ExpireResult:
        """End a key's value at ``at``, citing the episode that said so."""

    @abstractmethod
    def retract(
        self,
        subject: str,
        attribute: str,
        *,
        fact_id: str | None = None,
        valid_from: str | None = None,
    ) -> RetractResult:
        """Withdraw a wrong fact, named by its id or its start."""

    @abstractmethod
    def conflicts(
        self,
        *,
        status: Literal["open", "resolved", "all"] = "open",
        subject: str | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> ConflictPage:
        """A page of conflicts, oldest first."""

    @abstractmethod
    def resolve_conflict(self, conflict_id: str, choose: str) -> ResolveResult:
        """Keep the incumbent or let the challenger replace it."""

    @abstractmethod
    def profile(self, subject: str) -> Profile:
        """Every current fact of a subject."""

    @abstractmethod
    def export_subject(self, subject: str) -> SubjectExport:
        """Everything held about a subject."""

    @abstractmethod
    def buffer(
        self, *, subject: str | None = None, limit: int = 100, cursor: str | None = None
    ) -> BufferPage:
        """A page of the live buffered weak signals."""

    @abstractmethod
    def merge_subject(self, subject: str, *, into: str) -> MergeResult:
        """Fold a duplicate subject into another."""

    @abstractmethod
    def erase_subject(self, subject: str) -> ErasureResult:
        """Erase everything held about a subject."""

    @abstractmethod
    def erase_episode(self, episode_id: str) -> ErasureResult:
        """Erase an episode and retract what it sourced."""

    @abstractmethod
    def retention_classes(self) -> list[RetentionClass]:
        """The tenant's retention classes."""

    @abstractmethod
    def declare_retention_class(self, name: str, declaration: Json) -> RetentionClass:
        """Declare or override a retention class."""

    @abstractmethod
    def place_legal_hold(self, subject: str) -> Hold:
        """Hold a subject's data."""

    @abstractmethod
    def release_legal_hold(self, subject: str) -> Hold:
        """Release a subject's hold."""

    @abstractmethod
    def create_procedure(self, body: Json) -> ProcedureVersion:
        """Write a procedure's next draft."""

    @abstractmethod
    def approve_procedure(self, name: str, version: int, approval: Json) -> ProcedureVersion:
        """Approve a draft."""

    @abstractmethod
    def activate_procedure(
        self, name: str, version: int, scope: str | None = None
    ) -> ActiveProcedure:
        """Activate an approved version in ``scope`` (the default one when None)."""

    @abstractmethod
    def roll_back_procedure(self, name: str, scope: str | None = None) -> ActiveProcedure:
        """Go back to the active version's rollback target."""

    @abstractmethod
    def active_procedure(self, name: str, scope: str | None = None) -> ActiveProcedure:
        """The version served in ``scope``."""

    @abstractmethod
    def write_checkpoint(self, thread_id: str, body: Json) -> Checkpoint:
        """Write a thread's next checkpoint."""

    @abstractmethod
    def checkpoint(self, thread_id: str, version: int | None = None) -> Checkpoint:
        """A thread's latest checkpoint, or ``version``."""
