"""Lexical and hybrid evidence search: full-text search over the episodes' stored documents
(``episodes.text_search``, migration 0032), alone or fused with the vector ranks.

The lexical leg reads the query's words as the documents were built (the same text search
configuration, ``store.db.text_search``) and ranks episodes by the rare words they share with
it. A word weighs what BM25 gives it, ``ln(1 + (N - n + 0.5) / (n + 0.5))``: ``N`` the scope's
size, ``n`` the scope's episodes holding it, counted up to ``COMMON``; a word held by ``COMMON``
or more (``the``, ``is``) is left out, so common words cost little in a large tenant. An
episode weighs the sum of its words', and only those within ``TIER`` of the best are ranked.
PostgreSQL's ``ts_rank`` knows no such weight: with it, a question's common words would rank
every chatty episode above the one holding the asked order number.

The hybrid mode fuses the two legs by reciprocal rank fusion (each episode scores
``1 / (RRF_K + rank)`` in each list it is in), in one statement: both ranked lists are CTEs,
joined by a FULL JOIN. Its vector leg is the vector search's (``store.episodes.evidence``): an
exact scan of a scope up to the exact limit, counted and scanned in the first statement, and
the HNSW index for a larger one, in a second. Both legs search the same scope, with the same
filters, under the same row-level security. A hit's ``score`` stays its cosine similarity.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from store.contract.reads import SearchMode, SearchPlan
from store.db.text_search import DEFAULT_TEXT_SEARCH_CONFIG
from store.episodes.evidence import (
    EXACT_SCAN_LIMIT,
    HNSW_EF_SEARCH,
    HNSW_SETTINGS,
    SCOPE_FILTERS,
    EvidenceHit,
    SearchScope,
    evidence_hit,
    exact_source,
    scope_condition,
    search_evidence,
    search_params,
    shape_of,
)
from store.episodes.hnsw import halfvec

RRF_K = 60
"""Reciprocal rank fusion's constant (Cormack et al. 2009, as Elasticsearch and OpenSearch
use it): past the first few ranks, the lists' order matters more than who topped them."""
COMMON = 1_000
"""A word held by this many episodes of the scope is too common to rank by."""
TIER = 0.5
"""The lexical leg ranks only the episodes whose words weigh at least this share of the best
one's: an episode sharing only the question's commoner words (every order confirmation holds
"order") would otherwise take a rank of its own, and in the fusion outweigh the one episode
holding the asked order number."""
MIN_DEPTH = 50
"""Each leg of a hybrid search ranks at least this many episodes before they are fused."""
_WHOLE_TENANT = SearchScope()


@dataclass(frozen=True, slots=True)
class TextQuery:
    """The query's words and how to search with them."""

    text: str
    mode: SearchMode
    config: str = DEFAULT_TEXT_SEARCH_CONFIG
    """The text search configuration the episodes' documents are built with."""


def _lexical_scope(scope: SearchScope) -> str:
    """The conditions on episodes ``e`` of a lexical search over ``scope``."""
    conditions = ["e.tenant_id = %(tenant_id)s AND e.erased_at IS NULL"]
    conditions += [
        condition for field, condition in SCOPE_FILTERS.items() if getattr(scope, field) is not None
    ]
    return " AND ".join(conditions)


# The query's words as tsquery lexemes (a tsvector's are distinct), each taken whole: quoted,
# so "ord-88213" is one lexeme, as the documents hold it. {gate} holds the first statement back
# when the scope is over the exact limit.
_WORDS = r"""
words AS MATERIALIZED (
    SELECT ('''' || replace(replace(t.lexeme, '\', '\\'), '''', '''''') || '''')::tsquery
        AS word
    FROM unnest(to_tsvector(%(text_search)s::regconfig, %(text)s)) AS t
    WHERE {gate}
)"""

