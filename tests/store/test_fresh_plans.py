"""A subject's reads do not depend on the tables' statistics: right after a load, before any
ANALYZE, each starts from the subject's own rows through their index. Left to the planner, the
evidence search's join rescanned the subject's rows once per vector of the tenant; a subject's
conflicts were found among every conflict of the tenant."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import numpy as np
import psycopg
import pytest
from pgvector import HalfVector

from retrieval.search.embeddings import DEFAULT_MODEL_ID
from store.db.database import connect
from store.episodes.evidence import SearchScope, exact_statement, search_params
from store.facts.reads import find_subjects, read_history
from store.facts.weak_signals import subject_signals
from store.subjects.export import export_subject
from store.subjects.merged_ids import resolve_subject
from store.subjects.names import value_names
from store.subjects.reads import read_subject_memory

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
            " content_hash)"
            " SELECT %(t)s, 'ep-' || n, now(), now(), 'message', 'episode ' || n, 'h' || n"
            " FROM generate_series(1, %(all)s) AS n",
            {"t": TENANT, "all": MINE + OTHERS},
        )
        conn.execute(
            "INSERT INTO episode_subjects (tenant_id, subject, episode_id)"
            " SELECT %(t)s, CASE WHEN n <= %(mine)s THEN 'mira' ELSE 'other-' || n END, 'ep-' || n"
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


# -- a busy subject's other reads, on a big tenant's never-analyzed tables ---------------------

BUSY = "busy"
KEYS = 20  # attributes of the subject, each with VERSIONS versions (all but the last retired)
VERSIONS = 10
CROWD = 2_000  # other subjects of the tenant, each with KEYS current versions and a conflict
DAY = datetime(2026, 1, 1, tzinfo=UTC)  # the subject's first version is recorded a day later
FACT_TABLES = ("fact_versions", "conflicts", "weak_signals", "episodes", "episode_subjects")


_PLANS: list[tuple[str, dict[str, Any]]] = []
"""(statement, plan) of each SELECT an ``_Explaining`` cursor ran."""


class _Explaining(psycopg.Cursor[Any]):
    """A cursor that runs every SELECT under EXPLAIN ANALYZE first and keeps the plans."""

    def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
        if isinstance(query, bytes):
            text = query.decode()
        else:
            text = query if isinstance(query, str) else query.as_string(self.connection)
        if text.lstrip().upper().startswith(("SELECT", "WITH")):
            with psycopg.Cursor(self.connection) as plain:  # rows as tuples, whatever the caller's
                explain = "EXPLAIN (ANALYZE, FORMAT JSON) " + text
                [[plan]] = plain.execute(explain.encode(), params).fetchall()
            _PLANS.append((text, plan[0]["Plan"]))
        return super().execute(query, params, **kwargs)


@pytest.fixture(scope="module")
def busy(conninfo: str) -> str:
    """One subject with KEYS x VERSIONS versions, conflicts, weak signals and episodes, in a
    tenant of CROWD other subjects; autovacuum off and never analyzed."""
    with connect(conninfo) as conn:
        for table in FACT_TABLES:
            conn.execute(f"ALTER TABLE {table} SET (autovacuum_enabled = false)")
        p = {"t": BUSY, "keys": KEYS, "versions": VERSIONS, "crowd": CROWD, "day": DAY}
        conn.execute("INSERT INTO tenants (tenant_id, created_at) VALUES (%(t)s, now())", p)
        conn.execute(
            "INSERT INTO attributes (tenant_id, attribute, value_type, created_at, updated_at)"
            " SELECT %(t)s, 'a' || k, 'string', now(), now() FROM generate_series(1, %(keys)s) k",
            p,
        )
        # The subject's episodes name it; each crowd subject has one episode naming it.
        conn.execute(
            "INSERT INTO episodes (tenant_id, id, occurred_at, recorded_at, kind, text,"
            " content_hash)"
            " SELECT %(t)s, 'm-' || n, now(), now(), 'message', 'about mira ' || n, 'm' || n"
            " FROM generate_series(1, %(versions)s) n"
            " UNION ALL SELECT %(t)s, 'c-' || n, now(), now(), 'message', 'crowd ' || n,"
            " 'c' || n FROM generate_series(1, %(crowd)s) n",
            p,
        )
        conn.execute(
            "INSERT INTO episode_subjects (tenant_id, subject, episode_id)"
            " SELECT %(t)s, 'mira', 'm-' || n FROM generate_series(1, %(versions)s) n"
            " UNION ALL SELECT %(t)s, 's-' || n, 'c-' || n FROM generate_series(1, %(crowd)s) n",
            p,
        )
        conn.execute(
            "INSERT INTO fact_versions (tenant_id, version_id, fact_id, subject, attribute,"
            " value, valid_from, recorded_at, retired_at, source_episode_id, source_kind,"
            " evidence_verified, schema_version)"
            " SELECT %(t)s, gen_random_uuid(), gen_random_uuid(), 'mira', 'a' || k,"
            " to_jsonb('v' || v), %(day)s, %(day)s + v * interval '1 day',"
            " CASE WHEN v < %(versions)s THEN %(day)s + (v + 1) * interval '1 day' END,"
            " 'm-' || v, 'message', false, 1"
            " FROM generate_series(1, %(keys)s) k, generate_series(1, %(versions)s) v"
            " UNION ALL SELECT %(t)s, gen_random_uuid(), gen_random_uuid(), 's-' || n, 'a' || k,"
            " to_jsonb('x'::text), %(day)s, %(day)s + interval '1 day', NULL, 'c-' || n,"
            " 'message', false, 1"
            " FROM generate_series(1, %(keys)s) k, generate_series(1, %(crowd)s) n",
            p,
        )
        conn.execute(
            "INSERT INTO conflicts (tenant_id, conflict_id, subject, attribute, valid_from,"
            " policy, incumbent_fact_id, value, source_episode_id,"
            " source_kind, evidence_verified, status, created_at, resolved_at, resolution)"
            " SELECT tenant_id, gen_random_uuid(), subject, attribute, valid_from, 'reject',"
            " fact_id, to_jsonb('y'::text), source_episode_id, 'message', false, 'resolved',"
            " recorded_at,"
            " recorded_at + interval '1 hour', 'incumbent'"
            " FROM fact_versions WHERE tenant_id = %(t)s AND attribute = 'a1'",
            p,
        )
        conn.execute(
            "INSERT INTO weak_signals (tenant_id, signal_id, subject, attribute, value,"
            " episode_id, content_hash, evidence_verified, valid_from, buffered_at, expires_at)"
            " SELECT tenant_id, gen_random_uuid(), subject, attribute, to_jsonb('w'::text),"
            " source_episode_id, 'h', false, valid_from, recorded_at, recorded_at + interval"
            " '30 days' FROM fact_versions WHERE tenant_id = %(t)s AND attribute = 'a2'",
            p,
        )
        conn.commit()
        never = conn.execute(
            "SELECT count(*) FROM pg_class WHERE relname = ANY(%s) AND reltuples < 0",
            [list(FACT_TABLES)],
        ).fetchone()
    assert never == (len(FACT_TABLES),)
    return conninfo


def _explained(conninfo: str, read: Callable[[psycopg.Connection[Any]], object]) -> None:
    """Run ``read`` on a connection that explains each of its statements; the plans of each
    statement must handle no more than a few times the subject's rows."""
    _PLANS.clear()
    with connect(conninfo) as conn:
        conn.cursor_factory = _Explaining
        read(conn)
    assert _PLANS
    for text, plan in _PLANS:
        busiest = max(_handled(node) for node in _nodes(plan))
        assert busiest <= 3 * KEYS * VERSIONS, text + "\n" + json.dumps(plan)


