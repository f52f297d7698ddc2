"""Bulk-loading ``sgam bench``'s data into the served database: COPY, never the write path.

Episodes and their vectors go in through ``evals.bench.evidence.load`` (the evidence benchmark's
loader); fact versions are streamed from their cached COPY text. Only the episodes of the
subjects the reads ask about are embedded by the model: their searches rank real vectors. Every
other episode gets a seeded synthetic unit vector, which is all the scale needs (the tenant-wide
HNSW index and the table's size) and spares embedding 200,000 texts. A synthetic vector is one of
the model's vectors with seeded noise added (cosine about 0.8 to it): uniform random directions
would do for the table's size, but an HNSW index over them builds 3x slower than over real
vectors (23 against 7 s for 20,000 in one run), a cost no real tenant pays. The vectors are
cached.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Collection, Sequence
from pathlib import Path

import numpy as np

from evals.bench.evidence.corpus import Episode
from evals.bench.evidence.load import Vectors16, Vectors32, connect_to, load_store
from evals.bench.served.data import COPY_COLUMNS, TENANT, slug
from retrieval.search.embeddings import Embedder
from store.bench import raw_connection

_CHUNK = 1 << 20
_EMBED_CHUNK = 512
NOISE = 0.75
"""A synthetic vector's noise against the model's vector it starts from: cosine about 0.8."""


@dataclasses.dataclass(frozen=True)
class Corpus:
    """The seeded episodes (subjects in words, as generated) and their cached vectors."""

    episodes: list[Episode]
    vectors: Vectors16
    vectors_cached: bool
    embedded: int
    """How many of the vectors are the model's (the rest are random)."""


def synthetic_vectors(count: int, near: Vectors32, *, seed: int) -> Vectors16:
    """``count`` seeded unit vectors in half precision, each one of ``near`` (unit vectors) with
    noise of ``NOISE`` times its length added; uniform random ones where ``near`` is empty."""
    rng = np.random.default_rng(seed)
    dimensions = near.shape[1]
    vectors = rng.standard_normal((count, dimensions), dtype=np.float32)
    if len(near):
        vectors *= NOISE / np.sqrt(dimensions)
        vectors += near[rng.integers(0, len(near), count)]
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors.astype(np.float16)


def make_corpus(
    episodes: list[Episode],
    *,
    queried: Collection[str],
    embedder: Embedder,
    seed: int,
    cache_dir: Path,
) -> Corpus:
    """The episodes with their vectors: the model's for the episodes of the ``queried``
    subjects (display names), seeded synthetic ones near those for the rest; from the cache
    when an earlier run made the same."""
    real = [index for index, episode in enumerate(episodes) if episode.subject in queried]
    digest = hashlib.sha256(f"{embedder.model_id}:{seed}:{len(episodes)}".encode())
    for index in real:
        digest.update(f"{index}\0{episodes[index].text}\0".encode())
    path = cache_dir / f"vectors-{len(episodes)}-{digest.hexdigest()[:16]}.npy"
    if path.exists():
        return Corpus(episodes, np.load(path).astype(np.float16, copy=False), True, len(real))
    model = np.zeros((len(real), embedder.dimensions), np.float32)
    for start in range(0, len(real), _EMBED_CHUNK):
        texts = [episodes[index].text for index in real[start : start + _EMBED_CHUNK]]
        model[start : start + len(texts)] = embedder.embed(texts)
    vectors = synthetic_vectors(len(episodes), model, seed=seed)
    vectors[real] = model.astype(np.float16)
    cache_dir.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.stem + ".partial.npy")
    np.save(partial, vectors)
    partial.replace(path)
    return Corpus(episodes, vectors, False, len(real))


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
