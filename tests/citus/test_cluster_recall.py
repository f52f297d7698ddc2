"""Evidence search on the cluster finds what the single node finds.

The same episodes (the evidence benchmark's generated corpus, embedded by the real model, each
text once for both databases) are imported into a tenant on the coordinator and into a fresh
database of the embedded single node. On each, every question is searched by the HNSW path
(``exact_limit`` 0, as a scope too large to scan takes it; on the cluster the HNSW index of the
tenant's shard) and by an exact scan of the tenant; recall@10 of the first against the second
(a hit tied with the tenth counts) must be within 0.02 of the single node's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from functools import partial
from typing import Any

import numpy as np
import pytest
from psycopg_pool import ConnectionPool

from evals.bench.evidence.corpus import generate_corpus, generate_questions
from evals.bench.evidence.load import Vectors16, connect_to
from evals.bench.evidence.measure import K, evidence_searcher, exact_truths, recall
from retrieval.search.embeddings import Embedder
from store.db.database import make_pool, temporary_database
from store.db.migrate import migrate_database
from store.service import MemoryStore

EPISODES = 1_000
QUESTIONS = 20
TOLERANCE = 0.02
TENANT = "recall"


class Remembered:
    """The real model, each text embedded once however many databases ask for it."""

    def __init__(self, model: Embedder) -> None:
        self.model = model
        self.model_id = model.model_id
        self.known: dict[str, np.ndarray[Any, Any]] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray[Any, Any]:
        """One unit vector per text, as the model gives it."""
        missing = [text for text in dict.fromkeys(texts) if text not in self.known]
        if missing:
            self.known.update(zip(missing, self.model.embed(missing), strict=True))
        return np.array([self.known[text] for text in texts], dtype=np.float32)


@pytest.fixture(scope="module")
def remembered(embedder: Embedder) -> Remembered:
    """The session's model behind a memory of what it embedded."""
    return Remembered(embedder)


def _episode_lines() -> list[str]:
    return [
        json.dumps(
            {
                "tenant": TENANT,
                "id": f"ep-{index:07d}",
                "occurred_at": episode.occurred_at.isoformat(),
                "text": episode.text,
                "updates": [],
            }
        )
        for index, episode in enumerate(generate_corpus(EPISODES))
    ]


def _recall(conninfo: str, pool: ConnectionPool, model: Remembered) -> float:
    """Import and embed the corpus into ``TENANT`` through the store on ``pool``; the mean
    recall@10 of the HNSW path over the questions (the exact scan's must be 1)."""
    store = MemoryStore(pool, embedder=model)
    store.admin.create_tenant(TENANT)
    outcome = store.episodes.import_lines(_episode_lines())
    assert store.episodes.embed(outcome.recorded) == EPISODES
    corpus = generate_corpus(EPISODES)
    every = np.arange(EPISODES)
    queries = model.embed(generate_questions(corpus, every, QUESTIONS, seed=7))
    vectors: Vectors16 = model.embed([episode.text for episode in corpus]).astype(np.float16)
    truths = exact_truths(vectors, every, queries)
    dimensions = int(queries.shape[1])
    found = []
    with connect_to(conninfo) as conn:
        searcher = partial(
            evidence_searcher, conn, TENANT, model=model.model_id, dimensions=dimensions
        )
        hnsw, exact = searcher(exact_limit=0), searcher(exact_limit=EPISODES)
        for query, truth in zip(queries, truths, strict=True):
            approximate, scanned = hnsw(query), exact(query)
            assert (approximate.method, scanned.method) == ("hnsw", "exact")
            assert recall(scanned.found, truth, vectors, query) == 1
            found.append(recall(approximate.found, truth, vectors, query))
    return float(np.mean(found))


@pytest.fixture(scope="module")
def single_node(server_conninfo: str) -> Iterator[tuple[str, ConnectionPool]]:
    """A fresh migrated database on the embedded single node, and a pool on it."""
    with temporary_database(server_conninfo) as info:
        migrate_database(info)
        with make_pool(info, max_size=2) as opened:
            opened.wait()
            yield info, opened


def test_evidence_recall_on_the_cluster_is_the_single_node_s(
    conninfo: str,
    pool: ConnectionPool,
    single_node: tuple[str, ConnectionPool],
    remembered: Remembered,
) -> None:
    alone = _recall(*single_node, remembered)
    cluster = _recall(conninfo, pool, remembered)
    assert abs(cluster - alone) <= TOLERANCE, f"recall@{K}: single {alone}, cluster {cluster}"