def _handled(node: dict[str, Any]) -> float:
    """The rows a node read over all its loops, those its filters dropped included."""
    dropped = node.get("Rows Removed by Filter", 0) + node.get("Rows Removed by Index Recheck", 0)
    return float((node["Actual Rows"] + dropped) * node["Actual Loops"])


NOW = datetime(2026, 6, 1, tzinfo=UTC)
PAST = datetime(2026, 1, 4, tzinfo=UTC)


def test_a_subjects_memory_reads_only_its_rows(busy: str) -> None:
    _explained(
        busy,
        lambda conn: read_subject_memory(
            conn, BUSY, subject="mira", valid_at=NOW, known_at=NOW, now=NOW
        ),
    )


def test_a_subjects_memory_as_known_in_the_past_reads_only_its_rows(busy: str) -> None:
    _explained(
        busy,
        lambda conn: read_subject_memory(
            conn, BUSY, subject="mira", valid_at=PAST, known_at=PAST, now=NOW, history=False
        ),
    )


def test_a_subjects_named_keys_read_only_their_rows(busy: str) -> None:
    _explained(
        busy,
        lambda conn: read_subject_memory(
            conn,
            BUSY,
            subject="mira",
            valid_at=NOW,
            known_at=NOW,
            now=NOW,
            history=False,
            attributes=["a1", "a2"],
        ),
    )


def test_a_subjects_history_reads_only_its_rows(busy: str) -> None:
    _explained(busy, lambda conn: read_history(conn, BUSY, subject="mira", now=NOW))


def test_a_subjects_weak_signals_read_only_its_rows(busy: str) -> None:
    _explained(busy, lambda conn: subject_signals(conn, BUSY, "mira"))


def test_routing_finds_and_resolves_a_subject_reading_only_its_rows(busy: str) -> None:
    def route(conn: psycopg.Connection[Any]) -> None:
        assert find_subjects(conn, BUSY, names=["MIRA"]) == ["mira"]
        assert resolve_subject(conn, BUSY, "mira") == "mira"
        held = value_names(conn, BUSY, ["mira"])["mira"]
        assert held == {f"v{v}" for v in range(1, VERSIONS + 1)}

    _explained(busy, route)


def test_a_subjects_export_reads_only_its_rows(busy: str) -> None:
    _explained(busy, lambda conn: export_subject(conn, BUSY, "mira", now=NOW))
