"""The lookups an index serves under row-level security (migration 0014).

Under a policy an index serves only leakproof conditions, so the hot lookups compare by plain
equality: a question's subject names against the stored folded name, and an evidence scope's
subject against ``episode_subjects``, where an episode's subjects are kept (migration 0030),
as its JSON lists them through every write: a recorded episode, a candidate naming another
subject, an import by COPY, an erased subject and an erased episode.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any
from uuid import uuid4

import psycopg
from psycopg_pool import ConnectionPool

from retrieval.search.embeddings import DEFAULT_MODEL_ID
from store.contract.receipts import memory_key, owner_key
from store.episodes.evidence import SearchScope, scope_condition
from store.episodes.hnsw import index_name
from store.errors import NotFound
from store.facts.reads import FIND_SUBJECTS, find_subjects
from store.governance import receipts
from store.service import MemoryStore
from tests.helpers import assert_value, declare, owner_connection, record
from tests.store.test_import import candidate, episode_line, import_text


def _plan(pool: ConnectionPool, tenant: str, query: str, params: dict[str, object]) -> str:
    """The plan of ``query`` as the API runs it: the pooled role, one tenant named."""
    with pool.connection() as conn, conn.transaction():
        return _plan_in(conn, tenant, query, params)


def _plan_in(
    conn: psycopg.Connection[Any], tenant: str, query: str, params: dict[str, object]
) -> str:
    conn.execute("SELECT set_config('sgam.tenant_id', %s, true)", [tenant])
    conn.execute("SET LOCAL enable_seqscan = off")
    [[plan]] = conn.execute("EXPLAIN (FORMAT JSON) " + query, params).fetchall()
    return json.dumps(plan)


def test_finding_a_question_s_subjects_is_served_by_the_folded_name_index(
    store: MemoryStore, tenant: str, pool: ConnectionPool
) -> None:
    declare(store, tenant, "city", "string")
    many = [candidate(f"Subject{n}", "city", f"city {n}") for n in range(400)]
    store.episodes.import_lines(
        import_text(tenant, [episode_line("e1", "2026-05-01T00:00:00Z", *many)])
    )
    with owner_connection(pool) as conn:
        conn.execute("ANALYZE fact_versions")
    names = ["subject7", "kim"]
    plan = _plan(pool, tenant, FIND_SUBJECTS, {"tenant_id": tenant, "names": names})
    assert "fact_versions_subject_folded" in plan
    assert "subject_folded = ANY" in plan.split('"Index Cond"', 1)[1].split('"Filter"')[0]
    with pool.connection() as conn, conn.transaction():
        conn.execute("SELECT set_config('sgam.tenant_id', %s, true)", [tenant])
        assert find_subjects(conn, tenant, names=names) == ["Subject7"]


def _pairs(
    store: MemoryStore, pool: ConnectionPool, tenant: str
) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """The tenant's (subject, episode) pairs: as its episodes list them, and as the table
    holds them."""
    listed = []
    for episode_id in ("e1", "e2", "e3", "e4"):
        with contextlib.suppress(NotFound):  # an erased episode no fact cites is gone
            listed += [(s, episode_id) for s in store.episodes.get(tenant, episode_id).subjects]
    with owner_connection(pool) as conn:
        held = conn.execute(
            "SELECT subject, episode_id FROM episode_subjects WHERE tenant_id = %s", [tenant]
        ).fetchall()
    return set(listed), set(held)


def test_an_episodes_subjects_are_its_pairs_through_every_write(
    store: MemoryStore, tenant: str, pool: ConnectionPool
) -> None:
    declare(store, tenant)
    record(store, tenant, "e1", "2026-05-01T00:00:00Z", subjects=["mira"])
    record(store, tenant, "e2", "2026-05-02T00:00:00Z")
    record(store, tenant, "e4", "2026-05-04T00:00:00Z", subjects=["kim"])
    assert assert_value(store, tenant, "e2", "2026-07-15", subject="ana").status == "written"
    assert assert_value(store, tenant, "e4", "2026-09-01", subject="mira").status == "written"
    line = episode_line(
        "e3", "2026-05-03T00:00:00Z", candidate("zoe", "passport_deadline", "2026-08-01")
    )
    store.episodes.import_lines(import_text(tenant, [line]))
    listed, held = _pairs(store, pool, tenant)
    assert held == listed
    assert held == {("mira", "e1"), ("ana", "e2"), ("zoe", "e3"), ("kim", "e4"), ("mira", "e4")}
    store.erasure.erase_subject(tenant, "kim")
    store.erasure.erase_episode(tenant, "e3")
    listed, held = _pairs(store, pool, tenant)
    assert held == listed
    assert {("mira", "e1"), ("ana", "e2")} <= held
    assert not {("kim", "e4"), ("zoe", "e3")} & held


def test_a_search_past_the_exact_limit_is_served_by_the_hnsw_index(
    store: MemoryStore, tenant: str, pool: ConnectionPool
) -> None:
    # Ordering by distance is not a condition: row-level security leaves it to the index.
    where = scope_condition(DEFAULT_MODEL_ID, SearchScope(subject="mira"))
    with pool.connection() as conn:
        statement = (
            "SELECT v.episode_id FROM episode_vectors AS v"
            " JOIN episodes AS e ON e.tenant_id = v.tenant_id AND e.id = v.episode_id"
            + where.as_string(conn)
            + "ORDER BY (v.embedding::halfvec(384)) <=> (%(query)s::halfvec(384)) LIMIT 3"
        )
    query = "[" + ",".join(["0.05"] * 384) + "]"
    with pool.connection() as conn, conn.transaction():
        conn.execute("SET LOCAL enable_sort = off")
        plan = _plan_in(
            conn, tenant, statement, {"tenant_id": tenant, "subject": "mira", "query": query}
        )
    assert index_name(DEFAULT_MODEL_ID) in plan


def test_receipt_lookups_are_served_by_their_indexes_under_the_policy(
    store: MemoryStore, tenant: str, pool: ConnectionPool
) -> None:
    # A decision's receipts, a memory's writes, and the receipts erasure deletes, among many.
    with owner_connection(pool) as conn:
        conn.execute(
            "INSERT INTO receipts (tenant_id, receipt_id, decision_id, action, memory_type,"
            " memory_key, owner_key, expected_scope_hash, observed_scope_hash, read_at,"
            " provenance, activated, recorded_at)"
            " SELECT %(tenant)s, gen_random_uuid(),"
            " CASE WHEN n %% 2 = 0 THEN gen_random_uuid() END,"
            " CASE WHEN n %% 2 = 0 THEN 'read' ELSE 'write' END,"
            " CASE WHEN n %% 3 = 0 THEN 'semantic' ELSE 'episodic' END, md5(n::text),"
            " md5((n %% 500)::text), 's', 's', CASE WHEN n %% 2 = 0 THEN now() END, 'e' || n,"
            " false, now() FROM generate_series(1, 5000) AS n",
            {"tenant": tenant},
        )
        conn.execute("ANALYZE receipts")
    owners = [owner_key(tenant, "subject", "mira", secret=b"")]
    cases: dict[str, tuple[str, dict[str, object]]] = {
        "receipts_decision": (receipts.DECISION_RECEIPTS, {"decision_id": uuid4()}),
        "receipts_writes": (
            receipts.EVIDENCE,
            {
                "decisions": [],
                "types": ["semantic"],
                "keys": [memory_key("semantic", "city", secret=b"")],
            },
        ),
        "receipts_owner": (receipts.ERASE_OWNERS, {"owners": owners}),
        "receipts_provenance": (
            receipts.ERASE_EPISODES,
            {"owners": [owner_key(tenant, "episode", "e1", secret=b"")], "ids": ["e1"]},
        ),
    }
    try:
        for index, (query, params) in cases.items():
            plan = _plan(pool, tenant, query, {"tenant_id": tenant, **params})
            assert index in plan, (index, plan)
            assert '"Seq Scan"' not in plan, plan
    finally:  # the rows are shapes for the planner, not receipts the store wrote
        with owner_connection(pool) as conn:
            conn.execute("DELETE FROM receipts WHERE tenant_id = %s", [tenant])
