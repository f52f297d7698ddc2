"""Prometheus metrics beyond Litestar's per-route request counts and latencies.

Counters live in the default registry, as prometheus_client expects; the pool gauge is a
collector registered while an app runs, so several apps in one process (tests) can come and
go.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

from prometheus_client import REGISTRY, Counter
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from psycopg_pool import ConnectionPool

from store.models import UpdateResult

CANDIDATES = Counter(
    "sgam_candidates",
    "Candidates applied, by result status (written, unchanged, ignored, conflict, invalid).",
    ["status"],
)
FACTS_WRITTEN = Counter("sgam_facts_written", "Candidates that wrote a fact version.")
CONFLICTS = Counter("sgam_conflicts", "Candidates that opened an equal-start conflict.")
CONTEXT_ASSEMBLIES = Counter(
    "sgam_context_assemblies",
    "Context blocks assembled, by whether they fit the budget.",
    ["over_budget"],
)
EVIDENCE_SEARCHES = Counter("sgam_evidence_searches", "Evidence searches answered.")


def count_results(results: Iterable[UpdateResult]) -> None:
    """Count candidate outcomes."""
    for result in results:
        CANDIDATES.labels(result.status).inc()
        if result.status == "written":
            FACTS_WRITTEN.inc()
        elif result.status == "conflict":
            CONFLICTS.inc()


class PoolCollector(Collector):
    """The connection pool's size, idle connections and waiting requests, read at scrape time."""

    def __init__(self, pool: ConnectionPool) -> None:
        self.pool = pool

    def collect(self) -> Iterator[GaugeMetricFamily]:
        """One gauge family per pool statistic."""
        stats = self.pool.get_stats()
        for name, key, help_text in _POOL_STATS:
            family = GaugeMetricFamily(name, help_text)
            family.add_metric([], float(stats.get(key, 0)))
            yield family


_POOL_STATS: Sequence[tuple[str, str, str]] = (
    ("sgam_pool_size", "pool_size", "Connections the pool holds (idle and in use)."),
    ("sgam_pool_available", "pool_available", "Idle connections in the pool."),
    ("sgam_pool_max", "pool_max", "Most connections the pool may open."),
    ("sgam_pool_waiting", "requests_waiting", "Requests waiting for a connection."),
)


@contextmanager
def pool_metrics(pool: ConnectionPool) -> Iterator[None]:
    """Publish the pool's gauges while the block runs."""
    collector = PoolCollector(pool)
    REGISTRY.register(collector)
    try:
        yield
    finally:
        REGISTRY.unregister(collector)
