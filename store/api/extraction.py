"""Extraction jobs: claim them, read what an extractor needs, finish them, requeue dead ones.

The extractor itself (a model call) is not the store's: a worker claims a job, ``begin`` gives
it the episode with its subjects' current facts and the declared attributes, it calls the
model outside any transaction, then ``complete`` sends the candidates down the normal write path
(``store.facts.candidates``) and marks the job done in one transaction of the job's tenant, at the
system time of that write. Each step checks the caller still holds the job's lease.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import psycopg

from store.api.transactions import Transactions
from store.attributes import registry as attributes
from store.contract.episodes import Episode
from store.contract.facts import Attribute, Fact
from store.contract.memory import ExtractionState, JobStatus
from store.contract.results import UpdateResult
from store.db.inputs import check_identifier
from store.episodes import extraction
from store.episodes import record as episodes
from store.episodes.extraction import Claim
from store.errors import Conflict, NotFound
from store.facts import reads
from store.facts.candidates import send_candidates
from store.facts.writes import validate_candidate

Backoff = Callable[[int], timedelta]
"""The wait before the next try, given the attempts made so far."""


@dataclass(frozen=True, slots=True)
class ExtractionInput:
    """What an extractor is given: the episode, its subjects' current facts, the attributes."""

    episode: Episode
    facts: list[Fact]
    attributes: list[Attribute]


class ExtractionCalls:
    """The extraction queue over the store's transactions."""

    def __init__(self, transactions: Transactions) -> None:
        self._transactions = transactions

    def claim(self, *, wanted: int, lease: timedelta) -> list[Claim]:
        """Lease at most ``wanted`` due jobs, of any tenant (another worker skips them)."""
        return self._transactions.run(
            lambda conn, now: extraction.claim(conn, wanted=wanted, now=now, lease=lease),
            tenant_id=None,
        )

    def begin(self, job: Claim) -> ExtractionInput | None:
        """What the extractor needs for a held job; None when the lease was lost."""

        def work(conn: psycopg.Connection[Any], now: datetime) -> ExtractionInput | None:
            if extraction.hold(conn, job, now=now) is None:
                return None
            episode = episodes.get_episode(conn, job.tenant_id, job.episode_id)
            facts = [
                fact
                for subject in episode.subjects
                for fact in reads.read_profile(
                    conn,
                    job.tenant_id,
                    subject=subject,
                    valid_at=max(episode.occurred_at, now),
                    known_at=now,
                    now=now,
                )
            ]
            declared = attributes.list_attributes(conn, job.tenant_id)
            return ExtractionInput(episode=episode, facts=facts, attributes=declared)

        return self._transactions.run(work, tenant_id=job.tenant_id)

    def complete(self, job: Claim, candidates: Sequence[object]) -> list[UpdateResult] | None:
        """Write a held job's candidates citing its episode and mark it done, in one
        transaction; one result per candidate, or None (nothing written) when the lease was
        lost."""
        checked = [validate_candidate(candidate, n) for n, candidate in enumerate(candidates)]
        transactions = self._transactions

        def work(conn: psycopg.Connection[Any], now: datetime) -> list[UpdateResult] | None:
            if extraction.hold(conn, job, now=transactions.clock()) is None:
                return None
            results: list[UpdateResult] = []
            if checked:
                results = send_candidates(
                    conn,
                    job.tenant_id,
                    episode_id=job.episode_id,
                    candidates=checked,
                    clock=transactions.clock,
                    asked_at=now,
                    new_id=transactions.new_id,
                )()
            extraction.finish_done(conn, job, results, now=transactions.clock())
            return results

        return transactions.run(work, tenant_id=job.tenant_id)

    def fail(
        self, job: Claim, error: str, *, max_attempts: int, backoff: Backoff
    ) -> JobStatus | None:
        """Record a held job's failed attempt (``error`` names its class, never content):
        ``failed`` and retried after ``backoff``, or ``dead``; None when the lease was lost."""

        def work(conn: psycopg.Connection[Any], now: datetime) -> JobStatus | None:
            attempts = extraction.hold(conn, job, now=now)
            if attempts is None:
                return None
            return extraction.finish_failed(
                conn,
                job,
                error=error,
                now=now,
                max_attempts=max_attempts,
                backoff=backoff(attempts),
            )

        return self._transactions.run(work, tenant_id=job.tenant_id)

    def retry(self, tenant_id: str, episode_id: str) -> ExtractionState:
        """Requeue the episode's dead extraction: 404 for an unknown episode, 409 when its
        extraction is not dead (or it has none)."""
        check_identifier(episode_id, "episode_id")

        def work(conn: psycopg.Connection[Any], now: datetime) -> ExtractionState:
            episodes.get_episode(conn, tenant_id, episode_id)  # NotFound when unknown
            before = extraction.requeue_dead(conn, tenant_id, episode_id, now=now)
            if before is None:
                raise Conflict(
                    f"episode {episode_id!r} was not sent for extraction", field="episode_id"
                )
            if before != "dead":
                raise Conflict(
                    f"episode {episode_id!r}'s extraction is {before}, not dead", field="episode_id"
                )
            state = extraction.job_state(conn, tenant_id, episode_id)
            if state is None:  # pragma: no cover - the row was just updated under its lock
                raise NotFound(f"episode {episode_id!r} has no extraction", field="episode_id")
            return state

        return self._transactions.run(work, tenant_id=tenant_id)

    def state(self, tenant_id: str, episode_id: str) -> ExtractionState | None:
        """The episode's extraction state, None when it was never sent for extraction."""
        check_identifier(episode_id, "episode_id")
        return self._transactions.run(
            lambda conn, _: extraction.job_state(conn, tenant_id, episode_id), tenant_id=tenant_id
        )

    def lag(self) -> float:
        """Seconds since the oldest job still waiting was queued (any tenant); 0 when none."""
        return self._transactions.run(
            lambda conn, now: extraction.queue_lag(conn, now=now), tenant_id=None
        )
