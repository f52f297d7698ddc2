"""The floor under the served calls, and the plain similarity baseline, measured in process.

The floor is what a call cannot beat: the same exact reads as one prepared SQL statement on one
connection, the encoder alone (a question, an episode text, a batch of episode texts), and
pgvector's search with the question already embedded: exact over the subject's episodes (found
through their pairs in ``episode_subjects``), and HNSW over the whole tenant. The baseline is
``dm`` of ``evals.arms.baselines``: embed the question, take the top k episodes of the subject
by exact cosine search, as the leakage evaluation runs it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from typing import Any

import numpy as np
from pgvector import HalfVector

from evals.arms.baselines import BaselineOptions, EpisodeMemory
from evals.arms.systems import Question
from evals.bench.evidence.load import connect_to
from evals.bench.served.data import TENANT, MeasuredKey
from evals.bench.served.runner import Call, Timing, run_clients
from retrieval.search.embeddings import Embedder
from server.replay.runner import ReplayClock
from store.bench import HNSW_EF_SEARCH, Connection, halfvec, sql
from store.service import open_store

K = 3
"""Episodes per search: what a context's evidence holds by default, and ``dm``'s k."""
ENCODER_BATCH = 64

_WINDOW = """
  AND recorded_at <= %(known_at)s AND (retired_at IS NULL OR retired_at > %(known_at)s)
  AND valid_from <= %(valid_at)s AND (valid_to IS NULL OR valid_to > %(valid_at)s)
"""
_VERSION = """
SELECT version_id, fact_id, subject, attribute, value, valid_from, valid_to, recorded_at,
       retired_at, supersedes, ended_by, source_episode_id, source_kind
FROM fact_versions
WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s
"""
FACT_SQL = _VERSION + "AND attribute = %(attribute)s" + _WINDOW
PROFILE_SQL = _VERSION + _WINDOW + "ORDER BY attribute"
_EXACT = """
SELECT v.episode_id, 1 - (v.embedding <=> %(query)s) AS score
FROM episode_vectors AS v
JOIN episodes AS e ON e.tenant_id = v.tenant_id AND e.id = v.episode_id
WHERE v.tenant_id = %(tenant_id)s AND v.model = {model}
  AND e.id IN (SELECT s.episode_id FROM episode_subjects AS s
               WHERE s.tenant_id = %(tenant_id)s AND s.subject = %(subject)s)
ORDER BY v.embedding <=> %(query)s LIMIT %(k)s
"""
_HNSW = """
SELECT episode_id, 1 - ((embedding::{typed}) <=> (%(query)s::{typed})) AS score
FROM episode_vectors
WHERE tenant_id = %(tenant_id)s AND model = {model}
ORDER BY (embedding::{typed}) <=> (%(query)s::{typed}) LIMIT %(k)s
"""

Times = Callable[[MeasuredKey], tuple[datetime, datetime]]
"""A read's (valid_at, known_at) for a key."""


def _now(_key: MeasuredKey) -> tuple[datetime, datetime]:
    now = datetime.now(UTC)
    return now, now


def _point_in_time(key: MeasuredKey) -> tuple[datetime, datetime]:
    return key.valid_at, datetime.now(UTC)


def _known_at(key: MeasuredKey) -> tuple[datetime, datetime]:
    return key.known_at, key.known_at


READS: dict[str, Times] = {"current": _now, "point_in_time": _point_in_time, "known_at": _known_at}
"""The exact reads by kind, as the served fact reads are asked."""


def _sql_read(conn: Connection, statement: str, keys: Sequence[MeasuredKey], times: Times) -> Call:
    def call(n: int) -> int:
        key = keys[n % len(keys)]
        valid_at, known_at = times(key)
        params: dict[str, Any] = {"valid_at": valid_at, "known_at": known_at}
        params |= {"tenant_id": TENANT, "subject": key.subject, "attribute": key.attribute}
        rows = conn.execute(statement.encode(), params, prepare=True).fetchall()
        if not rows:
            raise RuntimeError(f"the floor read found nothing for {key.subject}.{key.attribute}")
        return 1

    return call


