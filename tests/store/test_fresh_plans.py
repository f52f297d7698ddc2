"""A subject's evidence search does not depend on the tables' statistics: right after a load,
before any ANALYZE, it reads the subject's own rows once and looks each episode up by its key.
Left to the planner, the join rescanned the subject's rows once per vector of the tenant."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from pgvector import HalfVector

from retrieval.search.embeddings import DEFAULT_MODEL_ID
from store.db.database import connect
from store.episodes.evidence import SearchScope, exact_statement, search_params

pytestmark = pytest.mark.store

TENANT = "fresh"
MINE = 400  # episodes about the subject
OTHERS = 400  # episodes of the same tenant about someone else
TABLES = ("episodes", "episode_subjects", "episode_vectors")


def _nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


@pytest.fixture(scope="module")
def loaded(conninfo: str) -> str:
    """The tenant's episodes, subjects and vectors, written with autovacuum off, never analyzed."""
    with connect(conninfo) as conn:
        for table in TABLES:
            conn.execute(f"ALTER TABLE {table} SET (autovacuum_enabled = false)")
        conn.execute("INSERT INTO tenants (tenant_id, created_at) VALUES (%s, now())", [TENANT])
        conn.execute(
            "INSERT INTO episodes (tenant_id, id, occurred_at, recorded_at, kind, text,"
            " content_hash, subjects)"
            " SELECT %(t)s, 'ep-' || n, now(), now(), 'message', 'episode ' || n, 'h' || n,"
            " ARRAY[CASE WHEN n <= %(mine)s THEN 'mira' ELSE 'other-' || n END]"
            " FROM generate_series(1, %(all)s) AS n",
            {"t": TENANT, "mine": MINE, "all": MINE + OTHERS},
        )
        vectors = np.random.default_rng(7).standard_normal((MINE + OTHERS, 384))
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        with conn.cursor().copy(
            "COPY episode_vectors (tenant_id, episode_id, model, embedding, created_at) FROM STDIN"
        ) as copy:
            for n, vector in enumerate(vectors, start=1):
                copy.write_row((TENANT, f"ep-{n}", DEFAULT_MODEL_ID, HalfVector(vector), "now"))
        conn.commit()
        never = conn.execute(
            "SELECT count(*) FROM pg_class WHERE relname = ANY(%s) AND reltuples < 0",
            [list(TABLES)],
        ).fetchone()
    assert never == (len(TABLES),)  # no statistics at all: never analyzed
    return conninfo


def test_a_subjects_search_reads_its_rows_once_on_a_never_analyzed_database(loaded: str) -> None:
    scope = SearchScope(subject="mira")
    query = np.zeros(384)
    query[0] = 1.0
    params = search_params(TENANT, scope, query, k=5)
    with connect(loaded) as conn:
        statement = exact_statement(DEFAULT_MODEL_ID, scope)
        [[plan]] = conn.execute(
            b"EXPLAIN (ANALYZE, FORMAT JSON) " + statement.as_bytes(conn), params
        ).fetchall()
        hits = conn.execute(statement, params).fetchall()
    nodes = list(_nodes(plan[0]["Plan"]))
    assert hits[0][0] == MINE  # the scope's size: the subject's episodes, not the tenant's
    assert len(hits) == 5
    # No node handles more than a few times the subject's rows: no rescans per vector.
    busiest = max(node["Actual Rows"] * node["Actual Loops"] for node in nodes)
    assert busiest <= 2 * MINE, json.dumps(plan)
    # The subject's own rows are read through its index, once per part of the statement.
    subject_reads = [n for n in nodes if n.get("Relation Name") == "episode_subjects"]
    assert subject_reads
    assert all(n["Actual Loops"] == 1 for n in subject_reads)
    assert all("Index" in n["Node Type"] for n in subject_reads), json.dumps(plan)