# Then each word's weight, the episodes holding any of them with the sum of theirs, and those
# within TIER of the best, ranked (ties share a rank). OFFSET 0 keeps each word's lookup a scan
# of the (tenant, document) GIN index. {scope_size} is the scope's count of vectors: the one
# statement made. {indexed} is true where this path runs (see _SCOPED).
_RARE_BY_INDEX = """
    SELECT words.word,
           ln(1.0 + (greatest({scope_size}, held.n) - held.n + 0.5) / (held.n + 0.5)) AS weight
    FROM words CROSS JOIN LATERAL (
        SELECT count(*) AS n FROM (
            SELECT 1 FROM episodes AS e WHERE {scope} AND e.text_search @@ words.word
            LIMIT %(common)s) AS holding
    ) AS held
    WHERE held.n BETWEEN 1 AND %(common)s - 1 AND {indexed}"""

_MATCHED_BY_INDEX = """
        SELECT found.episode_id, rare.weight
        FROM rare CROSS JOIN LATERAL (
            SELECT e.id AS episode_id FROM episodes AS e
            WHERE {scope} AND e.text_search @@ rare.word OFFSET 0
        ) AS found
        WHERE {indexed}"""

_RANKED = """
lexical AS MATERIALIZED (
    SELECT matched.episode_id, rank() OVER (ORDER BY matched.weight DESC) AS rank
    FROM matched
    WHERE matched.weight >= %(tier)s * (SELECT max(weight) FROM matched)
    ORDER BY matched.weight DESC, matched.episode_id
    LIMIT %(depth)s
)"""

# Each episode's words' weights summed, then ranked.
_SUMMED = (
    """
    ) AS found
    GROUP BY found.episode_id
),"""
    + _RANKED
)

_LEXICAL = (
    _WORDS
    + """,
rare AS MATERIALIZED ("""
    + _RARE_BY_INDEX
    + """
),
matched AS MATERIALIZED (
    SELECT found.episode_id, sum(found.weight) AS weight FROM ("""
    + _MATCHED_BY_INDEX
    + _SUMMED
)

# A subject's scope, in the first statement: its episodes (at most the exact limit's worth,
# read from the subject's own rows outward) are read once with their documents, and every word
# is matched against those in memory. Looking each word up per episode instead cost two index
# probes per (word, episode): 13 of a search's 16 ms for a subject of 106 episodes among
# 200,000. A subject with more episodes in scope than the limit (the statement's size counts
# only those with vectors) keeps the per-word index path.
_SCOPED = (
    _WORDS
    + """,
scoped AS MATERIALIZED (
    SELECT e.id, e.text_search
    FROM episode_subjects AS s
    CROSS JOIN LATERAL (SELECT * FROM episodes AS e
        WHERE e.tenant_id = %(tenant_id)s AND e.id = s.episode_id OFFSET 0) AS e
    WHERE s.tenant_id = %(tenant_id)s AND s.subject = %(subject)s AND {filters} AND {gate}
    LIMIT %(limit)s
),
scoped_hits AS MATERIALIZED (
    SELECT words.word, scoped.id AS episode_id
    FROM words JOIN scoped ON scoped.text_search @@ words.word
    WHERE (SELECT count(*) FROM scoped) < %(limit)s
),
rare AS MATERIALIZED (
    SELECT counted.word,
           ln(1.0 + (greatest({scope_size}, counted.n) - counted.n + 0.5) / (counted.n + 0.5))
               AS weight
    FROM (SELECT scoped_hits.word, count(*) AS n FROM scoped_hits
          GROUP BY scoped_hits.word) AS counted
    WHERE counted.n < %(common)s
    UNION ALL"""
    + _RARE_BY_INDEX
    + """
),
matched AS MATERIALIZED (
    SELECT found.episode_id, sum(found.weight) AS weight FROM (
        SELECT scoped_hits.episode_id, rare.weight
        FROM scoped_hits JOIN rare ON rare.word = scoped_hits.word
        UNION ALL"""
    + _MATCHED_BY_INDEX
    + _SUMMED
)
_EVERY_SCOPE = "true"
_OVER_SCOPED = "(SELECT count(*) FROM scoped) >= %(limit)s"

