"""Each model's partial HNSW index over its episode vectors: name and definition, in one place.

Migration 0005 built the default model's index by this definition (a test compares the two);
re-embedding builds another model's from it, and the evidence search orders by the same
indexed expression, ``embedding::halfvec(dimensions)``, so the planner can use the index.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from psycopg import sql

HNSW_M = 16
HNSW_EF_CONSTRUCTION = 128
"""The build beam: measured on 200,000 episodes (evals/results/evidence.json), 128 instead of
64 raises recall@10 at ef_search 200 from 0.968 to 0.99 for the same index size."""


@dataclass(frozen=True)
class HnswIndex:
    """A model's index: its name, and the statement that creates it unless it exists."""

    name: str
    create: sql.Composed


def index_name(model: str) -> str:
    """The HNSW index name for a model's vectors (a valid, bounded identifier)."""
    slug = re.sub(r"[^a-z0-9]+", "_", model.lower()).strip("_")
    return f"episode_vectors_hnsw_{slug}"[:63]


def halfvec(dimensions: int) -> sql.Composed:
    """The type the index casts a model's vectors to: ``halfvec(dimensions)``."""
    return sql.SQL("halfvec({})").format(sql.Literal(dimensions))


def hnsw_index(model: str, dimensions: int) -> HnswIndex:
    """The partial HNSW index for ``model``'s vectors of ``dimensions``."""
    name = index_name(model)
    create = sql.SQL(
        "CREATE INDEX IF NOT EXISTS {name} ON episode_vectors"
        " USING hnsw ((embedding::{typed}) halfvec_cosine_ops)"
        " WITH (m = {m}, ef_construction = {ef_construction})"
        " WHERE model = {model}"
    ).format(
        name=sql.Identifier(name),
        typed=halfvec(dimensions),
        m=sql.Literal(HNSW_M),
        ef_construction=sql.Literal(HNSW_EF_CONSTRUCTION),
        model=sql.Literal(model),
    )
    return HnswIndex(name, create)
