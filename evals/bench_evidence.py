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

    python -m evals.bench_evidence --out evals/results/evidence.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from numpy.typing import NDArray
from pgvector import HalfVector
from pgvector.psycopg import register_vector
from psycopg import sql
from tqdm.auto import tqdm

from evals.corpus import (
    SEED,
    SHARES,
    Episode,
    Indices,
    assign_tenants,
    generate_corpus,
    generate_questions,
)
from retrieval.embeddings import Embedder
from retrieval.evidence import EXACT_SCAN_LIMIT, HNSW_EF_SEARCH, search_evidence
from store.database import scratch_database
from store.episodes import content_hash
from store.migrate import migrate

K = 10
SINGLE_TENANT = "single_tenant"
WARMUP_QUERIES = 5
EMBED_CHUNK = 2_048
# A hit at the same distance as the k-th true neighbour (a tie, up to float rounding) counts.
TIE_TOLERANCE = 1e-5
TRUTH_CHUNK = 20_000
# The model's partial HNSW index (migration 0003): dropped for the load, then rebuilt from its
# own definition, which is faster than maintaining it row by row.
HNSW_INDEX = "episode_vectors_hnsw_all_minilm_l6_v2"
MAINTENANCE_WORK_MEM = "2GB"
# The optional HNSW investigation (--sweep): on the first SWEEP_QUERIES queries of each scope.
SWEEP_QUERIES = 50
SWEEP_EF_SEARCH = (40, 100, 200, 400, 800)
SWEEP_MAX_SCAN_TUPLES = (20_000, 100_000)  # pgvector's default first
SWEEP_BUILDS = ((16, 64), (32, 128))  # (m, ef_construction); the migrations build 16 and 128
SWEEP_BUILD_EF_SEARCH = (100, 200, 400)
# Session settings under which the planner must use the HNSW index for the HNSW path's SQL.
FORCE_INDEX = {"enable_sort": "off"}
MIB = 1024 * 1024
CREATED = datetime(2026, 5, 1, tzinfo=UTC)

Vectors16 = NDArray[np.float16]
Vectors32 = NDArray[np.float32]

# -- embeddings, cached -----------------------------------------------------------------------


def _corpus_key(embedder: Embedder, texts: Sequence[str]) -> str:
    digest = hashlib.sha256(embedder.model_id.encode())
    for text in texts:
        digest.update(text.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def embed_corpus(
    embedder: Embedder, texts: Sequence[str], cache_dir: Path
) -> tuple[Vectors16, bool]:
    """Half-precision unit vectors of ``texts``, from the cache when present; and whether so."""
    path = cache_dir / f"vectors-{len(texts)}-{_corpus_key(embedder, texts)}.npy"
    if path.exists():
        return np.load(path).astype(np.float16, copy=False), True
    embedder.load()
    parts: list[Vectors16] = []
    with tqdm(total=len(texts), desc="embedding episodes", unit="text") as bar:
        for start in range(0, len(texts), EMBED_CHUNK):
            chunk = texts[start : start + EMBED_CHUNK]
            parts.append(embedder.embed(chunk).astype(np.float16))
            bar.update(len(chunk))
    vectors = np.concatenate(parts) if parts else np.zeros((0, embedder.dimensions), np.float16)
    cache_dir.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.stem + ".partial.npy")
    np.save(partial, vectors)
    partial.replace(path)
    return vectors, False


# -- loading ----------------------------------------------------------------------------------


@contextmanager
def _connect(conninfo: str, *, autocommit: bool = False) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(conninfo, autocommit=autocommit) as conn:
        register_vector(conn)
        conn.execute("SET TIME ZONE 'UTC'")
        conn.commit()
        yield conn


def _episode_id(index: int) -> str:
    return f"ep-{index:07d}"


def _episode_index(episode_id: str) -> int:
    return int(episode_id.removeprefix("ep-"))


