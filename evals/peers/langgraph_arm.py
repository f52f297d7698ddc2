"""LangGraph's ``PostgresStore`` as an arm: episodes as items in (tenant, subject) namespaces.

The store runs on a database of its own with its vector index on the evaluation's embedding
model (an embed function over the loaded model: the same vectors as every other arm) and its
``flat`` index kind, an exact scan as the baselines use, so no approximate index decides what
is found. Each episode is an item keyed by its id, its ``text`` field embedded; a question
searches the (tenant, subject) namespace, or every namespace under the tenant without a
subject, and hands over the items' texts by score. The store keeps no system time of its own
beyond its wall-clock ``created_at``, so a known-at question reads what was stored by then.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from evals.peers.episodes import PeerMemory, Placed
from retrieval.search.embeddings import Embedder
from store.bench import temporary_database

FIELD = "text"
BUILT = (
    "LangGraph's PostgresStore with its vector index (flat: exact cosine) on the same model"
    " through an embed function; an item per episode and subject in the namespace (tenant,"
    " subject), searched there"
)
"""How the arm is built and scoped, for the report."""
INFERENCE = (
    "no extraction: LangGraph's store keeps the items it is given and has none of its own"
    " (LangMem's memory manager, which asks a model to choose what to keep, is not run, with or"
    " without --extractor), so it stores the raw episodes dm reads and measures LangGraph's"
    " storage, scoping and search, not a model's choice of facts"
)
"""What the arm does not run, and why, for the report."""


class LangGraphMemory(PeerMemory):
    """Episodes in a ``PostgresStore``, one item per subject they are filed under."""

    def __init__(self, store: Any, *, subjects: Mapping[tuple[str, str], set[str]], k: int) -> None:
        super().__init__(subjects=subjects, k=k)
        self.store = store

    def put(self, tenant: str, subject: str | None, *, episode_id: str, text: str) -> str:
        """An item keyed by the episode id in the subject's namespace."""
        self.store.put(_namespace(tenant, subject), episode_id, {FIELD: text})
        return episode_id

    def delete(self, tenant: str, placed: Placed) -> None:
        """Delete the item."""
        self.store.delete(_namespace(tenant, placed.subject), placed.stored_id)

    def search(
        self, tenant: str, subject: str | None, *, query: str, k: int
    ) -> list[tuple[str, str]]:
        """The store's semantic search under the namespace prefix, best first."""
        items = self.store.search(_namespace(tenant, subject), query=query, limit=k)
        return [(item.key, item.value[FIELD]) for item in items]


def _namespace(tenant: str, subject: str | None) -> tuple[str, ...]:
    return (tenant,) if subject is None else (tenant, subject)


@contextmanager
def open_langgraph(
    server: str, *, embedder: Embedder, subjects: Mapping[tuple[str, str], set[str]], k: int
) -> Iterator[LangGraphMemory]:
    """A ``PostgresStore`` on a fresh database of ``server``, set up by its own migrations."""
    from langgraph.store.postgres import PostgresStore  # noqa: PLC0415 - the optional extra
    from langgraph.store.postgres.base import PostgresIndexConfig  # noqa: PLC0415

    def embed(texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = embedder.embed(list(texts)).tolist()
        return vectors

    index: PostgresIndexConfig = {
        "dims": embedder.dimensions,
        "embed": embed,
        "fields": [FIELD],
        "distance_type": "cosine",
        "ann_index_config": {"kind": "flat"},
    }
    with (
        temporary_database(server) as conninfo,
        PostgresStore.from_conn_string(conninfo, index=index) as store,
    ):
        store.setup()
        yield LangGraphMemory(store, subjects=subjects, k=k)
