"""Benchmark: evidence search recall@10 against exact search, and its latency, by tenant size.

Generates ``--episodes`` synthetic episodes (seeded, so every run sees the same corpus), embeds
them with the real model (cached under ``--cache-dir``), bulk-loads them into a fresh temporary
embedded database (or DATABASE_URL's server) and reports, for each configuration:

* tenants holding 0.1%, 1% and 10% of the episodes (the rest spread over other tenants), and
  a single-tenant store of the same episodes;
* the plan ``search_evidence`` picks (exact scan or HNSW, by scope size), its recall@10
  against brute-force search in numpy over the same half-precision vectors, its p50/p95
  latency and how many queries PostgreSQL actually answered from the HNSW index;
* the same with the HNSW path's SQL forced (``exact_limit=0``), and with the HNSW index
  forced too (sorts disabled, so the planner cannot scan a small tenant exactly instead):
  a global HNSW index with a tenant filter, which is what the size-based plan avoids;
* the storage the vectors take as ``halfvec`` (table and indexes), and as ``vector``;
* with ``--sweep``, the forced HNSW index under other ef_search, hnsw.max_scan_tuples and
  iterative scan modes, and rebuilt with larger m / ef_construction (single tenant).

    python -m evals.bench.evidence.run --out evals/results/evidence.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evals.bench.evidence.corpus import (
    SEED,
    SHARES,
    Indices,
    assign_tenants,
    generate_corpus,
    generate_questions,
)
from evals.bench.evidence.load import (
    Vectors16,
    Vectors32,
    connect_to,
    embed_corpus,
    load_store,
)
from evals.bench.evidence.measure import (
    FORCE_INDEX,
    TIE_TOLERANCE,
    K,
    Searcher,
    evidence_searcher,
    exact_truths,
    measure,
    session_settings,
    without_method,
)
from evals.bench.evidence.sweeps import (
    MIB,
    SWEEP_QUERIES,
    hnsw_sweep,
    index_build_sweep,
)
from retrieval.search.embeddings import Embedder
from store.bench import EXACT_SCAN_LIMIT, HNSW_EF_SEARCH, Connection, scratch_database

SINGLE_TENANT = "single_tenant"


def _configuration(
    conn: Connection,
    name: str,
    scope: Indices,
    *,
    questions: Vectors32,
    vectors: Vectors16,
    model: str,
    sweep: bool,
) -> dict[str, Any]:
    """One tenant: the planned search, the HNSW path forced, and optionally the sweeps."""
    dimensions = vectors.shape[1]
    truths = exact_truths(vectors, scope, questions)
    common: dict[str, Any] = {"queries": questions, "truths": truths, "vectors": vectors}

    def searcher(**options: int) -> Searcher:
        return evidence_searcher(conn, name, model=model, dimensions=dimensions, **options)

    result: dict[str, Any] = {
        "name": name,
        "tenant_episodes": len(scope),
        **measure(searcher(), **common),
        "forced_hnsw": without_method(measure(searcher(exact_limit=0), **common)),
    }
    # The HNSW path's SQL still leaves the plan to PostgreSQL, which may sort a small tenant's
    # rows instead: with sorts disabled it has to walk the global index with the tenant filter.
    with session_settings(conn, FORCE_INDEX):
        forced = measure(searcher(exact_limit=0), **common)
    result["forced_hnsw_index"] = without_method(forced)
    if name == SINGLE_TENANT:
        exact = measure(searcher(exact_limit=len(scope)), **common)
        result["forced_exact"] = without_method(exact)
    if sweep:
        count = min(len(questions), SWEEP_QUERIES)
        subset: dict[str, Any] = {"queries": questions[:count], "truths": truths[:count]}
        result["hnsw_sweep"] = hnsw_sweep(
            conn,
            name,
            vectors=vectors,
            model=model,
            filtered=name != SINGLE_TENANT,
            **subset,
        )
    print(json.dumps(result), file=sys.stderr, flush=True)
    return result


def _storage(conn: Connection, dimensions: int) -> dict[str, Any]:
    def size(expression: str) -> int:
        row = conn.execute(f"SELECT {expression}").fetchone()
        return int(row[0]) if row else 0

    indexes = {
        str(name): int(bytes_)
        for name, bytes_ in conn.execute(
            "SELECT indexrelid::regclass::text, pg_relation_size(indexrelid)"
            " FROM pg_index WHERE indrelid = 'episode_vectors'::regclass ORDER BY 1"
        ).fetchall()
    }
    table = size("pg_table_size('episode_vectors')")
    total = size("pg_total_relation_size('episode_vectors')")
    conn.execute(
        "CREATE TEMP TABLE episode_vectors_float4 AS SELECT tenant_id, episode_id, model,"
        f" embedding::vector({dimensions}) AS embedding, created_at FROM episode_vectors"
    )
    float4 = size("pg_table_size('episode_vectors_float4')")
    conn.execute("DROP TABLE episode_vectors_float4")
    conn.commit()
    return {
        "halfvec_table_mib": round(table / MIB, 1),
        "halfvec_indexes_mib": {name: round(bytes_ / MIB, 1) for name, bytes_ in indexes.items()},
        "halfvec_total_mib": round(total / MIB, 1),
        "vector_table_mib": round(float4 / MIB, 1),
        "table_ratio_halfvec_vs_vector": round(table / float4, 2) if float4 else None,
    }


def _server_facts(conn: Connection) -> dict[str, Any]:
    facts = {}
    for setting in ("server_version", "shared_buffers", "work_mem", "max_parallel_workers"):
        row = conn.execute(f"SELECT current_setting('{setting}')").fetchone()
        facts[setting] = row[0] if row else None
    row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    facts["pgvector"] = row[0] if row else None
    conn.commit()
    return facts


def _measure_store(
    conninfo: str,
    names: Sequence[str],
    scopes: dict[str, Indices],
    *,
    questions: dict[str, Vectors32],
    vectors: Vectors16,
    model: str,
    sweep: bool,
) -> list[dict[str, Any]]:
    with connect_to(conninfo) as conn:
        return [
            _configuration(
                conn,
                name,
                scopes[name],
                questions=questions[name],
                vectors=vectors,
                model=model,
                sweep=sweep,
            )
            for name in names
        ]


def _attach_build_sweep(
    conn: Connection,
    configs: list[dict[str, Any]],
    scopes: dict[str, Indices],
    *,
    questions: dict[str, Vectors32],
    vectors: Vectors16,
    model: str,
) -> None:
    """The index build sweep over this store's configurations, into each of them."""
    names = [config["name"] for config in configs]
    rows = index_build_sweep(
        conn,
        scopes,
        questions={name: questions[name] for name in names},
        vectors=vectors,
        model=model,
    )
    for config in configs:
        config["index_build_sweep"] = rows[config["name"]]