def load_store(
    conninfo: str,
    corpus: Sequence[Episode],
    owners: Sequence[str],
    vectors: Vectors16,
    *,
    model: str,
) -> dict[str, float]:
    """Migrate, bulk-copy tenants, episodes and vectors, rebuild the HNSW index, analyze."""
    timings: dict[str, float] = {}
    with psycopg.connect(conninfo) as conn:
        migrate(conn)
    with _connect(conninfo, autocommit=True) as conn:
        row = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = %(name)s", {"name": HNSW_INDEX}
        ).fetchone()
        if row is None:
            raise RuntimeError(f"index {HNSW_INDEX} is missing: are the migrations applied?")
        index_definition = str(row[0])
        start = time.perf_counter()
        with conn.transaction(), conn.cursor() as cur:
            cur.execute(f"DROP INDEX {HNSW_INDEX}")
            with cur.copy("COPY tenants (tenant_id, created_at) FROM STDIN") as copy:
                for tenant in sorted(set(owners)):
                    copy.write_row((tenant, CREATED))
            with cur.copy(
                "COPY episodes (tenant_id, episode_id, occurred_at, recorded_at, kind,"
                " session_id, subjects, text, content_hash) FROM STDIN"
            ) as copy:
                for index, (episode, owner) in enumerate(zip(corpus, owners, strict=True)):
                    copy.write_row(
                        (
                            owner,
                            _episode_id(index),
                            episode.occurred_at,
                            CREATED,
                            episode.kind,
                            f"session-{index // 25}",
                            [episode.subject],
                            episode.text,
                            content_hash(episode.text),
                        )
                    )
            with cur.copy(
                "COPY episode_vectors (tenant_id, episode_id, model, embedding, created_at)"
                " FROM STDIN (FORMAT BINARY)"
            ) as copy:
                copy.set_types(["text", "text", "text", "halfvec", "timestamptz"])
                for index, owner in enumerate(owners):
                    copy.write_row(
                        (owner, _episode_id(index), model, HalfVector(vectors[index]), CREATED)
                    )
        timings["copy_s"] = round(time.perf_counter() - start, 1)
        start = time.perf_counter()
        with conn.transaction():
            conn.execute(f"SET LOCAL maintenance_work_mem = '{MAINTENANCE_WORK_MEM}'")
            conn.execute(index_definition.encode())
        timings["hnsw_build_s"] = round(time.perf_counter() - start, 1)
        start = time.perf_counter()
        conn.execute("VACUUM ANALYZE episodes")
        conn.execute("VACUUM ANALYZE episode_vectors")
        timings["analyze_s"] = round(time.perf_counter() - start, 1)
    return timings


# -- measuring --------------------------------------------------------------------------------


def _unit(rows: NDArray[Any]) -> NDArray[np.float64]:
    wide = rows.astype(np.float64)
    norms = np.linalg.norm(wide, axis=-1, keepdims=True)
    return wide / np.where(norms == 0, 1, norms)


@dataclass(frozen=True, slots=True)
class Truth:
    """Exact neighbours of one query within one scope, from the stored half-precision values."""

    neighbours: frozenset[int]
    kth_similarity: float
    expected: int


def exact_truths(vectors: Vectors16, scope: Indices, queries: Vectors32) -> list[Truth]:
    """Each query's ``K`` nearest episodes of the scope by cosine, as pgvector compares them."""
    units = _unit(queries.astype(np.float16))
    similarities = np.empty((len(scope), len(queries)))
    for start in range(0, len(scope), TRUTH_CHUNK):
        rows = scope[start : start + TRUTH_CHUNK]
        similarities[start : start + len(rows)] = _unit(vectors[rows]) @ units.T
    count = min(K, len(scope))
    nearest = np.argpartition(-similarities, count - 1, axis=0)[:count]
    return [
        Truth(
            neighbours=frozenset(int(i) for i in scope[nearest[:, column]]),
            kth_similarity=float(similarities[nearest[:, column], column].min()),
            expected=count,
        )
        for column in range(len(queries))
    ]


def recall(found: Sequence[int], truth: Truth, vectors: Vectors16, query: Vectors32) -> float:
    """Share of the true neighbours found; a hit tied with the k-th neighbour counts."""
    if truth.expected == 0:
        return 1.0
    correct = 0
    unit_query = _unit(query.astype(np.float16))
    for index in found:
        tied = float(_unit(vectors[index]) @ unit_query) >= truth.kth_similarity - TIE_TOLERANCE
        correct += index in truth.neighbours or tied
    return min(correct, truth.expected) / truth.expected


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 3),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 3),
    }


@dataclass(frozen=True, slots=True)
class Outcome:
    """One query's search: episodes found, the plan's method, seconds, whether HNSW ran."""

    found: list[int]
    method: str
    seconds: float
    used_index: bool


Searcher = Callable[[Vectors32], Outcome]


def _index_scans(conn: psycopg.Connection[Any]) -> int:
    # Scans of the HNSW index this backend counted and has not flushed yet: nothing is flushed
    # inside a transaction, so two reads in one transaction say whether a statement between
    # them used the index (the planner, not the SQL's shape, decides).
    row = conn.execute(
        "SELECT pg_stat_get_xact_numscans(%(index)s::regclass)", {"index": HNSW_INDEX}
    ).fetchone()
    return int(row[0]) if row else 0


def _in_transaction(
    conn: psycopg.Connection[Any], work: Callable[[], tuple[list[int], str]]
) -> Outcome:
    """Time ``work`` alone, in a transaction of its own that is rolled back afterwards."""
    try:
        before = _index_scans(conn)
        start = time.perf_counter()
        found, method = work()
        seconds = time.perf_counter() - start
        used_index = _index_scans(conn) > before
    finally:
        conn.rollback()
    return Outcome(found, method, seconds, used_index)


