"""Evidence search: cosine similarity over a tenant's episodes, cited, never deciding a value.

A global HNSW index with a tenant post-filter can return almost nothing for a small tenant,
so the plan follows the size of the scope: up to ``EXACT_SCAN_LIMIT`` vectors are scanned
exactly (every row of the scope is compared, recall 1); larger scopes use the model's HNSW
index with pgvector's iterative scan, which keeps walking the graph until enough rows pass
the filters.

The scores of named episodes (a read's fact sources) come from the same stored vectors, so a
fact's source carries the similarity a search would give it. The read path reaches these
through its read snapshot (``store.db.snapshot``); quoting a hit is its own business
(``retrieval.search.cited``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from datetime import UTC, datetime
from typing import Any

import numpy as np
import psycopg
from pgvector import HalfVector
from psycopg import sql
from psycopg.rows import dict_row

from store.contract.reads import SearchPlan, SearchRequest
from store.episodes.hnsw import halfvec

EXACT_SCAN_LIMIT = 10_000
"""Scopes up to this many vectors are scanned exactly.

Measured on 200,000 episodes (evals/results/evidence.json, 2 cores): an exact scan of a
2,000-episode tenant takes 13 ms (HNSW: 34 ms, recall 0.965), of a 20,000-episode tenant
111 ms (HNSW: 11 ms, recall 0.965). The crossover lies between the two.
"""
HNSW_EF_SEARCH = 200

SCOPE_FILTERS = {
    # The subject by equality on its (episode, subject) pairs, where an episode's subjects are
    # kept (0030): an index serves that under row-level security (0014).
    "subject": (
        "e.id IN (SELECT s.episode_id FROM episode_subjects AS s"
        " WHERE s.tenant_id = %(tenant_id)s AND s.subject = %(subject)s)"
    ),
    "session_id": "e.session_id = %(session_id)s",
    "occurred_from": "e.occurred_at >= %(occurred_from)s",
    "occurred_to": "e.occurred_at < %(occurred_to)s",
    "known_at": "e.recorded_at <= %(known_at)s",
}
"""The scope's optional filters: only those the scope sets are part of the statement, so each
shape of scope gets a plan of its own (``x IS NULL OR ...`` conditions defeat the indexes once
a prepared statement's plan turns generic)."""


def scope_condition(model: str, scope: SearchScope) -> sql.Composable:
    """The WHERE clause of a search over ``scope`` (episode_vectors v joined to episodes e)."""
    conditions = ["v.tenant_id = %(tenant_id)s AND v.model = {model} AND e.erased_at IS NULL"]
    conditions += [
        condition for field, condition in SCOPE_FILTERS.items() if getattr(scope, field) is not None
    ]
    return sql.SQL(" WHERE " + " AND ".join(conditions) + " ").format(model=sql.Literal(model))


_FROM = """
    FROM episode_vectors AS v
    JOIN episodes AS e ON e.tenant_id = v.tenant_id AND e.id = v.episode_id
"""

# A subject's exact scan starts from the subject's own (episode, subject) rows and looks each
# episode's vector and row up by its key. The lateral lookups (OFFSET 0 keeps the planner from
# flattening them) fix that order, so the plan does not hang on the tables' statistics: right
# after a load, before any ANALYZE, a join left to the planner rescanned the subject's rows
# once per vector of the tenant.
_FROM_SUBJECT = """
    FROM episode_subjects AS s
    CROSS JOIN LATERAL (SELECT * FROM episode_vectors AS v
        WHERE v.tenant_id = %(tenant_id)s AND v.model = {model} AND v.episode_id = s.episode_id
        OFFSET 0) AS v
    CROSS JOIN LATERAL (SELECT * FROM episodes AS e
        WHERE e.tenant_id = %(tenant_id)s AND e.id = s.episode_id OFFSET 0) AS e
"""


def exact_source(model: str, scope: SearchScope) -> sql.Composable:
    """The FROM and WHERE clauses of an exact scan of ``scope``: a subject's scope is read
    from the subject's rows outward, any other scope from the tenant's vectors."""
    if scope.subject is None:
        return sql.SQL(_FROM) + scope_condition(model, scope)
    return (
        sql.SQL(_FROM_SUBJECT).format(model=sql.Literal(model))
        + scope_condition(model, replace(scope, subject=None))
        + sql.SQL("AND s.tenant_id = %(tenant_id)s AND s.subject = %(subject)s ")
    )


@dataclass(frozen=True, slots=True)
class SearchScope:
    """What part of a tenant's episodes to search (None = no restriction)."""

    subject: str | None = None
    session_id: str | None = None
    occurred_from: datetime | None = None
    occurred_to: datetime | None = None
    known_at: datetime | None = None  # only what was recorded by then (known-at reads)


@dataclass(frozen=True, slots=True)
class EvidenceHit:
    """One similar episode, with the text to quote and its cosine similarity."""

    episode_id: str
    occurred_at: datetime
    recorded_at: datetime
    kind: str
    session_id: str | None
    text: str
    score: float


def request_scope(request: SearchRequest) -> SearchScope:
    """The part of the tenant's episodes a search request narrows to."""
    return SearchScope(
        subject=request.subject,
        session_id=request.session_id,
        occurred_from=request.occurred_from,
        occurred_to=request.occurred_to,
    )


def _params(
    tenant_id: str, scope: SearchScope, query: np.ndarray[Any, Any], k: int
) -> dict[str, Any]:
    return {
        "tenant_id": tenant_id,
        "subject": scope.subject,
        "session_id": scope.session_id,
        "occurred_from": scope.occurred_from,
        "occurred_to": scope.occurred_to,
        "known_at": scope.known_at,
        "query": HalfVector(query),
        "k": k,
    }


def search_params(
    tenant_id: str,
    scope: SearchScope,
    query: np.ndarray[Any, Any],
    *,
    k: int,
    exact_limit: int = EXACT_SCAN_LIMIT,
) -> dict[str, Any]:
    """The parameters of a search's statements."""
    return {**_params(tenant_id, scope, query, k), "limit": exact_limit + 1}


_STAND_INS: dict[str, Any] = {
    "subject": "",
    "session_id": "",
    "occurred_from": datetime.min.replace(tzinfo=UTC),
    "occurred_to": datetime.min.replace(tzinfo=UTC),
    "known_at": datetime.min.replace(tzinfo=UTC),
}


def shape_of(scope: SearchScope) -> SearchScope:
    """``scope`` with each field it sets replaced by one stand-in. A search's statements
    depend only on which of the scope's fields are set (their values are parameters), so the
    statements of a shape are composed once (``exact_statement``,
    ``store.episodes.lexical.fused_statements``): composing them took a few percent of a
    read's time in the interpreter."""
    return SearchScope(
        **{
            field.name: None if getattr(scope, field.name) is None else _STAND_INS[field.name]
            for field in fields(SearchScope)
        }
    )


def exact_statement(model: str, scope: SearchScope) -> sql.Composed:
    """The first statement of a search: the scope's size, up to the exact limit, and, when
    it is within it, the scope's ``k`` nearest by an exact scan. The gate names only the
    count: it is checked once, before the scan, so a scope over the limit is never scanned."""
    return _exact_statement(model, shape_of(scope))


@functools.lru_cache(maxsize=256)
def _exact_statement(model: str, scope: SearchScope) -> sql.Composed:
    return sql.SQL(
        "WITH size AS MATERIALIZED (SELECT count(*) AS n FROM (SELECT 1"
        " {source} LIMIT %(limit)s) AS counted)"
        " SELECT size.n, hit.* FROM size LEFT JOIN LATERAL ("
        + _COLUMNS
        + " {source} AND size.n < %(limit)s ORDER BY {distance}, v.episode_id LIMIT %(k)s"
        ") AS hit ON true"
    ).format(
        source=exact_source(model, scope),
        # Not the index's expression, so the planner scans the scope's rows exactly.
        distance=sql.SQL("v.embedding <=> %(query)s"),
    )


def search_evidence(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    query: np.ndarray[Any, Any],
    model: str,
    dimensions: int,
    k: int,
    scope: SearchScope = SearchScope(),
    exact_limit: int = EXACT_SCAN_LIMIT,
    ef_search: int = HNSW_EF_SEARCH,
) -> tuple[list[EvidenceHit], SearchPlan]:
    """The ``k`` episodes of the scope nearest to ``query`` (a unit vector), best first.

    One statement counts the scope and, when it is small enough, scans it exactly; only a
    larger scope takes a second statement, on the HNSW index.
    """
    params = search_params(tenant_id, scope, query, k=k, exact_limit=exact_limit)
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(exact_statement(model, scope), params).fetchall()
    size = int(rows[0]["n"]) if rows else 0
    if size <= exact_limit:
        hits = [evidence_hit(row) for row in rows if row["episode_id"] is not None]
        plan = SearchPlan(method="exact", scope_size=size, scope_size_capped=False, mode="vector")
        return hits, plan
    # SET LOCAL, not set_config: a Citus coordinator passes it on to the worker whose shard
    # the search runs on (store.db.tenants.enter_tenant); one simple query, one round trip.
    conn.execute(HNSW_SETTINGS.format(ef=sql.Literal(int(ef_search))))
    condition = scope_condition(model, scope)
    typed = halfvec(dimensions)  # the index's expression, so the planner uses it
    # Relaxed order can return neighbours slightly out of order: sort the few found.
    statement = sql.SQL(
        "WITH nearest AS MATERIALIZED ("
        + _COLUMNS
        + _FROM
        + "{scope} ORDER BY {distance} LIMIT %(k)s) SELECT * FROM nearest"
        " ORDER BY score DESC, episode_id"
    ).format(
        scope=condition,
        distance=sql.SQL("(v.embedding::{typed}) <=> (%(query)s::{typed})").format(typed=typed),
    )
    with conn.cursor(row_factory=dict_row) as cur:
        hits = [evidence_hit(row) for row in cur.execute(statement, params).fetchall()]
    return hits, SearchPlan(method="hnsw", scope_size=size, scope_size_capped=True, mode="vector")


HNSW_SETTINGS = sql.SQL(
    "SET LOCAL hnsw.iterative_scan = relaxed_order; SET LOCAL hnsw.ef_search = {ef}"
)

_COLUMNS = """
    SELECT v.episode_id, e.occurred_at, e.recorded_at, e.kind, e.session_id, e.text,
           1 - ({distance}) AS score
"""


def evidence_hit(row: dict[str, Any]) -> EvidenceHit:
    return EvidenceHit(
        episode_id=row["episode_id"],
        occurred_at=row["occurred_at"],
        recorded_at=row["recorded_at"],
        kind=row["kind"],
        session_id=row["session_id"],
        text=row["text"],
        score=float(row["score"]),
    )


def episode_scores(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    query: np.ndarray[Any, Any],
    model: str,
    episode_ids: Sequence[str],
) -> dict[str, float]:
    """Each named episode's cosine similarity to ``query``, as an exact search scores it.

    An episode without a vector of ``model`` (recorded before a re-embed) is left out.
    """
    if not episode_ids:
        return {}
    rows = conn.execute(
        """
        SELECT episode_id, 1 - (embedding <=> %(query)s) FROM episode_vectors
        WHERE tenant_id = %(tenant_id)s AND model = %(model)s AND episode_id = ANY(%(ids)s)
        """,
        {
            "tenant_id": tenant_id,
            "model": model,
            "ids": list(episode_ids),
            "query": HalfVector(query),
        },
    ).fetchall()
    return {str(episode_id): float(score) for episode_id, score in rows}


def episode_vectors(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    model: str,
    episode_ids: Sequence[str],
) -> dict[str, np.ndarray[Any, Any]]:
    """Each named episode's vector of ``model``; an episode without one is left out.

    The vectors come in binary, as pgvector's ``halfvec`` (``register_vector`` on every pooled
    connection): parsing a dozen of them from text took 1.7 ms of the request's interpreter
    time, in binary 0.2 ms, with the same floats (a half converts to a float exactly).
    """
    if not episode_ids:
        return {}
    rows = conn.execute(
        """
        SELECT episode_id, embedding FROM episode_vectors
        WHERE tenant_id = %(tenant_id)s AND model = %(model)s AND episode_id = ANY(%(ids)s)
        """,
        {"tenant_id": tenant_id, "model": model, "ids": list(episode_ids)},
        binary=True,
    ).fetchall()
    return {str(episode_id): _floats(vector) for episode_id, vector in rows}


def _floats(vector: HalfVector) -> np.ndarray[Any, Any]:
    return np.asarray(vector.to_numpy(), dtype=np.float32)
