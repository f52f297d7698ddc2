"""The HTTP client as a surface: ``SGAMClient`` against the app, each call at the test
clock's time (``X-SGAM-Now``), each write body sent as given."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Literal, TypeVar

import httpx

from server.client import SGAMClient, SGAMError
from server.client import calls as routes
from server.client import checkpoint_calls as checkpoint_routes
from server.client import episodic_calls as episodic_routes
from server.client import procedure_calls as procedure_routes
from server.client import read_calls as read_routes
from server.client import retention_calls as retention_routes
from server.client import weak_signal_calls as weak_signal_routes
from server.client.call import Call
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
from tests.conformance.surfaces import Json, Refused, Surface, new_tenant_name
from tests.conftest import ADMIN_TOKEN

T = TypeVar("T")


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

    def record_outcome(self, episode_id: str, outcome: Json) -> EpisodeOutcome:
        call = episodic_routes.record_outcome(episode_id, "unknown")
        return self._send(_as_sent(call, outcome))

    def outcome(self, episode_id: str) -> EpisodeOutcome:
        return self._send(episodic_routes.outcome(episode_id))

    def fact(self, subject: str, attribute: str, *, valid_at: str | None = None) -> Fact:
        return self._send(routes.fact(subject, attribute, valid_at=valid_at))

    def history(self, subject: str, attribute: str) -> list[Fact]:
        return self._send(routes.history(subject, attribute))

    def expire(
        self, subject: str, attribute: str, *, at: str, source_episode_id: str
    ) -> ExpireResult:
        return self._send(
            routes.expire(subject, attribute, at=at, source_episode_id=source_episode_id)
        )

    def retract(
        self,
        subject: str,
        attribute: str,
        *,
        fact_id: str | None = None,
        valid_from: str | None = None,
    ) -> RetractResult:
        return self._send(
            routes.retract(subject, attribute, fact_id=fact_id, valid_from=valid_from)
        )

    def conflicts(
        self,
        *,
        status: Literal["open", "resolved", "all"] = "open",
        subject: str | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> ConflictPage:
        return self._send(
            read_routes.conflicts(status=status, subject=subject, limit=limit, cursor=cursor)
        )

    def resolve_conflict(self, conflict_id: str, choose: str) -> ResolveResult:
        call = read_routes.resolve_conflict(conflict_id, "incumbent")
        return self._send(_as_sent(call, {"choose": choose}))

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