def evidence_searcher(
    conn: psycopg.Connection[Any],
    tenant: str,
    *,
    model: str,
    dimensions: int,
    exact_limit: int = EXACT_SCAN_LIMIT,
    ef_search: int = HNSW_EF_SEARCH,
) -> Searcher:
    """``search_evidence`` as the server calls it, one transaction per query."""

    def search(query: Vectors32) -> Outcome:
        def work() -> tuple[list[int], str]:
            hits, plan = search_evidence(
                conn,
                tenant,
                query=query,
                model=model,
                dimensions=dimensions,
                k=K,
                exact_limit=exact_limit,
                ef_search=ef_search,
            )
            return [_episode_index(hit.episode_id) for hit in hits], plan.method

        return _in_transaction(conn, work)

    return search


def iterative_scan_searcher(
    conn: psycopg.Connection[Any],
    tenant: str,
    *,
    model: str,
    dimensions: int,
    mode: str,
    ef_search: int = HNSW_EF_SEARCH,
) -> Searcher:
    """The HNSW path's filtered nearest-neighbour scan alone, under either iterative mode.

    ``search_evidence`` always asks for ``relaxed_order``; this compares it with
    ``strict_order`` on the same index, filter and limit.
    """
    statement = sql.SQL(
        "SELECT v.episode_id FROM episode_vectors AS v"
        " JOIN episodes AS e ON e.tenant_id = v.tenant_id AND e.episode_id = v.episode_id"
        " WHERE v.tenant_id = %(tenant)s AND v.model = %(model)s AND e.erased_at IS NULL"
        " ORDER BY (v.embedding::{typed}) <=> (%(query)s::{typed}) LIMIT %(k)s"
    ).format(typed=sql.SQL("halfvec({})").format(sql.Literal(dimensions)))

    def search(query: Vectors32) -> Outcome:
        def work() -> tuple[list[int], str]:
            conn.execute(
                "SELECT set_config('hnsw.iterative_scan', %(mode)s, true),"
                " set_config('hnsw.ef_search', %(ef)s, true)",
                {"mode": mode, "ef": str(ef_search)},
            )
            params = {"tenant": tenant, "model": model, "query": HalfVector(query), "k": K}
            rows = conn.execute(statement, params).fetchall()
            return [_episode_index(row[0]) for row in rows], "hnsw"

        return _in_transaction(conn, work)

    return search


def measure(
    search: Searcher,
    *,
    queries: Vectors32,
    truths: Sequence[Truth],
    vectors: Vectors16,
) -> dict[str, Any]:
    """Recall@K and latency of ``search`` over ``queries``, after a short warm-up."""
    for query in queries[:WARMUP_QUERIES]:
        search(query)
    outcomes = [search(query) for query in queries]
    recalls = [
        recall(outcome.found, truth, vectors, query)
        for outcome, truth, query in zip(outcomes, truths, queries, strict=True)
    ]
    return {
        "method": "/".join(sorted({outcome.method for outcome in outcomes})),
        "recall_at_10": round(statistics.fmean(recalls), 4),
        "min_recall_at_10": round(min(recalls), 2),
        **_percentiles([outcome.seconds for outcome in outcomes]),
        "queries_using_hnsw_index": sum(outcome.used_index for outcome in outcomes),
        "queries_short_of_10_hits": sum(
            len(outcome.found) < truth.expected
            for outcome, truth in zip(outcomes, truths, strict=True)
        ),
    }


def _without_method(result: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in result.items() if key != "method"}


@contextmanager
def _session_settings(conn: psycopg.Connection[Any], settings: dict[str, str]) -> Iterator[None]:
    """Change settings for the session (every later transaction), restoring them afterwards."""
    previous = {}
    for name, value in settings.items():
        row = conn.execute("SELECT current_setting(%(name)s)", {"name": name}).fetchone()
        previous[name] = str(row[0]) if row else ""
        conn.execute(
            "SELECT set_config(%(name)s, %(value)s, false)", {"name": name, "value": value}
        )
    conn.commit()
    try:
        yield
    finally:
        for name, value in previous.items():
            conn.execute(
                "SELECT set_config(%(name)s, %(value)s, false)", {"name": name, "value": value}
            )
        conn.commit()


