"""Benchmark: how writers to one key are serialized, and what a retry costs.

Runs on a fresh temporary embedded database (or DATABASE_URL's server) and reports medians:

* one writer, no contention: the latency of one assertion (one transaction);
* eight writers at once on one key (they queue on the key's advisory lock) versus eight on
  eight keys (they run in parallel): per-call latency and throughput;
* an assertion whose first attempt the server fails with a serialization failure at its write
  and the store retries, versus the same assertion without the failure.

Everything goes through the store's public API (``open_store``, ``apply_updates``); the
failure comes from a trigger this benchmark adds to its own scratch database.

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
from functools import partial
from pathlib import Path
from threading import Barrier
from typing import Any

import psycopg
from psycopg import sql

from store.database import scratch_database
from store.service import MemoryStore, open_store

WRITERS = 8
FAILING = "fail-"
"""Subjects whose assertions the server fails once: their first attempt, at its write."""

# A sequence is not rolled back with the failed attempt, so it counts attempts: odd ones fail.
_FAIL_FIRST_ATTEMPTS = sql.SQL("""
CREATE SEQUENCE bench_attempts;
CREATE FUNCTION bench_fail_first_attempt() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF nextval('bench_attempts') % 2 = 1 THEN
        RAISE EXCEPTION 'bench' USING ERRCODE = '40001';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER bench_fail_first_attempt BEFORE INSERT ON fact_versions
    FOR EACH ROW WHEN (starts_with(NEW.subject, {prefix}))
    EXECUTE FUNCTION bench_fail_first_attempt();
""").format(prefix=sql.Literal(FAILING))


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
    store.admin.create_tenant(tenant)
    store.admin.declare_attribute(tenant, "balance", {"value_type": "integer"})
    store.episodes.record(
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
        _timed(partial(store.facts.apply_updates, "solo", "e", [_candidate(f"s{i}", 1, i)]))
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
        return _timed(lambda: store.facts.apply_updates(tenant, "e", [candidate]))

    with ThreadPoolExecutor(WRITERS) as executor:
        for round_ in range(rounds):
            start = time.perf_counter()
            samples.extend(executor.map(write, range(WRITERS), [round_] * WRITERS))
            elapsed += time.perf_counter() - start
    return {**_percentiles(samples), "writes_per_s": round(len(samples) / elapsed, 1)}


def retry_cost(store: MemoryStore, conninfo: str, *, rounds: int) -> dict[str, Any]:
    """Median latency of an assertion without and with one retried serialization failure.

    The failure is raised by the server when the assertion inserts its version, so the failed
    attempt has done all its work before it is rolled back and run again.
    """
    _setup(store, "retry")
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(_FAIL_FIRST_ATTEMPTS)

    def assertion(subject: str, i: int) -> float:
        start = time.perf_counter()
        [result] = store.facts.apply_updates("retry", "e", [_candidate(subject, 1, i)])
        elapsed = time.perf_counter() - start
        if result.status != "written":
            raise RuntimeError(f"the bench assertion was not written: {result}")
        return elapsed

    plain = [assertion(f"r{i}", i) for i in range(rounds)]
    retried = [assertion(f"{FAILING}{i}", i) for i in range(rounds)]
    with psycopg.connect(conninfo) as conn:
        attempts = conn.execute("SELECT last_value FROM bench_attempts").fetchone()
    if attempts != (2 * rounds,):
        raise RuntimeError(f"expected two attempts per failed assertion, counted {attempts}")
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
        retries = retry_cost(store, conninfo, rounds=rounds * 2)
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
