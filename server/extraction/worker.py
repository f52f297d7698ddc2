"""The extraction worker of a server process (or of ``sgam worker``): the jobs of
``extraction.jobs`` worked on a thread of its own, their ends counted in the server's metrics,
with the policy the settings describe."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import timedelta

from extraction.extractor import Extract
from extraction.jobs import JobEvents, WorkPolicy, work_once
from server.http.metrics import EXTRACTION_JOBS, EXTRACTION_LAG, count_results
from server.runtime.background import BackgroundLoop
from server.settings import Settings
from store.contract.results import UpdateResult
from store.errors import StoreError
from store.service import MemoryStore

log = logging.getLogger(__name__)


def policy_from(settings: Settings) -> WorkPolicy:
    """The work policy the settings describe."""
    return WorkPolicy(
        max_attempts=settings.extractor_max_attempts,
        backoff=timedelta(seconds=settings.extractor_backoff_s),
        lease=timedelta(seconds=settings.extractor_lease_s),
        batch=settings.extractor_batch,
        poll_s=settings.extractor_poll_s,
    )


class _Metrics:
    """Job ends, written candidates and the queue's lag, as the server's Prometheus metrics."""

    def job(self, status: str) -> None:
        EXTRACTION_JOBS.labels(status).inc()

    def results(self, results: Sequence[UpdateResult]) -> None:
        count_results(results)

    def lag(self, seconds: float) -> None:
        EXTRACTION_LAG.set(seconds)


METRICS: JobEvents = _Metrics()


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
                claimed = work_once(self._store, self._extract, self._policy, METRICS)
            except StoreError as error:  # the database away: try again after a while
                log.warning("extraction worker: %s", error.detail)
                claimed = 0
            except Exception:  # never let the loop die: log it, try again after a while
                log.exception("extraction worker")
                claimed = 0
            if claimed == 0:
                self.stopping.wait(self._policy.poll_s)