_EXACT_NEAREST = """
nearest AS MATERIALIZED (
    SELECT scanned.episode_id,
           row_number() OVER (ORDER BY scanned.distance, scanned.episode_id) AS rank
    FROM (SELECT v.episode_id, v.embedding <=> %(query)s AS distance
          {source} AND (SELECT n FROM size) < %(limit)s
          ORDER BY distance, v.episode_id LIMIT %(depth)s) AS scanned
)"""

_HNSW_NEAREST = """
nearest AS MATERIALIZED (
    SELECT walked.episode_id,
           row_number() OVER (ORDER BY walked.distance, walked.episode_id) AS rank
    FROM (SELECT v.episode_id, {distance} AS distance
          FROM episode_vectors AS v
          JOIN episodes AS e ON e.tenant_id = v.tenant_id AND e.id = v.episode_id
          {condition} ORDER BY {distance} LIMIT %(depth)s) AS walked
)"""

_NO_NEAREST = """
nearest AS (SELECT NULL::text AS episode_id, NULL::bigint AS rank WHERE false)"""

# Fused by reciprocal rank; each hit's text and cosine similarity read by its key.
_FUSED = """
fused AS MATERIALIZED (
    SELECT coalesce(nearest.episode_id, lexical.episode_id) AS episode_id,
           coalesce(1.0 / (%(rrf_k)s + nearest.rank), 0)
           + coalesce(1.0 / (%(rrf_k)s + lexical.rank), 0) AS fused
    FROM nearest FULL JOIN lexical ON lexical.episode_id = nearest.episode_id
    ORDER BY fused DESC, episode_id
    LIMIT %(k)s
)"""

_HITS = """
SELECT fused.episode_id, e.occurred_at, e.recorded_at, e.kind, e.session_id, e.text,
       coalesce(1 - (v.embedding <=> %(query)s), 0) AS score
FROM fused
JOIN episodes AS e ON e.tenant_id = %(tenant_id)s AND e.id = fused.episode_id
LEFT JOIN episode_vectors AS v
    ON v.tenant_id = %(tenant_id)s AND v.model = {model} AND v.episode_id = fused.episode_id
ORDER BY fused.fused DESC, fused.episode_id"""


def fused_statements(
    model: str, scope: SearchScope, *, dimensions: int, mode: SearchMode
) -> tuple[sql.Composed, sql.Composed]:
    """The first (counted, exact) and the second (HNSW) statement of a lexical or hybrid
    search: the first counts the scope and runs the legs only when the count is within the
    exact limit; the second runs them on a larger scope, its vector leg on the HNSW index.
    Composed once for each shape of scope (``store.episodes.evidence.shape_of``)."""
    return _fused_statements(model, shape_of(scope), dimensions, mode)


@functools.lru_cache(maxsize=256)
def _fused_statements(
    model: str, scope: SearchScope, dimensions: int, mode: SearchMode
) -> tuple[sql.Composed, sql.Composed]:
    typed = halfvec(dimensions)
    hnsw = sql.SQL(_HNSW_NEAREST).format(
        condition=scope_condition(model, scope),
        distance=sql.SQL("(v.embedding::{typed}) <=> (%(query)s::{typed})").format(typed=typed),
    )
    exact = sql.SQL(_EXACT_NEAREST).format(source=exact_source(model, scope))
    none = sql.SQL(_NO_NEAREST)
    hybrid = mode == "hybrid"
    first = _compose(model, scope, nearest=exact if hybrid else none, first=True)
    second = _compose(model, scope, nearest=hnsw if hybrid else none, first=False)
    return first, second