def run(
    *, episodes: int, queries: int, cache_dir: Path, database_url: str | None, sweep: bool = False
) -> dict[str, Any]:
    """Generate, embed, load and measure every configuration; the results as one object."""
    started = time.perf_counter()
    corpus = generate_corpus(episodes)
    owners, scopes = assign_tenants(episodes)
    scopes[SINGLE_TENANT] = np.arange(episodes, dtype=np.int64)
    embedder = Embedder()
    start = time.perf_counter()
    vectors, cached = embed_corpus(embedder, [episode.text for episode in corpus], cache_dir)
    timings: dict[str, Any] = {
        "embed_s": round(time.perf_counter() - start, 1),
        "embeddings_cached": cached,
    }
    embedder.load()
    model = embedder.model_id
    questions = {
        name: embedder.embed(generate_questions(corpus, scope, queries, seed=SEED + number))
        for number, (name, scope) in enumerate(scopes.items())
    }
    measured: dict[str, Any] = {"questions": questions, "vectors": vectors, "model": model}
    tenants = [name for name, _share in SHARES]
    with scratch_database(database_url) as conninfo:
        timings["multi_tenant_load"] = load_store(conninfo, corpus, owners, vectors, model=model)
        start = time.perf_counter()
        configs = _measure_store(conninfo, tenants, scopes, sweep=sweep, **measured)
        timings["multi_tenant_measure_s"] = round(time.perf_counter() - start, 1)
        with connect_to(conninfo) as conn:
            server = _server_facts(conn)
            storage = _storage(conn, vectors.shape[1])
            if sweep:
                _attach_build_sweep(conn, configs, scopes, **measured)
    with scratch_database(database_url) as conninfo:
        solo = [SINGLE_TENANT] * episodes
        timings["single_tenant_load"] = load_store(conninfo, corpus, solo, vectors, model=model)
        start = time.perf_counter()
        solo_configs = _measure_store(conninfo, [SINGLE_TENANT], scopes, sweep=sweep, **measured)
        timings["single_tenant_measure_s"] = round(time.perf_counter() - start, 1)
        if sweep:
            with connect_to(conninfo) as conn:
                _attach_build_sweep(conn, solo_configs, scopes, **measured)
        configs += solo_configs
    timings["total_s"] = round(time.perf_counter() - started, 1)
    return {
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            **server,
        },
        "episodes": episodes,
        "queries_per_config": queries,
        "k": K,
        "recall": "share of the exact top-10 (numpy over the stored halfvec values) found;"
        f" a hit within {TIE_TOLERANCE} of the 10th neighbour's similarity counts (ties)",
        "exact_scan_limit": EXACT_SCAN_LIMIT,
        "hnsw_ef_search": HNSW_EF_SEARCH,
        "model": model,
        "configs": configs,
        "storage": storage,
        "timings": timings,
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the benchmark, print the summary, write it to ``--out``; return it."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=200_000, help="episodes in the store")
    parser.add_argument("--queries", type=int, default=100, help="queries per configuration")
    parser.add_argument("--out", type=Path, default=Path("evals/results/evidence.json"))
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=Path("evals/results/cache"),
        help="where embedded vectors are cached between runs",
    )
    parser.add_argument(
        "--sweep",
        action="store_true",
        help="also sweep the forced HNSW path: ef_search, max_scan_tuples, iterative scan mode",
    )
    args = parser.parse_args(argv)
    results = run(
        episodes=args.episodes,
        queries=args.queries,
        cache_dir=args.cache_dir,
        database_url=os.environ.get("DATABASE_URL"),
        sweep=args.sweep,
    )
    text = json.dumps(results, indent=2)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    # The search modes' results (evals.bench.evidence.modes) are a run of their own: kept.
    kept = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
    written = {**results, **({"modes": kept["modes"]} if "modes" in kept else {})}
    args.out.write_text(json.dumps(written, indent=2) + "\n", encoding="utf-8")
    return results


if __name__ == "__main__":
    main()