def hnsw_sweep(
    conn: psycopg.Connection[Any],
    tenant: str,
    *,
    queries: Vectors32,
    truths: Sequence[Truth],
    vectors: Vectors16,
    model: str,
    filtered: bool,
) -> list[dict[str, Any]]:
    """The HNSW index (sorts disabled so the planner must use it) under other settings."""
    dimensions = vectors.shape[1]
    common: dict[str, Any] = {"queries": queries, "truths": truths, "vectors": vectors}
    rows: list[dict[str, Any]] = []
    # Without a tenant filter the scan never iterates, so its tuple cap does not matter.
    caps = SWEEP_MAX_SCAN_TUPLES if filtered else SWEEP_MAX_SCAN_TUPLES[:1]
    with _session_settings(conn, FORCE_INDEX):
        for max_scan_tuples in caps:
            with _session_settings(conn, {"hnsw.max_scan_tuples": str(max_scan_tuples)}):
                for ef_search in SWEEP_EF_SEARCH:
                    search = evidence_searcher(
                        conn,
                        tenant,
                        model=model,
                        dimensions=dimensions,
                        exact_limit=0,
                        ef_search=ef_search,
                    )
                    rows.append(
                        {
                            "iterative_scan": "relaxed_order",
                            "ef_search": ef_search,
                            "max_scan_tuples": max_scan_tuples,
                            **_without_method(measure(search, **common)),
                        }
                    )
        for mode in ("relaxed_order", "strict_order"):
            search = iterative_scan_searcher(
                conn, tenant, model=model, dimensions=dimensions, mode=mode
            )
            rows.append(
                {
                    "iterative_scan": mode,
                    "ef_search": HNSW_EF_SEARCH,
                    "max_scan_tuples": SWEEP_MAX_SCAN_TUPLES[0],
                    "statement": "nearest-neighbour scan only",
                    **_without_method(measure(search, **common)),
                }
            )
    return rows


def index_build_sweep(
    conn: psycopg.Connection[Any],
    scopes: dict[str, Indices],
    *,
    questions: dict[str, Vectors32],
    vectors: Vectors16,
    model: str,
) -> dict[str, list[dict[str, Any]]]:
    """Rebuild the HNSW index with larger m / ef_construction; search each scope (forced)."""
    row = conn.execute(
        "SELECT indexdef FROM pg_indexes WHERE indexname = %(name)s", {"name": HNSW_INDEX}
    ).fetchone()
    conn.commit()
    assert row is not None
    definition = str(row[0])
    subsets = {name: queries[:SWEEP_QUERIES] for name, queries in questions.items()}
    truths = {name: exact_truths(vectors, scopes[name], subsets[name]) for name in subsets}
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in subsets}
    for m, ef_construction in SWEEP_BUILDS:
        options = f" WITH (m = {m}, ef_construction = {ef_construction}) WHERE "
        start = time.perf_counter()
        with conn.transaction():
            conn.execute(f"DROP INDEX {HNSW_INDEX}")
            conn.execute(f"SET LOCAL maintenance_work_mem = '{MAINTENANCE_WORK_MEM}'")
            conn.execute(definition.replace(" WHERE ", options, 1).encode())
        build = {
            "m": m,
            "ef_construction": ef_construction,
            "build_s": round(time.perf_counter() - start, 1),
            "index_mib": _relation_mib(conn, HNSW_INDEX),
        }
        with _session_settings(conn, FORCE_INDEX):
            for name, queries in subsets.items():
                for ef_search in SWEEP_BUILD_EF_SEARCH:
                    search = evidence_searcher(
                        conn,
                        name,
                        model=model,
                        dimensions=vectors.shape[1],
                        exact_limit=0,
                        ef_search=ef_search,
                    )
                    result = measure(search, queries=queries, truths=truths[name], vectors=vectors)
                    rows[name].append({**build, "ef_search": ef_search, **_without_method(result)})
    return rows


def _relation_mib(conn: psycopg.Connection[Any], name: str) -> float:
    row = conn.execute("SELECT pg_relation_size(%(name)s::regclass)", {"name": name}).fetchone()
    conn.commit()
    return round(int(row[0]) / MIB, 1) if row else 0.0


def _configuration(
    conn: psycopg.Connection[Any],
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
        "forced_hnsw": _without_method(measure(searcher(exact_limit=0), **common)),
    }
    # The HNSW path's SQL still leaves the plan to PostgreSQL, which may sort a small tenant's
    # rows instead: with sorts disabled it has to walk the global index with the tenant filter.
    with _session_settings(conn, FORCE_INDEX):
        forced = measure(searcher(exact_limit=0), **common)
    result["forced_hnsw_index"] = _without_method(forced)
    if name == SINGLE_TENANT:
        exact = measure(searcher(exact_limit=len(scope)), **common)
        result["forced_exact"] = _without_method(exact)
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


def _storage(conn: psycopg.Connection[Any], dimensions: int) -> dict[str, Any]:
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


def _server_facts(conn: psycopg.Connection[Any]) -> dict[str, Any]:
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
    with _connect(conninfo) as conn:
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
    conn: psycopg.Connection[Any],
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
        with _connect(conninfo) as conn:
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
            with _connect(conninfo) as conn:
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
    args.out.write_text(text + "\n", encoding="utf-8")
    return results


if __name__ == "__main__":
    main()