def _compose(
    model: str, scope: SearchScope, *, nearest: sql.Composable, first: bool
) -> sql.Composed:
    """One statement of ``fused_statements``, with its vector leg ``nearest``."""
    scoped = first and scope.subject is not None
    lexical = sql.SQL(_SCOPED if scoped else _LEXICAL).format(
        gate=sql.SQL("(SELECT n FROM size) < %(limit)s" if first else "true"),
        scope=sql.SQL(_lexical_scope(scope)),
        filters=sql.SQL(_lexical_scope(replace(scope, subject=None))),
        indexed=sql.SQL(_OVER_SCOPED if scoped else _EVERY_SCOPE),
        # The first statement counts the scope; the second knows the count from it.
        scope_size=sql.SQL("(SELECT n FROM size)" if first else "%(scope_size)s::bigint"),
    )
    hits = sql.SQL(_HITS).format(model=sql.Literal(model))
    ctes = lexical + sql.SQL(",") + nearest + sql.SQL(",") + sql.SQL(_FUSED)
    if not first:
        return sql.SQL("WITH ") + ctes + sql.SQL(" ") + hits
    size = (
        sql.SQL("size AS MATERIALIZED (SELECT count(*) AS n FROM (SELECT 1 ")
        + exact_source(model, scope)
        + sql.SQL(" LIMIT %(limit)s) AS counted),")
    )
    return (
        sql.SQL("WITH ")
        + size
        + ctes
        + sql.SQL(" SELECT size.n, hit.* FROM size LEFT JOIN LATERAL (")
        + hits
        + sql.SQL(") AS hit ON true")
    )


def search_words(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    *,
    query: np.ndarray[Any, Any],
    words: TextQuery | None,
    model: str,
    dimensions: int,
    k: int,
    scope: SearchScope = _WHOLE_TENANT,
    exact_limit: int = EXACT_SCAN_LIMIT,
    ef_search: int = HNSW_EF_SEARCH,
) -> tuple[list[EvidenceHit], SearchPlan]:
    """The ``k`` episodes of the scope that ``words.mode`` ranks first: without words or in
    the vector mode, those nearest to ``query`` (``store.episodes.evidence.search_evidence``).

    In the lexical and hybrid modes one statement counts the scope and, when it is within the
    exact limit, runs both legs; only a larger scope takes a second statement, whose vector leg
    walks the HNSW index. ``query`` (a unit vector) gives every hit its cosine similarity, and
    the hybrid mode its vector leg.
    """
    if words is None or words.mode == "vector":
        return search_evidence(
            conn,
            tenant_id,
            query=query,
            model=model,
            dimensions=dimensions,
            k=k,
            scope=scope,
            exact_limit=exact_limit,
            ef_search=ef_search,
        )
    first, second = fused_statements(model, scope, dimensions=dimensions, mode=words.mode)
    params = {
        **search_params(tenant_id, scope, query, k=k, exact_limit=exact_limit),
        "text": words.text,
        "text_search": words.config,
        "common": COMMON,
        "tier": TIER,
        "depth": max(MIN_DEPTH, 2 * k),
        "rrf_k": RRF_K,
    }
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(first, params).fetchall()
    size = int(rows[0]["n"]) if rows else 0
    hybrid = words.mode == "hybrid"
    if size <= exact_limit:
        hits = [evidence_hit(row) for row in rows if row["episode_id"] is not None]
        method: Any = "exact" if hybrid else "full_text"
        return hits, SearchPlan(
            method=method, scope_size=size, scope_size_capped=False, mode=words.mode
        )
    if hybrid:  # SET LOCAL, as store.episodes.evidence.search_evidence says why
        conn.execute(HNSW_SETTINGS.format(ef=sql.Literal(int(ef_search))))
    with conn.cursor(row_factory=dict_row) as cur:
        found = cur.execute(second, {**params, "scope_size": size}).fetchall()
    return [evidence_hit(row) for row in found], SearchPlan(
        method="hnsw" if hybrid else "full_text",
        scope_size=size,
        scope_size_capped=True,
        mode=words.mode,
    )
