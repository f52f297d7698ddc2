"""Extraction jobs: claim due jobs, call the extractor, write what it proposes.

One loop serves every tenant. It claims a few jobs at a time (``SKIP LOCKED``: any number of
workers, in server processes or ``sgam worker`` ones, share the queue without taking one job
twice), and works each in transactions of the job's tenant (``store.api.extraction``). A job
whose worker dies is claimed again when its lease runs out; a finish under a lost lease writes
nothing. What happens to each job is told to a ``JobEvents`` (the server counts it in its
metrics); the loop that calls ``work_once`` is the caller's (``server.extraction.worker``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol

from extraction.extractor import Extract, ExtractionFailed
from store.contract.results import UpdateResult
from store.episodes.extraction import Claim
from store.service import MemoryStore
from store.tracing import TENANT, span

log = logging.getLogger(__name__)

MAX_BACKOFF = timedelta(hours=1)


@dataclass(frozen=True, slots=True)
class WorkPolicy:
    """How a worker treats jobs: attempts, waits, lease, batch size, idle poll."""

    max_attempts: int = 5
    backoff: timedelta = timedelta(seconds=30)
    lease: timedelta = timedelta(minutes=5)
    batch: int = 8
    poll_s: float = 2.0

    def wait_after(self, attempts: int) -> timedelta:
        """The wait before the next try after ``attempts`` attempts: doubling, at most an
        hour."""
        wait: timedelta = self.backoff * (2 ** max(attempts - 1, 0))
        return min(wait, MAX_BACKOFF)


class JobEvents(Protocol):
    """What a caller hears of the jobs it works (the server counts them in its metrics)."""

    def job(self, status: str) -> None:
        """A job's attempt ended: ``done``, ``failed``, ``dead`` or ``lost`` (its lease)."""

    def results(self, results: Sequence[UpdateResult]) -> None:
        """The results of the candidates a job wrote."""

    def lag(self, seconds: float) -> None:
        """The queue's lag after a round of claims."""


class _Unheard:
    def job(self, status: str) -> None:
        pass

    def results(self, results: Sequence[UpdateResult]) -> None:
        pass

    def lag(self, seconds: float) -> None:
        pass


UNHEARD: JobEvents = _Unheard()
"""Events nobody listens to."""


def run_job(
    store: MemoryStore,
    extract: Extract,
    job: Claim,
    policy: WorkPolicy,
    events: JobEvents = UNHEARD,
) -> list[UpdateResult] | None:
    """Work one leased job: its candidates' results, or None when the attempt failed (the
    job is ``failed`` or ``dead``) or the lease was lost (someone else holds the job).

    Traced, the job is a span of its own (a trace starts with it), the extractor's call one
    inside it (``store.tracing``).
    """
    with span("extraction job", {TENANT: job.tenant_id}, kind="consumer"):
        return _run_job(store, extract, job, policy, events)


def _run_job(
    store: MemoryStore,
    extract: Extract,
    job: Claim,
    policy: WorkPolicy,
    events: JobEvents,
) -> list[UpdateResult] | None:
    given = store.extraction.begin(job)
    if given is None:
        events.job("lost")
        return None
    try:
        with span("extractor", {TENANT: job.tenant_id}, kind="client"):
            candidates = extract(given)
    except ExtractionFailed as error:
        reason = str(error)
    except Exception as error:  # an extractor's own bug must not stop the queue
        log.exception("extractor raised")
        reason = f"extractor error: {type(error).__name__}"
    else:
        results = store.extraction.complete(job, candidates)
        events.job("done" if results is not None else "lost")
        if results is not None:
            events.results(results)
        return results
    status = store.extraction.fail(
        job, reason, max_attempts=policy.max_attempts, backoff=policy.wait_after
    )
    events.job(status or "lost")
    return None


def work_once(
    store: MemoryStore, extract: Extract, policy: WorkPolicy, events: JobEvents = UNHEARD
) -> int:
    """Claim due jobs once and work them; how many were claimed."""
    claimed = store.extraction.claim(wanted=policy.batch, lease=policy.lease)
    for job in claimed:
        run_job(store, extract, job, policy, events)
    events.lag(store.extraction.lag())
    return len(claimed)


def drain(
    store: MemoryStore, extract: Extract, policy: WorkPolicy, events: JobEvents = UNHEARD
) -> int:
    """Work every due job until none is left; how many were claimed."""
    total = 0
    while claimed := work_once(store, extract, policy, events):
        total += claimed
    return total
