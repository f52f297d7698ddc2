"""``MemoryStore``: the write path and exact reads behind one object, for the API and replays.

Every call names its tenant explicitly (the caller's credential decides it, never the
payload; ``authenticate`` and ``revoke_api_key`` find it from the key) and runs as one
transaction, retried on deadlock or serialization failure. System time comes from the
injected clock: once per call, or, for a write to a key, once that key's lock is held.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Literal
from uuid import UUID, uuid4

import psycopg

from store import (
    conflicts,
    episodes,
    erasure,
    facts,
    reads,
    resolution,
    retraction,
    subject_reads,
    subjects,
    tenants,
)
from store.admin import AdminStore
from store.clock import Clock, wall_clock
from store.database import make_pool
from store.errors import InvalidInput, NotFound, StoreError
from store.inputs import check_identifier, parse_input, parse_instant, parse_uuid, read_times
from store.migrate import migrate
from store.models import (
    ConflictPage,
    Episode,
    EpisodeInput,
    ErasureResult,
    ExpireResult,
    Fact,
    MemoryUpdate,
    Profile,
    ResolveResult,
    RetractResult,
    SubjectExport,
    SubjectPage,
    UpdateResult,
)
from store.vectors import EpisodeEmbedder, insert_vectors
from store.versions import IdFactory


class MemoryStore(AdminStore):
    """The temporal fact store over one connection pool (administration in ``AdminStore``)."""

    # -- episodes and candidates --------------------------------------------------------

    def record_episode(self, tenant_id: str, episode: EpisodeInput | Mapping[str, Any]) -> Episode:
        """Record a raw episode (idempotent on id), embedded when an embedder is set."""
        [recorded] = self.record_episodes(tenant_id, [episode], field_prefix="")
        return recorded

    def record_episodes(
        self,
        tenant_id: str,
        batch: Sequence[EpisodeInput | Mapping[str, Any]],
        *,
        field_prefix: str = "episodes",
    ) -> list[Episode]:
        """Record several episodes in one transaction, their texts embedded in one call.

        One invalid or conflicting episode fails the whole batch, naming it by index.
        """
        parsed = []
        for index, item in enumerate(batch):
            prefix = f"{field_prefix}.{index}." if field_prefix else ""
            parsed.append(parse_input(EpisodeInput, item, field_prefix=prefix))
        vectors = self.embedder.embed([item.text for item in parsed]) if self.embedder else None

        def work(conn: psycopg.Connection[Any], now: datetime) -> list[Episode]:
            tenants.require_tenant(conn, tenant_id)
            recorded = []
            for index, item in enumerate(parsed):
                try:
                    recorded.append(
                        episodes.record_episode(conn, tenant_id, item, now=now, new_id=self.new_id)
                    )
                except StoreError as error:
                    if field_prefix and error.field:  # name the episode of the batch at fault
                        error.field = f"{field_prefix}.{index}.{error.field}"
                    raise
            if self.embedder is not None and vectors is not None:
                rows = [
                    (episode.id, vector) for episode, vector in zip(recorded, vectors, strict=True)
                ]
                insert_vectors(conn, tenant_id, model=self.embedder.model_id, rows=rows, now=now)
            return recorded

        return self._run(work)

    def get_episode(self, tenant_id: str, episode_id: str) -> Episode:
        """One episode of the tenant (a stub if it was erased)."""
        check_identifier(episode_id, "episode_id")
        return self._run(lambda conn, _: episodes.get_episode(conn, tenant_id, episode_id))

    def apply_updates(
        self, tenant_id: str, episode_id: str, candidates: Sequence[object]
    ) -> list[UpdateResult]:
        """Apply candidates citing one episode, each in its own transaction.

        The source episode and tenant come from this call; a candidate that names either is
        refused as invalid. Results keep the candidates' order.
        """
        check_identifier(episode_id, "episode_id")
        episode = self.get_episode(tenant_id, episode_id)
        results = []
        for index, candidate in enumerate(candidates):
            update = facts.validate_candidate(candidate, index)
            if isinstance(update, UpdateResult):
                results.append(update)
                continue
            results.append(self._apply_one(tenant_id, episode, update, index))
        return results

    def _apply_one(
        self, tenant_id: str, episode: Episode, update: MemoryUpdate, index: int
    ) -> UpdateResult:
        return self._run(
            lambda conn, _: facts.apply_update(
                conn,
                tenant_id,
                episode=episode,
                update=update,
                index=index,
                clock=self.clock,
                new_id=self.new_id,
            )
        )

    def expire(
        self,
        tenant_id: str,
        subject: str,
        attribute: str,
        *,
        at: datetime | str,
        source_episode_id: str,
    ) -> ExpireResult:
        """End the value of a key at ``at``, citing the episode that said it ended."""
        check_identifier(subject, "subject")
        check_identifier(attribute, "attribute")
        check_identifier(source_episode_id, "source_episode_id")
        instant = parse_instant(at, "at")
        assert instant is not None

        def work(conn: psycopg.Connection[Any], _: datetime) -> ExpireResult:
            try:
                source = episodes.get_episode(conn, tenant_id, source_episode_id)
            except NotFound as error:
                raise NotFound(error.detail, field="source_episode_id") from None
            return facts.expire(
                conn,
                tenant_id,
                subject=subject,
                attribute=attribute,
                at=instant,
                source_episode=source,
                clock=self.clock,
                new_id=self.new_id,
            )

        return self._run(work)

    def erase_subject(self, tenant_id: str, subject: str) -> ErasureResult:
        """Delete everything held about a subject; leave a content-free tombstone."""
        check_identifier(subject, "subject")

        def work(conn: psycopg.Connection[Any], now: datetime) -> ErasureResult:
            tenants.require_tenant(conn, tenant_id)
            return erasure.erase_subject(
                conn, tenant_id, subject=subject, now=now, new_id=self.new_id
            )

        return self._run(work)

    def retract(
        self,
        tenant_id: str,
        subject: str,
        attribute: str,
        *,
        fact_id: UUID | str | None = None,
        valid_from: datetime | str | None = None,
    ) -> RetractResult:
        """Withdraw a wrong fact, named by ``fact_id`` or by its ``valid_from``."""
        check_identifier(subject, "subject")
        check_identifier(attribute, "attribute")
        if (fact_id is None) == (valid_from is None):
            raise InvalidInput(
                "name the fact by exactly one of fact_id or valid_from", field="fact_id"
            )
        target = parse_uuid(fact_id, "fact_id") if fact_id is not None else None
        start = parse_instant(valid_from, "valid_from")
        return self._run(
            lambda conn, _: retraction.retract(
                conn,
                tenant_id,
                subject=subject,
                attribute=attribute,
                fact_id=target,
                valid_from=start,
                clock=self.clock,
                new_id=self.new_id,
            )
        )

    def list_conflicts(
        self,
        tenant_id: str,
        *,
        status: Literal["open", "resolved"] | None = "open",
        subject: str | None = None,
        attribute: str | None = None,
        valid_from: datetime | str | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> ConflictPage:
        """A page of conflicts (open ones by default), oldest first."""
        for value, field in ((subject, "subject"), (attribute, "attribute")):
            if value is not None:
                check_identifier(value, field)
        start = parse_instant(valid_from, "valid_from")

        def work(conn: psycopg.Connection[Any], _: datetime) -> ConflictPage:
            found, next_cursor = conflicts.list_conflicts(
                conn,
                tenant_id,
                status=status,
                subject=subject,
                attribute=attribute,
                valid_from=start,
                limit=limit,
                cursor=cursor,
            )
            return ConflictPage(conflicts=found, next_cursor=next_cursor)

        return self._run(work)

    def resolve_conflict(
        self,
        tenant_id: str,
        conflict_id: UUID | str,
        *,
        choose: Literal["incumbent", "challenger"],
    ) -> ResolveResult:
        """Settle a conflict: keep the incumbent, or let the challenger replace it."""
        target = parse_uuid(conflict_id, "conflict_id")
        if choose not in ("incumbent", "challenger"):
            raise InvalidInput("choose must be incumbent or challenger", field="choose")
        return self._run(
            lambda conn, _: resolution.resolve(
                conn,
                tenant_id,
                conflict_id=target,
                choose=choose,
                clock=self.clock,
                new_id=self.new_id,
            )
        )

    def erase_episode(self, tenant_id: str, episode_id: str) -> ErasureResult:
        """Retract the facts an episode sourced, delete it, leave a tombstone."""
        check_identifier(episode_id, "episode_id")
        return self._run(
            lambda conn, now: erasure.erase_episode(
                conn, tenant_id, episode_id=episode_id, now=now, new_id=self.new_id
            )
        )

    # -- exact reads --------------------------------------------------------------------

    def current(self, tenant_id: str, subject: str, attribute: str) -> Fact:
        """The value valid now in current knowledge (NotFound: not known)."""
        return self.at(tenant_id, subject, attribute)

    def at(
        self,
        tenant_id: str,
        subject: str,
        attribute: str,
        *,
        valid_at: datetime | str | None = None,
        known_at: datetime | str | None = None,
    ) -> Fact:
        """The value valid at ``valid_at`` as believed at ``known_at``.

        Both default to now; given only ``known_at``, ``valid_at`` defaults to it ("what did
        we believe on June 2 about June 2").
        """
        check_identifier(subject, "subject")
        check_identifier(attribute, "attribute")
        valid, known = read_times(valid_at, known_at)

        def work(conn: psycopg.Connection[Any], now: datetime) -> Fact:
            known_at_ = known or now
            return reads.read_at(
                conn,
                tenant_id,
                subject=subject,
                attribute=attribute,
                valid_at=valid or known or now,
                known_at=known_at_,
                now=now,
            )

        return self._run(work)

    def subject_memory(
        self,
        tenant_id: str,
        subject: str,
        *,
        valid_at: datetime | str | None = None,
        known_at: datetime | str | None = None,
    ) -> subject_reads.SubjectMemory:
        """A subject's facts at one valid and known time with its whole history, in one read."""
        check_identifier(subject, "subject")
        valid, known = read_times(valid_at, known_at)

        def work(conn: psycopg.Connection[Any], now: datetime) -> subject_reads.SubjectMemory:
            return subject_reads.read_subject_memory(
                conn,
                tenant_id,
                subject=subject,
                valid_at=valid or known or now,
                known_at=known or now,
                now=now,
            )

        return self._run(work)

    def find_subjects(self, tenant_id: str, names: Sequence[str]) -> list[str]:
        """The tenant's subjects among ``names`` (case-insensitive), for question planning."""
        return self._run(lambda conn, _: reads.find_subjects(conn, tenant_id, names=list(names)))

    def history(self, tenant_id: str, subject: str, attribute: str) -> list[Fact]:
        """Every version of a key, by valid_from then recorded_at."""
        check_identifier(subject, "subject")
        check_identifier(attribute, "attribute")
        return self._run(
            lambda conn, now: reads.read_history(
                conn, tenant_id, subject=subject, attribute=attribute, now=now
            )
        )

    def profile(
        self,
        tenant_id: str,
        subject: str,
        *,
        valid_at: datetime | str | None = None,
        known_at: datetime | str | None = None,
    ) -> Profile:
        """Every attribute of a subject at one valid and known time (defaults as ``at``)."""
        check_identifier(subject, "subject")
        valid, known = read_times(valid_at, known_at)

        def work(conn: psycopg.Connection[Any], now: datetime) -> Profile:
            known_at_ = known or now
            valid_at_ = valid or known or now
            found = reads.read_profile(
                conn,
                tenant_id,
                subject=subject,
                valid_at=valid_at_,
                known_at=known_at_,
                now=now,
            )
            return Profile(subject=subject, valid_at=valid_at_, known_at=known_at_, facts=found)

        return self._run(work)

    def list_subjects(
        self, tenant_id: str, *, limit: int = 100, cursor: str | None = None
    ) -> SubjectPage:
        """A page of the tenant's subject ids in byte order (facts held or episodes naming)."""

        def work(conn: psycopg.Connection[Any], _: datetime) -> SubjectPage:
            found, next_cursor = subjects.list_subjects(conn, tenant_id, limit=limit, cursor=cursor)
            return SubjectPage(subjects=found, next_cursor=next_cursor)

        return self._run(work)

    def export_subject(self, tenant_id: str, subject: str) -> SubjectExport:
        """Everything held about a subject: facts now, all versions, episodes, conflicts."""
        check_identifier(subject, "subject")
        return self._run(
            lambda conn, now: subjects.export_subject(conn, tenant_id, subject, now=now)
        )


@contextmanager
def open_store(
    conninfo: str,
    *,
    clock: Clock = wall_clock,
    new_id: IdFactory = uuid4,
    embedder: EpisodeEmbedder | None = None,
    max_connections: int = 10,
) -> Iterator[MemoryStore]:
    """Apply pending migrations on ``conninfo``, open a pool, yield a store, close the pool."""
    with psycopg.connect(conninfo) as conn:
        migrate(conn)
    pool = make_pool(conninfo, max_size=max_connections)
    with pool:
        pool.wait()
        yield MemoryStore(pool, clock=clock, new_id=new_id, embedder=embedder)
