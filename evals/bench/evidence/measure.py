"""Measuring evidence search: exact ground truth, recall@k with ties, latency and plans."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from pgvector import HalfVector

from evals.bench.evidence.corpus import (
    Indices,
)
from evals.bench.evidence.load import (
    HNSW_INDEX,
    Vectors16,
    Vectors32,
    episode_index,
)
from store.bench import EXACT_SCAN_LIMIT, HNSW_EF_SEARCH, Connection, halfvec, search_evidence, sql

K = 10

WARMUP_QUERIES = 5

# A hit at the same distance as the k-th true neighbour (a tie, up to float rounding) counts.
TIE_TOLERANCE = 1e-5

TRUTH_CHUNK = 20_000

# Session settings under which the planner must use the HNSW index for the HNSW path's SQL.
FORCE_INDEX = {"enable_sort": "off"}


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


def percentiles(samples: list[float]) -> dict[str, float]:
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


def _index_scans(conn: Connection) -> int:
    # Scans of the HNSW index this backend counted and has not flushed yet: nothing is flushed
    # inside a transaction, so two reads in one transaction say whether a statement between
    # them used the index (the planner, not the SQL's shape, decides).
    row = conn.execute(
        "SELECT pg_stat_get_xact_numscans(%(index)s::regclass)", {"index": HNSW_INDEX}
    ).fetchone()
    return int(row[0]) if row else 0


def _in_transaction(conn: Connection, work: Callable[[], tuple[list[int], str]]) -> Outcome:
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
    conn: Connection,
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
            return [episode_index(hit.episode_id) for hit in hits], plan.method

        return _in_transaction(conn, work)

    return search


def iterative_scan_searcher(
    conn: Connection,
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
        " JOIN episodes AS e ON e.tenant_id = v.tenant_id AND e.id = v.episode_id"
        " WHERE v.tenant_id = %(tenant)s AND v.model = %(model)s AND e.erased_at IS NULL"
        " ORDER BY (v.embedding::{typed}) <=> (%(query)s::{typed}) LIMIT %(k)s"
    ).format(typed=halfvec(dimensions))

    def search(query: Vectors32) -> Outcome:
        def work() -> tuple[list[int], str]:
            conn.execute(
                "SELECT set_config('hnsw.iterative_scan', %(mode)s, true),"
                " set_config('hnsw.ef_search', %(ef)s, true)",
                {"mode": mode, "ef": str(ef_search)},
            )
            params = {"tenant": tenant, "model": model, "query": HalfVector(query), "k": K}
            rows = conn.execute(statement, params).fetchall()
            return [episode_index(row[0]) for row in rows], "hnsw"

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
        **percentiles([outcome.seconds for outcome in outcomes]),
        "queries_using_hnsw_index": sum(outcome.used_index for outcome in outcomes),
        "queries_short_of_10_hits": sum(
            len(outcome.found) < truth.expected
            for outcome, truth in zip(outcomes, truths, strict=True)
        ),
    }


def without_method(result: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in result.items() if key != "method"}


@contextmanager
def session_settings(conn: Connection, settings: dict[str, str]) -> Iterator[None]:
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
