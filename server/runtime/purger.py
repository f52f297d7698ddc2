"""The periodic retention purge: a thread of each server process, one purge at a time in all.

Every ``purge_interval_s`` the thread asks for a purge of every tenant; the store runs it only
if no other process is purging (a PostgreSQL advisory lock), each tenant in a transaction of
its own, as that tenant.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from server.http.metrics import PURGE_RUNS, PURGE_TENANT_FAILURES
from server.runtime.background import BackgroundLoop
from store.contract.governance import PurgeReport
from store.errors import StoreError
from store.service import MemoryStore

log = logging.getLogger(__name__)


def purge_once(store: MemoryStore, *, receipt_retention: timedelta) -> PurgeReport | None:
    """One purge of every tenant; None when another process was purging.

    A tenant whose purge failed is counted and logged; the others were purged all the same.
    """
    report = store.retention.purge(receipt_retention=receipt_retention)
    PURGE_RUNS.labels("skipped" if report is None else "done").inc()
    for failure in [] if report is None else report.failed:
        PURGE_TENANT_FAILURES.labels(failure.code).inc()
        log.warning("retention purge of tenant %s failed: %s", failure.tenant_id, failure.detail)
    return report


class Purger(BackgroundLoop):
    """The purge loop on its own thread: ``start``, then ``stop`` (waits for a purge at hand)."""

    def __init__(
        self, store: MemoryStore, *, interval_s: float, receipt_retention: timedelta
    ) -> None:
        super().__init__("sgam-purge")
        self._store = store
        self._interval_s = interval_s
        self._receipt_retention = receipt_retention

    def run(self) -> None:
        """Purge every ``interval_s`` until stopped (the first after one interval)."""
        while not self.stopping.wait(self._interval_s):
            try:
                purge_once(self._store, receipt_retention=self._receipt_retention)
            except StoreError as error:  # the database away: try again next time
                PURGE_RUNS.labels("failed").inc()
                log.warning("retention purge: %s", error.detail)
            except Exception:  # never let the loop die: log it, try again next time
                PURGE_RUNS.labels("failed").inc()
                log.exception("retention purge")
