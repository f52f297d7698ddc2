"""The store's Python API as a surface: ``MemoryStore`` called as the server calls it."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Literal, TypeVar

from store.contract.episodes import Episode
from store.contract.facts import Attribute, Fact
from store.contract.governance import Hold, MigrationResult, RetentionClass
from store.contract.memory import BufferPage, Checkpoint, EpisodeOutcome
from store.contract.procedures import DEFAULT_SCOPE, ActiveProcedure, ProcedureVersion
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
from store.errors import StoreError
from store.service import MemoryStore
from tests.conformance.surfaces import Json, Refused, Surface, new_tenant_name

T = TypeVar("T")


def _scope(scope: str | None) -> str:
    """The scope a call names, the default one when it names none."""
    return DEFAULT_SCOPE if scope is None else scope


class StoreSurface(Surface):
    """``MemoryStore``, called as the server calls it."""

    name = "store"

    def __init__(self, store: MemoryStore, clock: ManualClock) -> None:
        self.store = store
        self.clock = clock
        self.tenant = new_tenant_name(self.name)
        store.admin.create_tenant(self.tenant)

    @contextmanager
    def _refusals(self) -> Iterator[None]:
        try:
            yield
        except StoreError as error:
            raise Refused(str(error.code), error.detail, field=error.field) from error

    def _run(self, call: Callable[[], T]) -> T:
        with self._refusals():
            return call()

    def other(self) -> StoreSurface:
        return StoreSurface(self.store, self.clock)

    def declare_attribute(self, attribute: str, declaration: Json) -> Attribute:
        return self._run(
            lambda: self.store.admin.declare_attribute(self.tenant, attribute, declaration)
        )

    def migrate_attribute(
        self,
        attribute: str,
        change: Json,
        *,
        dry_run: bool = False,
        keep_unconvertible: bool = False,
    ) -> MigrationResult:
        return self._run(
            lambda: self.store.admin.migrate_attribute(
                self.tenant,
                attribute,
                change,
                dry_run=dry_run,
                keep_unconvertible=keep_unconvertible,
            )
        )

    def attributes(self) -> list[Attribute]:
        return self._run(lambda: self.store.admin.list_attributes(self.tenant))

    def record(self, episode: Json, updates: Sequence[Json] = ()) -> list[UpdateResult]:
        # As the route records one episode: its fields named without a prefix.
        [(_, results)] = self._run(
            lambda: self.store.episodes.record_with_candidates(
                self.tenant, [(episode, updates)], field_prefix=""
            )
        )
        return results

    def record_batch(self, episodes: Sequence[Json]) -> list[list[UpdateResult]]:
        batch = [
            ({k: v for k, v in item.items() if k != "updates"}, item.get("updates", []))
            for item in episodes
        ]
        recorded = self._run(lambda: self.store.episodes.record_with_candidates(self.tenant, batch))
        return [results for _, results in recorded]

    def apply(self, episode_id: str, candidates: Sequence[Json]) -> list[UpdateResult]:
        return self._run(
            lambda: self.store.facts.apply_candidates(self.tenant, episode_id, candidates)
        )

    def episode(self, episode_id: str) -> Episode:
        return self._run(lambda: self.store.episodes.get(self.tenant, episode_id))

    def record_outcome(self, episode_id: str, outcome: Json) -> EpisodeOutcome:
        return self._run(lambda: self.store.outcomes.record(self.tenant, episode_id, outcome))

    def outcome(self, episode_id: str) -> EpisodeOutcome:
        return self._run(lambda: self.store.outcomes.current(self.tenant, episode_id))

    def fact(self, subject: str, attribute: str, *, valid_at: str | None = None) -> Fact:
        return self._run(
            lambda: self.store.facts.at(self.tenant, subject, attribute, valid_at=valid_at)
        )

    def history(self, subject: str, attribute: str) -> list[Fact]:
        return self._run(lambda: self.store.facts.history(self.tenant, subject, attribute))

    def expire(
        self, subject: str, attribute: str, *, at: str, source_episode_id: str
    ) -> ExpireResult:
        return self._run(
            lambda: self.store.facts.expire(
                self.tenant, subject, attribute, at=at, source_episode_id=source_episode_id
            )
        )

    def retract(
        self,
        subject: str,
        attribute: str,
        *,
        fact_id: str | None = None,
        valid_from: str | None = None,
    ) -> RetractResult:
        return self._run(
            lambda: self.store.facts.retract(
                self.tenant, subject, attribute, fact_id=fact_id, valid_from=valid_from
            )
        )

    def conflicts(
        self,
        *,
        status: Literal["open", "resolved", "all"] = "open",
        subject: str | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> ConflictPage:
        return self._run(
            lambda: self.store.conflicts.list(
                self.tenant,
                status=None if status == "all" else status,
                subject=subject,
                limit=limit,
                cursor=cursor,
            )
        )

    def resolve_conflict(self, conflict_id: str, choose: str) -> ResolveResult:
        return self._run(
            lambda: self.store.conflicts.resolve(
                self.tenant,
                conflict_id,
                choose=choose,  # type: ignore[arg-type]  # a bad choice must reach the store
            )
        )

    def profile(self, subject: str) -> Profile:
        return self._run(lambda: self.store.subjects.profile(self.tenant, subject))

    def export_subject(self, subject: str) -> SubjectExport:
        return self._run(lambda: self.store.subjects.export(self.tenant, subject))

    def buffer(
        self, *, subject: str | None = None, limit: int = 100, cursor: str | None = None
    ) -> BufferPage:
        return self._run(
            lambda: self.store.weak_signals.list(
                self.tenant, subject=subject, limit=limit, cursor=cursor
            )
        )

    def merge_subject(self, subject: str, *, into: str) -> MergeResult:
        return self._run(lambda: self.store.subjects.merge(self.tenant, subject, into=into))

    def erase_subject(self, subject: str) -> ErasureResult:
        return self._run(lambda: self.store.erasure.erase_subject(self.tenant, subject))

    def erase_episode(self, episode_id: str) -> ErasureResult:
        return self._run(lambda: self.store.erasure.erase_episode(self.tenant, episode_id))

    def retention_classes(self) -> list[RetentionClass]:
        return self._run(lambda: self.store.retention.classes(self.tenant))

    def declare_retention_class(self, name: str, declaration: Json) -> RetentionClass:
        return self._run(lambda: self.store.retention.declare_class(self.tenant, name, declaration))

    def place_legal_hold(self, subject: str) -> Hold:
        return self._run(lambda: self.store.retention.place_hold(self.tenant, subject))

    def release_legal_hold(self, subject: str) -> Hold:
        return self._run(lambda: self.store.retention.release_hold(self.tenant, subject))

    def create_procedure(self, body: Json) -> ProcedureVersion:
        return self._run(lambda: self.store.procedures.create(self.tenant, body))

    def approve_procedure(self, name: str, version: int, approval: Json) -> ProcedureVersion:
        return self._run(
            lambda: self.store.procedures.approve(
                self.tenant, name, version=version, approval=approval
            )
        )

    def activate_procedure(
        self, name: str, version: int, scope: str | None = None
    ) -> ActiveProcedure:
        return self._run(
            lambda: self.store.procedures.activate(
                self.tenant, name, version=version, scope=_scope(scope)
            )
        )

    def roll_back_procedure(self, name: str, scope: str | None = None) -> ActiveProcedure:
        return self._run(
            lambda: self.store.procedures.rollback(self.tenant, name, scope=_scope(scope))
        )

    def active_procedure(self, name: str, scope: str | None = None) -> ActiveProcedure:
        return self._run(
            lambda: self.store.procedures.active(self.tenant, name, scope=_scope(scope))
        )

    def write_checkpoint(self, thread_id: str, body: Json) -> Checkpoint:
        return self._run(
            lambda: self.store.checkpoints.write_checkpoint(self.tenant, thread_id, body)
        )

    def checkpoint(self, thread_id: str, version: int | None = None) -> Checkpoint:
        return self._run(
            lambda: self.store.checkpoints.read_checkpoint(self.tenant, thread_id, version=version)
        )
