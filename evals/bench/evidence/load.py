"""The evidence benchmark's corpus in the database: embeddings cached on disk, bulk-loaded."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from pgvector import HalfVector
from pgvector.psycopg import register_vector
from tqdm.auto import tqdm

from evals.bench.evidence.corpus import (
    Episode,
)
from retrieval.search.embeddings import DEFAULT_MODEL_ID, Embedder
from store.bench import Connection, content_hash, index_name, migrate_database, raw_connection

EMBED_CHUNK = 2_048

# The default model's partial HNSW index: dropped for the load, then rebuilt from its own
# definition, which is faster than maintaining it row by row.
HNSW_INDEX = index_name(DEFAULT_MODEL_ID)

MAINTENANCE_WORK_MEM = "2GB"

CREATED = datetime(2026, 5, 1, tzinfo=UTC)

Vectors16 = NDArray[np.float16]

Vectors32 = NDArray[np.float32]


def _corpus_key(embedder: Embedder, texts: Sequence[str]) -> str:
    digest = hashlib.sha256(embedder.model_id.encode())
    for text in texts:
        digest.update(text.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def embed_corpus(
    embedder: Embedder, texts: Sequence[str], cache_dir: Path
) -> tuple[Vectors16, bool]:
    """Half-precision unit vectors of ``texts``, from the cache when present; and whether so."""
    path = cache_dir / f"vectors-{len(texts)}-{_corpus_key(embedder, texts)}.npy"
    if path.exists():
        return np.load(path).astype(np.float16, copy=False), True
    embedder.load()
    parts: list[Vectors16] = []
    with tqdm(total=len(texts), desc="embedding episodes", unit="text") as bar:
        for start in range(0, len(texts), EMBED_CHUNK):
            chunk = texts[start : start + EMBED_CHUNK]
            parts.append(embedder.embed(chunk).astype(np.float16))
            bar.update(len(chunk))
    vectors = np.concatenate(parts) if parts else np.zeros((0, embedder.dimensions), np.float16)
    cache_dir.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.stem + ".partial.npy")
    np.save(partial, vectors)
    partial.replace(path)
    return vectors, False


@contextmanager
def connect_to(conninfo: str, *, autocommit: bool = False) -> Iterator[Connection]:
    with raw_connection(conninfo, autocommit=autocommit) as conn:
        register_vector(conn)
        conn.execute("SET TIME ZONE 'UTC'")
        conn.commit()
        yield conn


def _episode_id(index: int) -> str:
    return f"ep-{index:07d}"


def episode_index(episode_id: str) -> int:
    return int(episode_id.removeprefix("ep-"))


def load_store(
    conninfo: str,
    corpus: Sequence[Episode],
    owners: Sequence[str],
    vectors: Vectors16,
    *,
    model: str,
) -> dict[str, float]:
    """Migrate, bulk-copy tenants, episodes and vectors, rebuild the HNSW index, analyze."""
    timings: dict[str, float] = {}
    migrate_database(conninfo)
    with connect_to(conninfo, autocommit=True) as conn:
        row = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = %(name)s", {"name": HNSW_INDEX}
        ).fetchone()
        if row is None:
            raise RuntimeError(f"index {HNSW_INDEX} is missing: are the migrations applied?")
        index_definition = str(row[0])
        start = time.perf_counter()
        with conn.transaction(), conn.cursor() as cur:
            cur.execute(f"DROP INDEX {HNSW_INDEX}")
            with cur.copy("COPY tenants (tenant_id, created_at) FROM STDIN") as copy:
                for tenant in sorted(set(owners)):
                    copy.write_row((tenant, CREATED))
            with cur.copy(
                "COPY episodes (tenant_id, id, occurred_at, recorded_at, kind,"
                " session_id, text, content_hash) FROM STDIN"
            ) as copy:
                for index, (episode, owner) in enumerate(zip(corpus, owners, strict=True)):
                    copy.write_row(
                        (
                            owner,
                            _episode_id(index),
                            episode.occurred_at,
                            CREATED,
                            episode.kind,
                            f"session-{index // 25}",
                            episode.text,
                            content_hash(episode.text),
                        )
                    )
            with cur.copy(
                "COPY episode_subjects (tenant_id, subject, episode_id) FROM STDIN"
            ) as copy:
                for index, (episode, owner) in enumerate(zip(corpus, owners, strict=True)):
                    copy.write_row((owner, episode.subject, _episode_id(index)))
            with cur.copy(
                "COPY episode_vectors (tenant_id, episode_id, model, embedding, created_at)"
                " FROM STDIN (FORMAT BINARY)"
            ) as copy:
                copy.set_types(["text", "text", "text", "halfvec", "timestamptz"])
                for index, owner in enumerate(owners):
                    copy.write_row(
                        (owner, _episode_id(index), model, HalfVector(vectors[index]), CREATED)
                    )
        timings["copy_s"] = round(time.perf_counter() - start, 1)
        start = time.perf_counter()
        with conn.transaction():
            conn.execute(f"SET LOCAL maintenance_work_mem = '{MAINTENANCE_WORK_MEM}'")
            conn.execute(index_definition.encode())
        timings["hnsw_build_s"] = round(time.perf_counter() - start, 1)
        start = time.perf_counter()
        conn.execute("VACUUM ANALYZE episodes")
        conn.execute("VACUUM ANALYZE episode_vectors")
        conn.execute("VACUUM ANALYZE episode_subjects")
        timings["analyze_s"] = round(time.perf_counter() - start, 1)
    return timings
