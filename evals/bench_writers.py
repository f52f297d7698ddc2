"""Benchmark: how writers to one key are serialized, and what a retry costs.

Runs on a fresh temporary embedded database (or DATABASE_URL's server) and reports medians:

* one writer, no contention: the latency of one assertion (one transaction);
* eight writers at once on one key (they queue on the key's advisory lock) versus eight on
  eight keys (they run in parallel): per-call latency and throughput;
* a transaction that hits one serialization failure (raised by the server) and is retried,
  versus the same transaction without the failure.

    python -m evals.bench_writers --out evals/results/writers.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from functools import partial
from pathlib import Path
from threading import Barrier
from typing import Any

import psycopg

from store import facts
from store.database import scratch_database
from store.models import MemoryUpdate
from store.service import MemoryStore, open_store

WRITERS = 8


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 3),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 3),
        "n": len(ordered),
    }


def _candidate(subject: str, day: int, value: int) -> dict[str, Any]:
    return {
        "evidence": "",
        "subject": subject,
        "attribute": "balance",
        "change": "update",
        "value": str(value),
        "valid_from": "2026-01-01T00:00:00Z".replace("01T", f"{day:02d}T"),
    }


def _setup(store: MemoryStore, tenant: str) -> None:
    store.create_tenant(tenant)
    store.declare_attribute(tenant, "balance", {"value_type": "integer"})
    store.record_episode(
        tenant, {"id": "e", "occurred_at": "2026-01-01T00:00:00Z", "text": "bench"}
    )


def _timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def single_writer(store: MemoryStore, *, rounds: int) -> dict[str, float]:
    """One assertion at a time, each on a fresh key."""
    _setup(store, "solo")
    samples = [
        _timed(partial(store.apply_updates, "solo", "e", [_candidate(f"s{i}", 1, i)]))
        for i in range(rounds)
    ]
    return _percentiles(samples)


def concurrent_writers(store: MemoryStore, *, rounds: int, same_key: bool) -> dict[str, float]:
    """Eight writers released together, ``rounds`` times: on one key or on eight keys."""
    tenant = "one-key" if same_key else "many-keys"
    _setup(store, tenant)
    samples: list[float] = []
    elapsed = 0.0
    barrier = Barrier(WRITERS)

    def write(i: int, round_: int) -> float:
        # Each round uses fresh keys: one shared by all eight writers, or one each.
        subject = f"hot-{round_}" if same_key else f"k{i}-{round_}"
        candidate = _candidate(subject, i + 1, round_ * WRITERS + i)
        barrier.wait()
        return _timed(lambda: store.apply_updates(tenant, "e", [candidate]))

    with ThreadPoolExecutor(WRITERS) as executor:
        for round_ in range(rounds):
            start = time.perf_counter()
            samples.extend(executor.map(write, range(WRITERS), [round_] * WRITERS))
            elapsed += time.perf_counter() - start
    return {**_percentiles(samples), "writes_per_s": round(len(samples) / elapsed, 1)}


def retry_cost(store: MemoryStore, *, rounds: int) -> dict[str, Any]:
    """Median latency of an assertion transaction without and with one retried failure."""
    _setup(store, "retry")
    episode = store.get_episode("retry", "e")

    def assertion(i: int, *, fail_first: bool) -> float:
        attempts = 0
        update = MemoryUpdate.model_validate(_candidate(f"r{i}-{fail_first}", 1, i))

        def work(conn: psycopg.Connection[Any], now: datetime) -> object:
            nonlocal attempts
            attempts += 1
            if fail_first and attempts == 1:
                conn.execute(b"DO $$ BEGIN RAISE EXCEPTION 'bench' USING ERRCODE = '40001'; END $$")
            return facts.apply_update(
                conn,
                "retry",
                episode=episode,
                update=update,
                index=0,
                clock=store.clock,
                new_id=store.new_id,
            )

        return _timed(lambda: store._run(work))

    plain = [assertion(i, fail_first=False) for i in range(rounds)]
    retried = [assertion(i, fail_first=True) for i in range(rounds)]
    plain_stats, retried_stats = _percentiles(plain), _percentiles(retried)
    return {
        "no_retry": plain_stats,
        "one_retry": retried_stats,
        "extra_ms_p50": round(retried_stats["p50_ms"] - plain_stats["p50_ms"], 3),
        "ratio_p50": round(retried_stats["p50_ms"] / plain_stats["p50_ms"], 2),
    }


def run(*, rounds: int, database_url: str | None) -> dict[str, Any]:
    """Every measurement on one fresh database."""
    with (
        scratch_database(database_url) as conninfo,
        open_store(conninfo, max_connections=WRITERS + 2) as store,
    ):
        solo = single_writer(store, rounds=rounds * 4)
        one_key = concurrent_writers(store, rounds=rounds, same_key=True)
        many_keys = concurrent_writers(store, rounds=rounds, same_key=False)
        retries = retry_cost(store, rounds=rounds * 2)
    return {
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
        "single_writer": solo,
        "eight_writers_one_key": one_key,
        "eight_writers_eight_keys": many_keys,
        "throughput_ratio_eight_keys_vs_one_key": round(
            many_keys["writes_per_s"] / one_key["writes_per_s"], 2
        ),
        "retry": retries,
    }


def main() -> None:
    """Run the benchmark, print the medians and ratios, write them to ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=25, help="rounds of eight writers")
    parser.add_argument("--out", type=Path, default=Path("evals/results/writers.json"))
    args = parser.parse_args()
    results = run(rounds=args.rounds, database_url=os.environ.get("DATABASE_URL"))
    text = json.dumps(results, indent=2)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
