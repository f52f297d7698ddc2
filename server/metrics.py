"""Prometheus metrics beyond Litestar's per-route request counts and latencies.

Counters live in the default registry, as prometheus_client expects; the pool gauges come
from one collector registered while any app runs. Several apps may run in one process at once
(tests do): the registry refuses two collectors of the same names, so every open pool joins
that one collector and the gauges add up the process's pools.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

from prometheus_client import REGISTRY, Counter
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from psycopg_pool import ConnectionPool

from store.results import UpdateResult

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
    """The open pools' connections, idle connections and waiting requests, read at scrape time."""

    def __init__(self) -> None:
        self.pools: list[ConnectionPool] = []

    def collect(self) -> Iterator[GaugeMetricFamily]:
        """One gauge family per pool statistic, summed over the process's open pools."""
        stats = [pool.get_stats() for pool in list(self.pools)]
        for name, key, help_text in _POOL_STATS:
            family = GaugeMetricFamily(name, help_text)
            family.add_metric([], float(sum(stat.get(key, 0) for stat in stats)))
            yield family


_POOL_STATS: Sequence[tuple[str, str, str]] = (
    ("sgam_pool_size", "pool_size", "Connections the pools hold (idle and in use)."),
    ("sgam_pool_available", "pool_available", "Idle connections in the pools."),
    ("sgam_pool_max", "pool_max", "Most connections the pools may open."),
    ("sgam_pool_waiting", "requests_waiting", "Requests waiting for a connection."),
)

_POOLS = PoolCollector()
"""Registered only while it has a pool: nothing is registered at import."""
_POOLS_LOCK = threading.Lock()


@contextmanager
def pool_metrics(pool: ConnectionPool) -> Iterator[None]:
    """Publish the pool's gauges while the block runs."""
    with _POOLS_LOCK:
        if not _POOLS.pools:
            REGISTRY.register(_POOLS)
        _POOLS.pools.append(pool)
    try:
        yield
    finally:
        with _POOLS_LOCK:
            _POOLS.pools.remove(pool)
            if not _POOLS.pools:
                REGISTRY.unregister(_POOLS)
