"""What storing one episode's vector costs as the HNSW index grows: the part of an episode write
that comes after its encoder and before its answer.

An episode written one call at a time embeds its text while its transaction writes the episode;
once the vector is back, the vector's row goes in, with its entry in the model's HNSW index, and
the transaction commits. That last step is timed here alone: for each corpus size and size of
shared buffers, a scratch database loaded as ``sgam bench`` loads it, its vectors and index read
into the buffers (``pg_prewarm``, as far as they hold them), then one vector inserted and
committed a call (an episode's own, with a seeded random direction), as the API's role, under
row-level security.

    python -m evals.bench.vector_insert [--episodes 2000 --episodes 200000] [--calls 400]
        [--shared-buffers default --shared-buffers 512MB]

Prints each size's p50 and writes ``evals/results/vector_insert.json``.
"""

from __future__ import annotations

import itertools
import os
import statistics
import time
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from pgvector import HalfVector

from evals.bench.evidence.load import connect_to
from evals.bench.row_security import machine, save
from evals.bench.served.data import TENANT
from evals.bench.served.http import Options, _floor_embedder, _prepare
from evals.bench.served.load import load_episodes
from store.bench import (
    APP_ROLE,
    EMBEDDED_SHARED_BUFFERS,
    Connection,
    Error,
    check_size,
    enter_tenant,
    index_name,
    login_as,
    raw_connection,
    scratch_database,
)

RESULTS = Path(__file__).resolve().parents[1] / "results" / "vector_insert.json"
WARMUP = 50
_INSERT = (
    "INSERT INTO episode_vectors (tenant_id, episode_id, model, embedding, embedding_truncated,"
    " created_at) VALUES (%s, %s, %s, %s, false, now())"
)


def _insert_p50_ms(app: Connection, episode_ids: list[str], model: str, *, seed: int) -> float:
    """Insert and commit one vector per episode id (warm-up calls untimed); the p50 in ms."""
    rng = np.random.default_rng(seed)
    timed = []
    for episode_id in episode_ids:
        vector = rng.standard_normal(384).astype(np.float32)
        started = time.perf_counter()
        with app.transaction():
            enter_tenant(app, TENANT)
            app.execute(
                _INSERT, (TENANT, episode_id, model, HalfVector(vector / np.linalg.norm(vector)))
            )
        timed.append(time.perf_counter() - started)
    return round(statistics.median(timed[WARMUP:]) * 1000, 3)


def _prewarm(owner: Connection, model: str) -> bool:
    """Read the vectors' table and the model's index into the shared buffers, as far as they
    hold them, as a server that has run a while has them (False: no ``pg_prewarm`` here)."""
    try:
        owner.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
    except Error:
        return False
    owner.execute("SELECT pg_prewarm('episode_vectors')")
    owner.execute("SELECT pg_prewarm(%s::regclass)", (index_name(model),))
    return True


def measure(
    sizes: list[int],
    calls: int,
    *,
    buffers: list[str | None] | None = None,
    seed: int = 1,
    cache_dir: Path | None = None,
) -> dict[str, Any]:
    """Each corpus size's p50 of one vector inserted and committed, on an embedded server with
    each of ``buffers`` shared buffers (None: PostgreSQL's default; unset: the embedded
    server's). ``cache_dir``: where the corpus's vectors are cached (``sgam bench``'s folder
    by default)."""
    embedder = _floor_embedder()
    found: dict[str, Any] = {}
    for size, shared_buffers in itertools.product(sizes, buffers or [EMBEDDED_SHARED_BUFFERS]):
        options = Options.of(quick=True, episodes=size, cache_dir=cache_dir)
        data = _prepare(options, embedder, {})
        with scratch_database(None, shared_buffers=shared_buffers) as conninfo:
            load_episodes(conninfo, data.corpus, model=embedder.model_id)
            with raw_connection(conninfo, autocommit=True) as owner:
                # Episodes whose vectors are taken out, so each call stores one anew.
                rows = owner.execute(
                    "DELETE FROM episode_vectors WHERE episode_id IN"
                    " (SELECT id FROM episodes ORDER BY id LIMIT %s) RETURNING episode_id",
                    (calls + WARMUP,),
                ).fetchall()
                owner.execute("VACUUM ANALYZE episode_vectors")
                warmed = _prewarm(owner, embedder.model_id)
            with connect_to(login_as(conninfo, APP_ROLE)) as app:
                ids = [row[0] for row in rows]
                p50 = _insert_p50_ms(app, ids, embedder.model_id, seed=seed)
            with raw_connection(conninfo) as owner:
                stored = owner.execute("SELECT count(*) FROM episode_vectors").fetchone()
                held = owner.execute("SHOW shared_buffers").fetchone()
        buffered = held[0] if held else "?"
        found[f"{size}/{buffered}"] = {
            "episodes": size,
            "shared_buffers": buffered,
            "insert_and_commit_p50_ms": p50,
            "calls": calls,
            "vectors_after": stored[0] if stored else 0,
            "prewarmed": warmed,
        }
        typer.echo(
            f"{size:>9,} episodes, {buffered:>6} of shared buffers: one vector inserted and"
            f" committed, p50 {p50:.3f} ms"
        )
    embedder.close()
    return {"sizes": found, "machine": machine() | {"cpus": os.cpu_count()}}


def main(
    episodes: Annotated[list[int] | None, typer.Option(help="Corpus sizes (repeatable).")] = None,
    calls: Annotated[int, typer.Option(help="Vectors inserted at each size.")] = 400,
    shared_buffers: Annotated[
        list[str] | None,
        typer.Option(help="Shared buffers to compare (repeatable; 'default': PostgreSQL's)."),
    ] = None,
    out: Annotated[Path, typer.Option(help="Where the results go.")] = RESULTS,
) -> None:
    """Time one vector's insert and commit at each corpus size; write the results."""
    buffers = [None if b == "default" else check_size(b) for b in shared_buffers or []]
    save(out, measure(episodes or [2_000, 200_000], calls, buffers=buffers or None))


if __name__ == "__main__":
    typer.run(main)
