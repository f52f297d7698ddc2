"""The extraction worker: claims due jobs, calls the extractor, writes what it proposes.

One loop serves every tenant. It claims a few jobs at a time (``SKIP LOCKED``: any number of
workers, in server processes or ``sgam worker`` ones, share the queue without taking one job
twice), and works each in transactions of the job's tenant (``store.api.extraction``). A job
whose worker dies is claimed again when its lease runs out; a finish under a lost lease writes
nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from server.extraction.extractor import Extract, ExtractionFailed
from server.http.metrics import EXTRACTION_JOBS, EXTRACTION_LAG, count_results
from server.runtime.background import BackgroundLoop
from server.settings import Settings
from store.contract.results import UpdateResult
from store.episodes.extraction import Claim
from store.errors import StoreError
from store.service import MemoryStore

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

    @classmethod
    def from_settings(cls, settings: Settings) -> WorkPolicy:
        """The policy the settings describe."""
        return cls(
            max_attempts=settings.extractor_max_attempts,
            backoff=timedelta(seconds=settings.extractor_backoff_s),
            lease=timedelta(seconds=settings.extractor_lease_s),
            batch=settings.extractor_batch,
            poll_s=settings.extractor_poll_s,
        )

    def wait_after(self, attempts: int) -> timedelta:
        """The wait before the next try after ``attempts`` attempts: doubling, at most an
        hour."""
        wait: timedelta = self.backoff * (2 ** max(attempts - 1, 0))
        return min(wait, MAX_BACKOFF)


def run_job(
    store: MemoryStore, extract: Extract, job: Claim, policy: WorkPolicy
) -> list[UpdateResult] | None:
    """Work one leased job: its candidates' results, or None when the attempt failed (the
    job is ``failed`` or ``dead``) or the lease was lost (someone else holds the job)."""
    given = store.extraction.begin(job)
    if given is None:
        EXTRACTION_JOBS.labels("lost").inc()
        return None
    try:
        candidates = extract(given)
    except ExtractionFailed as error:
        reason = str(error)
    except Exception as error:  # an extractor's own bug must not stop the queue
        log.exception("extractor raised")
        reason = f"extractor error: {type(error).__name__}"
    else:
        results = store.extraction.complete(job, candidates)
        EXTRACTION_JOBS.labels("done" if results is not None else "lost").inc()
        if results is not None:
            count_results(results)
        return results
    status = store.extraction.fail(
        job, reason, max_attempts=policy.max_attempts, backoff=policy.wait_after
    )
    EXTRACTION_JOBS.labels(status or "lost").inc()
    return None


def work_once(store: MemoryStore, extract: Extract, policy: WorkPolicy) -> int:
    """Claim due jobs once and work them; how many were claimed."""
    claimed = store.extraction.claim(wanted=policy.batch, lease=policy.lease)
    for job in claimed:
        run_job(store, extract, job, policy)
    EXTRACTION_LAG.set(store.extraction.lag())
    return len(claimed)


def drain(store: MemoryStore, extract: Extract, policy: WorkPolicy) -> int:
    """Work every due job until none is left; how many were claimed."""
    total = 0
    while claimed := work_once(store, extract, policy):
        total += claimed
    return total


class Worker(BackgroundLoop):
    """A worker loop on its own thread: ``start``, then ``stop`` (waits for the job at hand)."""

    def __init__(self, store: MemoryStore, extract: Extract, policy: WorkPolicy) -> None:
        super().__init__("sgam-extraction")
        self._store = store
        self._extract = extract
        self._policy = policy

    def run(self) -> None:
        """Work jobs until stopped: at once while some are due, else every ``poll_s``."""
        while not self.stopping.is_set():
            try:
                claimed = work_once(self._store, self._extract, self._policy)
            except StoreError as error:  # the database away: try again after a while
                log.warning("extraction worker: %s", error.detail)
                claimed = 0
            except Exception:  # never let the loop die: log it, try again after a while
                log.exception("extraction worker")
                claimed = 0
            if claimed == 0:
                self.stopping.wait(self._policy.poll_s)
