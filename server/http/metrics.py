"""Prometheus metrics beyond Litestar's per-route request counts and latencies.

Counters live in the default registry, as prometheus_client expects; the pool gauges come
from one collector registered while any app runs. Several apps may run in one process at once
(tests do): the registry refuses two collectors of the same names, so every open pool joins
that one collector and the gauges add up the process's pools.

With several server processes (``sgam serve --workers N``) each keeps its own values, so
``sgam serve`` gives them a shared PROMETHEUS_MULTIPROC_DIR (``multiprocess_metrics``):
counters are written there and ``/metrics`` sums them over the processes (Litestar's controller
reads that directory when the variable is set). The pool gauges cannot be read at scrape time
from another process: there each process samples its pools every ``POOL_SAMPLE_SECONDS`` into
``livesum`` gauges, which ``/metrics`` adds up over the processes still running.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from prometheus_client import REGISTRY, Counter, Gauge, multiprocess
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from psycopg_pool import ConnectionPool

from store.contract.results import UpdateResult

MULTIPROC_DIR = "PROMETHEUS_MULTIPROC_DIR"
"""Where prometheus_client's multiprocess mode keeps every process's values."""
POOL_SAMPLE_SECONDS = 1.0
"""How often, in multiprocess mode, a process writes its pool gauges (how stale they may be)."""

CANDIDATES = Counter(
    "sgam_candidates",
    "Candidates applied, by result status (written, unchanged, ignored, conflict, invalid,"
    " buffered).",
    ["status"],
)
FACTS_WRITTEN = Counter("sgam_facts_written", "Candidates that wrote a fact version.")
CONFLICTS = Counter("sgam_conflicts", "Candidates that opened an equal-start conflict.")
WEAK_PROMOTED = Counter(
    "sgam_weak_signals_promoted", "Weak candidates promoted from the buffer to the write path."
)
CONTEXT_ASSEMBLIES = Counter(
    "sgam_context_assemblies",
    "Context blocks assembled, by whether they fit the budget.",
    ["over_budget"],
)
EVIDENCE_SEARCHES = Counter("sgam_evidence_searches", "Evidence searches answered.")
EXTRACTION_JOBS = Counter(
    "sgam_extraction_jobs",
    "Extraction attempts, by what came of them (done, failed, dead, lost: the lease ran out).",
    ["outcome"],
)
PURGE_RUNS = Counter(
    "sgam_purge_runs",
    "Retention purges this process attempted, by outcome (done, skipped: another process was"
    " purging, failed).",
    ["outcome"],
)
PURGE_TENANT_FAILURES = Counter(
    "sgam_purge_tenant_failures",
    "Tenants whose retention purge failed and was rolled back (the purge went on with the"
    " others), by the store's error code.",
    ["code"],
)
EXTRACTION_LAG = Gauge(
    "sgam_extraction_lag_seconds",
    "Freshness lag: age of the oldest extraction job still waiting (0 when none), as a worker"
    " last saw it.",
    multiprocess_mode="max",
)

FROZEN_OBJECTS = Gauge(
    "sgam_heap_frozen_objects",
    "Objects the serving processes froze once started, which no garbage collection walks again"
    " (server.runtime.heap); summed over the processes still running.",
    multiprocess_mode="livesum",
)

ENCODER_TEXTS = Counter("sgam_encoder_texts", "Texts the encoder embedded.")
ENCODER_BATCHES = Counter(
    "sgam_encoder_batches", "Runs of the encoder, each embedding the texts of one or more calls."
)
ENCODER_SECONDS = Counter(
    "sgam_encoder_seconds",
    "Seconds the encoder spent embedding: its rate is the share of time the encoder was busy"
    " (1 = always, calls then queue).",
)
ENCODER_REFUSED = Counter(
    "sgam_encoder_refused",
    "Calls refused with 503 `unavailable` because SGAM_ENCODER_QUEUE_SIZE calls were queued.",
)
ENCODER_WAITING = Gauge(
    "sgam_encoder_waiting",
    "Calls queued for the encoder now; summed over the processes still running.",
    multiprocess_mode="livesum",
)


class EncoderMetrics:
    """The encoder queue's observer (``retrieval.search.encoder.EncoderObserver``) that keeps
    the ``sgam_encoder_*`` metrics."""

    def waiting(self, calls: int) -> None:
        """Set the queued calls' gauge."""
        ENCODER_WAITING.set(calls)

    def encoded(self, texts: int, seconds: float) -> None:
        """Count one run of the encoder."""
        ENCODER_TEXTS.inc(texts)
        ENCODER_BATCHES.inc()
        ENCODER_SECONDS.inc(seconds)

    def refused(self) -> None:
        """Count a call refused for a full queue."""
        ENCODER_REFUSED.inc()


