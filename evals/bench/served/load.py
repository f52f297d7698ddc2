"""Bulk-loading ``sgam bench``'s data into the served database: COPY, never the write path.

Episodes and their vectors go in through ``evals.bench.evidence.load`` (the evidence benchmark's
loader, vectors cached on disk); fact versions are streamed from their cached COPY text.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path

from evals.bench.evidence.corpus import Episode, generate_corpus
from evals.bench.evidence.load import Vectors16, connect_to, embed_corpus, load_store
from evals.bench.served.data import COPY_COLUMNS, TENANT, slug
from retrieval.search.embeddings import Embedder
from store.bench import raw_connection

_CHUNK = 1 << 20


@dataclasses.dataclass(frozen=True)
class Corpus:
    """The seeded episodes (subjects in words, as generated) and their cached vectors."""

    episodes: list[Episode]
    vectors: Vectors16
    vectors_cached: bool


def make_corpus(count: int, *, embedder: Embedder, cache_dir: Path) -> Corpus:
    """``count`` generated episodes and their embeddings (from the cache when present)."""
    episodes = generate_corpus(count)
    vectors, cached = embed_corpus(embedder, [episode.text for episode in episodes], cache_dir)
    return Corpus(episodes, vectors, cached)


def load_episodes(conninfo: str, corpus: Corpus, *, model: str) -> dict[str, float]:
    """Migrate, then COPY the tenant, the episodes (subjects as ids) and their vectors."""
    as_ids: Sequence[Episode] = [
        dataclasses.replace(episode, subject=slug(episode.subject)) for episode in corpus.episodes
    ]
    owners = [TENANT] * len(as_ids)
    return load_store(conninfo, as_ids, owners, corpus.vectors, model=model)


def load_facts(conninfo: str, files: Sequence[Path]) -> dict[str, float]:
    """COPY fact versions from cached COPY text, then analyze.

    The generator guarantees the references (declared attributes, loaded episodes), so the
    foreign-key triggers are skipped for the load (``session_replication_role``); the
    exclusion constraint and the indexes are maintained as usual.
    """
    start = time.perf_counter()
    with connect_to(conninfo) as conn, conn.cursor() as cur:
        cur.execute("SET LOCAL session_replication_role = replica")
        statement = f"COPY fact_versions ({COPY_COLUMNS}) FROM STDIN"
        with cur.copy(statement.encode()) as copy:
            for path in files:
                with path.open("rb") as rows:
                    while chunk := rows.read(_CHUNK):
                        copy.write(chunk)
        conn.commit()
    copied = time.perf_counter() - start
    with raw_connection(conninfo, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE fact_versions")
        row = conn.execute("SELECT count(*) FROM fact_versions").fetchone()
    return {
        "copy_s": round(copied, 1),
        "analyze_s": round(time.perf_counter() - start - copied, 1),
        "fact_versions": int(row[0]) if row else 0,
    }
