"""The evidence benchmark's optional HNSW investigation: search settings and index builds."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from evals.bench.evidence.corpus import (
    Indices,
)
from evals.bench.evidence.load import (
    HNSW_INDEX,
    MAINTENANCE_WORK_MEM,
    Vectors16,
    Vectors32,
)
from evals.bench.evidence.measure import (
    FORCE_INDEX,
    Truth,
    evidence_searcher,
    exact_truths,
    iterative_scan_searcher,
    measure,
    session_settings,
    without_method,
)
from store.bench import HNSW_EF_SEARCH, Connection

# The optional HNSW investigation (--sweep): on the first SWEEP_QUERIES queries of each scope.
SWEEP_QUERIES = 50

SWEEP_EF_SEARCH = (40, 100, 200, 400, 800)

SWEEP_MAX_SCAN_TUPLES = (20_000, 100_000)  # pgvector's default first

SWEEP_BUILDS = ((16, 64), (32, 128))  # (m, ef_construction); the migrations build 16 and 128

SWEEP_BUILD_EF_SEARCH = (100, 200, 400)

MIB = 1024 * 1024


def hnsw_sweep(
    conn: Connection,
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
    with session_settings(conn, FORCE_INDEX):
        for max_scan_tuples in caps:
            with session_settings(conn, {"hnsw.max_scan_tuples": str(max_scan_tuples)}):
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
                            **without_method(measure(search, **common)),
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
                    **without_method(measure(search, **common)),
                }
            )
    return rows


def index_build_sweep(
    conn: Connection,
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
            "index_mib": relation_mib(conn, HNSW_INDEX),
        }
        with session_settings(conn, FORCE_INDEX):
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
                    rows[name].append({**build, "ef_search": ef_search, **without_method(result)})
    return rows


def relation_mib(conn: Connection, name: str) -> float:
    row = conn.execute("SELECT pg_relation_size(%(name)s::regclass)", {"name": name}).fetchone()
    conn.commit()
    return round(int(row[0]) / MIB, 1) if row else 0.0