def _search(
    conn: Connection, statement: sql.Composed, keys: Sequence[MeasuredKey], query: Any
) -> Call:
    def call(n: int) -> int:
        key = keys[n % len(keys)]
        params = {"tenant_id": TENANT, "subject": key.subject, "k": K}
        params["query"] = HalfVector(query[n % len(keys)])
        conn.execute(statement, params, prepare=True).fetchall()
        return 1

    return call


@contextmanager
def _baseline(conninfo: str, embedder: Embedder) -> Iterator[EpisodeMemory]:
    clock = ReplayClock()
    with open_store(conninfo, clock=clock, embedder=embedder, max_connections=2) as store:
        options = BaselineOptions(k=K)
        yield EpisodeMemory(store, clock, embedder=embedder, subjects={}, options=options)


def _dm(memory: EpisodeMemory, keys: Sequence[MeasuredKey]) -> Call:
    questions = [
        Question(
            tenant=TENANT,
            question=key.question,
            subject=key.subject,
            valid_at=None,
            known_at=None,
            now=None,
            gold={},
            options={},
        )
        for key in keys
    ]

    def call(n: int) -> int:
        memory.dm(questions[n % len(questions)])
        return 1

    return call


def _encoder(embedder: Embedder, texts: Sequence[str], size: int) -> Call:
    def call(n: int) -> int:
        start = (n * size) % max(1, len(texts) - size)
        embedder.embed(texts[start : start + size])
        return size

    return call


def measure_floor(
    conninfo: str,
    *,
    embedder: Embedder,
    keys: Sequence[MeasuredKey],
    texts: Sequence[str],
    timing: Timing,
) -> dict[str, dict[str, Any]]:
    """Every floor case and the baseline, one client each: name -> summary."""
    questions = [key.question for key in keys]
    query = embedder.embed(questions)
    model = sql.Literal(embedder.model_id)
    typed = halfvec(embedder.dimensions)
    with ExitStack() as stack:
        conn = stack.enter_context(connect_to(conninfo, autocommit=True))
        conn.execute(sql.SQL("SET hnsw.ef_search = {}").format(sql.Literal(HNSW_EF_SEARCH)))
        memory = stack.enter_context(_baseline(conninfo, embedder))
        cases: dict[str, Call] = {
            f"sql_fact_{kind}": _sql_read(conn, FACT_SQL, keys, times)
            for kind, times in READS.items()
        }
        cases["sql_profile"] = _sql_read(conn, PROFILE_SQL, keys, _now)
        cases["encoder_question"] = _encoder(embedder, questions, 1)
        cases["encoder_batch"] = _encoder(embedder, texts, ENCODER_BATCH)
        # One episode text a call, the texts ``POST /v1/episodes`` is sent (writes.ingest_1).
        cases["encoder_episode"] = _encoder(embedder, texts, 1)
        exact = sql.SQL(_EXACT).format(model=model)
        cases["pgvector_exact"] = _search(conn, exact, keys, query)
        hnsw = sql.SQL(_HNSW).format(model=model, typed=typed)
        cases["pgvector_hnsw"] = _search(conn, hnsw, keys, query)
        cases["baseline_search"] = _dm(memory, keys)
        return {name: run_clients([call], timing) for name, call in cases.items()}


def uses_index(conninfo: str, *, model: str, dimensions: int) -> bool:
    """Whether PostgreSQL answers the floor's HNSW statement from the HNSW index.

    The values go in as literals: a Citus coordinator cannot show the worker's plan of a
    statement with parameters ("Could not get remote plan")."""
    literal = {"tenant_id": TENANT, "k": K, "query": HalfVector(np.zeros(dimensions))}
    template = ("EXPLAIN " + _HNSW).replace("%(", "{").replace(")s", "}")
    statement = sql.SQL(template).format(
        model=sql.Literal(model),
        typed=halfvec(dimensions),
        **{name: sql.Literal(value) for name, value in literal.items()},
    )
    with connect_to(conninfo) as conn:
        plan = "\n".join(str(row[0]) for row in conn.execute(statement).fetchall())
    return "hnsw" in plan
