"""Benchmark: how writers to one key are serialized, how writes scale, what a retry costs.

Runs on a fresh temporary embedded database (or DATABASE_URL's server) and reports medians:

* one writer, no contention: the latency of one assertion (one transaction);
* eight writers at once on one key (they queue on its lock) versus on eight keys;
* sustained throughput of one writer against eight, calls of one candidate or of ten on
  spread keys, each citing an episode of its own, and the ratio of eight writers to one;
* a hot episode: eight writers whose calls (ten candidates about new subjects each) all cite
  one episode, against eight citing their own episodes and against one writer;
* an assertion whose first attempt fails with a serialization failure, retried, against one
  without the failure;
* the bulk import: facts written per second on fresh keys and on histories of five values a
  key, then episodes embedded per second against the raw encoder on the same texts.

Everything goes through the store's public calls; the failure comes from a trigger this
benchmark adds to its scratch database. Threads in one process, no HTTP.

    python -m evals.bench.writers --out evals/results/writers.json
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

from store.bench import raw_connection, scratch_database, sql
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
        return _timed(lambda: store.facts.apply_candidates(tenant, "e", [candidate]))

    with ThreadPoolExecutor(WRITERS) as executor:
        for round_ in range(rounds):
            start = time.perf_counter()
            samples.extend(executor.map(write, range(WRITERS), [round_] * WRITERS))
            elapsed += time.perf_counter() - start
    return {**_percentiles(samples), "writes_per_s": round(len(samples) / elapsed, 1)}


def sustained_writers(
    store: MemoryStore,
    *,
    writers: int,
    calls: int,
    batch: int,
    one_episode: bool = False,
    case: str = "sustained",
) -> dict[str, float]:
    """``writers`` threads each making ``calls`` calls of ``batch`` candidates on fresh keys
    (fresh subjects), each call citing an episode of its own or, ``one_episode``, all the
    tenant's one episode ``e``."""
    tenant = f"{case}-{writers}x{calls}x{batch}" + ("-one-episode" if one_episode else "")
    _setup(store, tenant)
    store.episodes.record_batch(
        tenant,
        [
            {"id": f"w{w}-{c}", "occurred_at": "2026-01-01T00:00:00Z", "text": "bench"}
            for w in range(writers)
            for c in range(calls)
        ],
    )

    def write(w: int) -> list[float]:
        samples = []
        for c in range(calls):
            candidates = [_candidate(f"w{w}-{c}-{j}", 1, j) for j in range(batch)]
            cited = "e" if one_episode else f"w{w}-{c}"
            samples.append(_timed(partial(store.facts.apply_candidates, tenant, cited, candidates)))
        return samples

    start = time.perf_counter()
    with ThreadPoolExecutor(writers) as executor:
        samples = [sample for part in executor.map(write, range(writers)) for sample in part]
    elapsed = time.perf_counter() - start
    return {**_percentiles(samples), "assertions_per_s": round(len(samples) * batch / elapsed, 1)}