def count_results(results: Iterable[UpdateResult]) -> None:
    """Count candidate outcomes."""
    for result in results:
        CANDIDATES.labels(result.status).inc()
        if result.status == "written":
            FACTS_WRITTEN.inc()
        elif result.status == "conflict":
            CONFLICTS.inc()
        if result.supporting_episode_ids is not None:
            WEAK_PROMOTED.inc()


class PoolCollector(Collector):
    """The open pools' connections, idle connections and waiting requests, read at scrape time."""

    def __init__(self) -> None:
        self.pools: list[ConnectionPool] = []

    def totals(self) -> list[tuple[str, str, float]]:
        """Each pool statistic's name, help and sum over the process's open pools."""
        stats = [pool.get_stats() for pool in list(self.pools)]
        return [
            (name, help_text, float(sum(stat.get(key, 0) for stat in stats)))
            for name, key, help_text in _POOL_STATS
        ]

    def collect(self) -> Iterator[GaugeMetricFamily]:
        """One gauge family per pool statistic, summed over the process's open pools."""
        for name, help_text, value in self.totals():
            family = GaugeMetricFamily(name, help_text)
            family.add_metric([], value)
            yield family


_POOL_STATS: Sequence[tuple[str, str, str]] = (
    ("sgam_pool_size", "pool_size", "Connections the pools hold (idle and in use)."),
    ("sgam_pool_available", "pool_available", "Idle connections in the pools."),
    ("sgam_pool_max", "pool_max", "Most connections the pools may open."),
    ("sgam_pool_waiting", "requests_waiting", "Requests waiting for a connection."),
)


class _PoolSampler:
    """Multiprocess mode: this process's pool totals, written to ``livesum`` gauges until closed."""

    def __init__(self, pools: PoolCollector) -> None:
        self._pools = pools
        # Not registered: in multiprocess mode /metrics reads the values from the files.
        self._gauges = {
            name: Gauge(name, help_text, registry=None, multiprocess_mode="livesum")
            for name, _, help_text in _POOL_STATS
        }
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sgam-pool-metrics", daemon=True)

    def start(self) -> None:
        """Write the gauges now, then every ``POOL_SAMPLE_SECONDS``."""
        self._sample()
        self._thread.start()

    def _sample(self) -> None:
        for name, _, value in self._pools.totals():
            self._gauges[name].set(value)

    def _run(self) -> None:
        while not self._stop.wait(POOL_SAMPLE_SECONDS):
            self._sample()

    def close(self) -> None:
        """Stop sampling; the process's live gauges leave the sums."""
        self._stop.set()
        self._thread.join()
        multiprocess.mark_process_dead(os.getpid())  # type: ignore[no-untyped-call]


_POOLS = PoolCollector()
"""Registered (or sampled) only while it has a pool: nothing is registered at import."""
_POOLS_LOCK = threading.Lock()
_SAMPLERS: list[_PoolSampler] = []
"""The process's one sampler while it has a pool, in multiprocess mode."""


@contextmanager
def pool_metrics(pool: ConnectionPool) -> Iterator[None]:
    """Publish the pool's gauges while the block runs."""
    with _POOLS_LOCK:
        _POOLS.pools.append(pool)
        if len(_POOLS.pools) == 1:
            if os.environ.get(MULTIPROC_DIR):
                _SAMPLERS.append(_PoolSampler(_POOLS))
                _SAMPLERS[0].start()
            else:
                REGISTRY.register(_POOLS)
    try:
        yield
    finally:
        with _POOLS_LOCK:
            _POOLS.pools.remove(pool)
            if not _POOLS.pools:
                if _SAMPLERS:
                    _SAMPLERS.pop().close()
                else:
                    REGISTRY.unregister(_POOLS)


@contextmanager
def multiprocess_metrics(workers: int) -> Iterator[None]:
    """For ``workers`` > 1: a PROMETHEUS_MULTIPROC_DIR for the worker processes started within.

    One set by the operator is used, for any number of workers, emptied of an earlier run's
    values first; otherwise a temporary directory is made and removed at the end. It must be
    set before the workers start: each reads it as it imports prometheus_client.
    """
    given = os.environ.get(MULTIPROC_DIR)
    if given:
        for stale in Path(given).glob("*.db"):
            stale.unlink()
        yield
    elif workers <= 1:
        yield
    else:
        with tempfile.TemporaryDirectory(prefix="sgam-metrics-") as directory:
            os.environ[MULTIPROC_DIR] = directory
            try:
                yield
            finally:
                del os.environ[MULTIPROC_DIR]
