"""The surfaces a conformance scenario runs against, each behind the same small interface.

A scenario speaks the contract's words (bodies as JSON objects, answers as the contract's
models) to a ``Surface``; ``StoreSurface`` sends them to ``MemoryStore``, ``HttpSurface``
through ``SGAMClient`` to the app. Every refusal comes out as one exception, ``Refused``, with
the contract's ``code`` and the ``field`` at fault, whichever surface refused.

Both surfaces act at the system time of the test's clock: the store reads it, the client
sends it as ``X-SGAM-Now``. Write bodies go out as given (no client-side checks), so a bad
body reaches each surface's own validation.
"""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, TypeVar

import httpx

from server.client import SGAMClient, SGAMError
from server.client import calls as routes
from server.client import checkpoint_calls as checkpoint_routes
from server.client import procedure_calls as procedure_routes
from server.client import read_calls as read_routes
from server.client import retention_calls as retention_routes
from server.client import weak_signal_calls as weak_signal_routes
from server.client.call import Call
from store.contract.episodes import Episode
from store.contract.facts import Attribute, Fact
from store.contract.governance import Hold, MigrationResult, RetentionClass
from store.contract.memory import BufferPage, Checkpoint
from store.contract.procedures import DEFAULT_SCOPE, ActiveProcedure, ProcedureVersion
from store.contract.results import (
    ErasureResult,
    MergeResult,
    Profile,
    SubjectExport,
    UpdateResult,
)
from store.db.clock import ManualClock
from store.errors import StoreError
from store.service import MemoryStore
from tests.conftest import ADMIN_TOKEN

T = TypeVar("T")
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

    def fact(self, subject: str, attribute: str, *, valid_at: str | None = None) -> Fact:
        return self._run(
            lambda: self.store.facts.at(self.tenant, subject, attribute, valid_at=valid_at)
        )

    def history(self, subject: str, attribute: str) -> list[Fact]:
        return self._run(lambda: self.store.facts.history(self.tenant, subject, attribute))

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


def _as_sent(call: Call[T], body: Any) -> Call[T]:
    """The route's call with ``body`` as given, unchecked, in place of the one it built."""
    return replace(call, body=body)


class HttpSurface(Surface):
    """``SGAMClient`` against the app, with a tenant and key made through the admin API."""

    name = "http"

    def __init__(self, http: httpx.Client, clock: ManualClock) -> None:
        self.http = http
        self.clock = clock
        base_url = str(http.base_url)
        self.tenant = new_tenant_name(self.name)
        with SGAMClient(base_url, admin_token=ADMIN_TOKEN, http=http) as admin:
            admin.create_tenant(self.tenant)
            key = admin.create_key(self.tenant)
        self.client = SGAMClient(base_url, key.api_key, http=http)

    def _send(self, call: Call[T]) -> T:
        try:
            return self.client.with_now(self.clock()).send(call)
        except SGAMError as error:
            raise Refused(error.code, error.detail, field=error.field) from error

    def other(self) -> HttpSurface:
        return HttpSurface(self.http, self.clock)

    def declare_attribute(self, attribute: str, declaration: Json) -> Attribute:
        return self._send(_as_sent(routes.declare_attribute(attribute, ""), declaration))

    def migrate_attribute(
        self,
        attribute: str,
        change: Json,
        *,
        dry_run: bool = False,
        keep_unconvertible: bool = False,
    ) -> MigrationResult:
        return self._send(
            routes.migrate_attribute(
                attribute, change, dry_run=dry_run, keep_unconvertible=keep_unconvertible
            )
        )

    def attributes(self) -> list[Attribute]:
        return self._send(routes.attributes()).attributes

    def record(self, episode: Json, updates: Sequence[Json] = ()) -> list[UpdateResult]:
        call = routes.record_episode("", "")
        return self._send(_as_sent(call, {**episode, "updates": list(updates)})).results

    def record_batch(self, episodes: Sequence[Json]) -> list[list[UpdateResult]]:
        recorded = self._send(_as_sent(routes.record_batch([]), {"episodes": list(episodes)}))
        return [episode.results for episode in recorded.episodes]

    def apply(self, episode_id: str, candidates: Sequence[Json]) -> list[UpdateResult]:
        return self._send(routes.apply_candidates(episode_id, candidates)).results

    def episode(self, episode_id: str) -> Episode:
        return self._send(routes.episode(episode_id))

    def fact(self, subject: str, attribute: str, *, valid_at: str | None = None) -> Fact:
        return self._send(routes.fact(subject, attribute, valid_at=valid_at))

    def history(self, subject: str, attribute: str) -> list[Fact]:
        return self._send(routes.history(subject, attribute))

    def profile(self, subject: str) -> Profile:
        return self._send(read_routes.profile(subject))

    def export_subject(self, subject: str) -> SubjectExport:
        return self._send(read_routes.export_subject(subject))

    def buffer(
        self, *, subject: str | None = None, limit: int = 100, cursor: str | None = None
    ) -> BufferPage:
        return self._send(weak_signal_routes.buffer(subject=subject, limit=limit, cursor=cursor))

    def merge_subject(self, subject: str, *, into: str) -> MergeResult:
        return self._send(read_routes.merge_subject(subject, into=into))

    def erase_subject(self, subject: str) -> ErasureResult:
        return self._send(read_routes.erase_subject(subject))

    def erase_episode(self, episode_id: str) -> ErasureResult:
        return self._send(routes.erase_episode(episode_id))

    def retention_classes(self) -> list[RetentionClass]:
        return self._send(retention_routes.retention_classes()).classes

    def declare_retention_class(self, name: str, declaration: Json) -> RetentionClass:
        call = retention_routes.declare_retention_class(name, None)
        return self._send(_as_sent(call, declaration))

    def place_legal_hold(self, subject: str) -> Hold:
        return self._send(retention_routes.place_legal_hold(subject))

    def release_legal_hold(self, subject: str) -> Hold:
        return self._send(retention_routes.release_legal_hold(subject))

    def create_procedure(self, body: Json) -> ProcedureVersion:
        return self._send(_as_sent(procedure_routes.create_procedure(""), body))

    def approve_procedure(self, name: str, version: int, approval: Json) -> ProcedureVersion:
        call = procedure_routes.approve_procedure(name, version, approver="", policy="")
        return self._send(_as_sent(call, approval))

    def activate_procedure(
        self, name: str, version: int, scope: str | None = None
    ) -> ActiveProcedure:
        return self._send(procedure_routes.activate_procedure(name, version, scope=scope))

    def roll_back_procedure(self, name: str, scope: str | None = None) -> ActiveProcedure:
        return self._send(procedure_routes.roll_back_procedure(name, scope=scope))

    def active_procedure(self, name: str, scope: str | None = None) -> ActiveProcedure:
        return self._send(procedure_routes.active_procedure(name, scope=scope))

    def write_checkpoint(self, thread_id: str, body: Json) -> Checkpoint:
        return self._send(_as_sent(checkpoint_routes.write_checkpoint(thread_id), body))

    def checkpoint(self, thread_id: str, version: int | None = None) -> Checkpoint:
        return self._send(checkpoint_routes.checkpoint(thread_id, version=version))