def scaling(store: MemoryStore, *, rounds: int) -> dict[str, Any]:
    """One writer against eight, calls of one candidate and of ten, in the same run."""
    found: dict[str, Any] = {}
    for batch in (1, 10):
        calls = max(2, rounds * 8 // batch)
        one = sustained_writers(store, writers=1, calls=calls * 2, batch=batch)
        eight = sustained_writers(store, writers=WRITERS, calls=calls, batch=batch)
        found[f"batch_{batch}"] = {
            "one_writer": one,
            "eight_writers": eight,
            "ratio_eight_vs_one": round(eight["assertions_per_s"] / one["assertions_per_s"], 2),
        }
    return found


def hot_episode(store: MemoryStore, *, rounds: int) -> dict[str, Any]:
    """Eight writers citing one episode, ten candidates about new subjects a call, against
    eight citing their own episodes and against one writer, in the same run."""
    calls = max(2, rounds * 8 // 10)
    hot = partial(sustained_writers, store, batch=10, case="hot")
    one = hot(writers=1, calls=calls * 2)
    own = hot(writers=WRITERS, calls=calls)
    shared = hot(writers=WRITERS, calls=calls, one_episode=True)
    rate = "assertions_per_s"
    return {
        "one_writer": one,
        "eight_writers_own_episodes": own,
        "eight_writers_one_episode": shared,
        "ratio_one_episode_vs_own": round(shared[rate] / own[rate], 2),
        "ratio_one_episode_vs_one_writer": round(shared[rate] / one[rate], 2),
    }


def retry_cost(store: MemoryStore, conninfo: str, *, rounds: int) -> dict[str, Any]:
    """Median latency of an assertion without and with one retried serialization failure.

    The failure is raised by the server when the assertion inserts its version, so the failed
    attempt has done all its work before it is rolled back and run again.
    """
    _setup(store, "retry")
    with raw_connection(conninfo, autocommit=True) as conn:
        conn.execute(_FAIL_FIRST_ATTEMPTS)

    def assertion(subject: str, i: int) -> float:
        start = time.perf_counter()
        [result] = store.facts.apply_candidates("retry", "e", [_candidate(subject, 1, i)])
        elapsed = time.perf_counter() - start
        if result.status != "written":
            raise RuntimeError(f"the bench assertion was not written: {result}")
        return elapsed

    plain = [assertion(f"r{i}", i) for i in range(rounds)]
    retried = [assertion(f"{FAILING}{i}", i) for i in range(rounds)]
    with raw_connection(conninfo) as conn:
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


def _import_line(tenant: str, i: int, *, history: int) -> dict[str, Any]:
    """Episode ``i``: day ``i % history`` of account ``i // history``, asserting ten keys."""
    account, day = divmod(i, history)
    updates = [
        _candidate(f"a{account}", day + 1, i + j) | {"attribute": f"k{j}"} for j in range(10)
    ]
    text = f"Account {account}, day {day + 1}: {i * 7919 % 1000} seats, tier {i % 5}, {i} notes."
    occurred_at = f"2026-01-{day + 1:02d}T00:00:00Z"
    return {"tenant": tenant, "id": f"b{i}", "occurred_at": occurred_at, "text": text} | {
        "updates": updates
    }


def bulk_import(conninfo: str, *, episodes: int, embedded: int) -> dict[str, Any]:
    """Facts written per second by the import, then its embedding against the raw encoder."""
    from retrieval.search.embeddings import Embedder  # noqa: PLC0415 - the model loads only if asked

    embedder, found = Embedder(), {}
    with open_store(conninfo, embedder=embedder) as store:
        for history in (1, 5):
            tenant = f"import-{history}"
            store.admin.create_tenant(tenant)
            for j in range(10):
                store.admin.declare_attribute(tenant, f"k{j}", {"value_type": "integer"})
            lines = [_import_line(tenant, i, history=history) for i in range(episodes)]
            start = time.perf_counter()
            result = store.episodes.import_lines(json.dumps(line) for line in lines)
            written = result.candidates.get("written", 0)
            rate = round(written / (time.perf_counter() - start), 1)
            found[f"history_{history}"] = {"facts_written": written, "facts_per_s": rate}
        if embedded:
            texts = [line["text"] for line in lines[:embedded]]
            embedder.load().embed(texts[:64])  # warm up
            start = time.perf_counter()
            for first in range(0, embedded, 256):
                embedder.embed(texts[first : first + 256])
            raw = embedded / (time.perf_counter() - start)
            start = time.perf_counter()
            store.episodes.embed(result.recorded[:embedded], batch=256)
            rate = embedded / (time.perf_counter() - start)
            found["embedding"] = {
                "episodes": embedded,
                "raw_encoder_texts_per_s": round(raw, 1),
                "import_episodes_per_s": round(rate, 1),
                "ratio_import_vs_raw": round(rate / raw, 2),
            }
    return found


def run(
    *, rounds: int, database_url: str | None, import_episodes: int = 0, embedded: int = 0
) -> dict[str, Any]:
    """Every measurement on one fresh database."""
    with (
        scratch_database(database_url) as conninfo,
        open_store(conninfo, max_connections=WRITERS + 2, migrate=True) as store,
    ):
        solo = sustained_writers(store, writers=1, calls=rounds * 4, batch=1)
        one_key = concurrent_writers(store, rounds=rounds, same_key=True)
        many_keys = concurrent_writers(store, rounds=rounds, same_key=False)
        scaled = scaling(store, rounds=rounds)
        hot = hot_episode(store, rounds=rounds)
        retries = retry_cost(store, conninfo, rounds=rounds * 2)
        imported = (
            bulk_import(conninfo, episodes=import_episodes, embedded=embedded)
            if import_episodes
            else {}
        )
    return {
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
        "single_writer": solo,
        "eight_writers_one_key": one_key,
        "eight_writers_eight_keys": many_keys,
        "throughput_ratio_eight_keys_vs_one_key": round(
            many_keys["writes_per_s"] / one_key["writes_per_s"], 2
        ),
        "sustained": scaled,
        "hot_episode": hot,
        "retry": retries,
        "bulk_import": imported,
    }


def main() -> None:
    """Run the benchmark, print the medians and ratios, write them to ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=25, help="rounds of eight writers")
    parser.add_argument("--import-episodes", type=int, default=4000, help="lines to import")
    parser.add_argument("--embed", type=int, default=1024, help="episodes to embed (0: none)")
    parser.add_argument("--out", type=Path, default=Path("evals/results/writers.json"))
    args = parser.parse_args()
    results = run(
        rounds=args.rounds,
        database_url=os.environ.get("DATABASE_URL"),
        import_episodes=args.import_episodes,
        embedded=args.embed,
    )
    text = json.dumps(results, indent=2)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
