"""Mem0's open-source ``Memory`` as an arm: episodes added without inference, on pgvector.

``Memory.from_config`` gets the pgvector store on a database of its own (no HNSW or DiskANN
index, so its search is an exact scan as the baselines' is), the evaluation's embedding model,
and a history file in a temporary folder. Each episode is added with ``infer=False``: stored as
written, with no LLM deciding what to keep; ``agent_id`` is the tenant and ``user_id`` the
subject, and a question searches by both (by the tenant alone without a subject). The search
is Mem0's own: semantic candidates rescored with its BM25 keyword match and cut at its default
score threshold (0.1); without Mem0's ``nlp`` extra (spaCy, not installed by ours) it matches
the raw words and adds no entity boost. Mem0 still builds an LLM client at start; it is pointed
at a closed local port and never called. Telemetry is turned off before Mem0 is imported, so
the arm makes no outbound call.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from evals.peers.episodes import PeerMemory, Placed
from retrieval.search.embeddings import Embedder
from store.bench import ConnectionPool, temporary_database

UNREACHABLE = "http://127.0.0.1:9/v1"
"""The never-called LLM client's endpoint: the discard port on this machine."""
COLLECTION = "episodes"


class Mem0Memory(PeerMemory):
    """Episodes as Mem0 memories, one per subject they are filed under."""

    def __init__(
        self, memory: Any, *, subjects: Mapping[tuple[str, str], set[str]], k: int
    ) -> None:
        super().__init__(subjects=subjects, k=k)
        self.memory = memory

    def put(self, tenant: str, subject: str | None, *, episode_id: str, text: str) -> str:
        """Add the text as one memory, as written (``infer=False``); its id."""
        added = self.memory.add(
            [{"role": "user", "content": text}],
            **_scope(tenant, subject),
            metadata={"episode_id": episode_id},
            infer=False,
        )
        [result] = added["results"]
        return str(result["id"])

    def delete(self, tenant: str, placed: Placed) -> None:
        """Delete the memory."""
        self.memory.delete(placed.stored_id)

    def search(
        self, tenant: str, subject: str | None, *, query: str, k: int
    ) -> list[tuple[str, str]]:
        """Mem0's search in the scope, best first."""
        found = self.memory.search(query, filters=_scope(tenant, subject), top_k=k)
        return [(hit["metadata"]["episode_id"], hit["memory"]) for hit in found["results"]]


def _scope(tenant: str, subject: str | None) -> dict[str, str]:
    return {"agent_id": tenant} if subject is None else {"agent_id": tenant, "user_id": subject}


@contextmanager
def open_mem0(
    server: str, *, embedder: Embedder, subjects: Mapping[tuple[str, str], set[str]], k: int
) -> Iterator[Mem0Memory]:
    """A Mem0 ``Memory`` on a fresh database of ``server``, its history in a temporary folder."""
    with (
        tempfile.TemporaryDirectory(prefix="sgam-mem0-") as folder,
        temporary_database(server) as conninfo,
        ConnectionPool(conninfo, min_size=1, max_size=2) as pool,
    ):
        memory = _memory(pool, embedder=embedder, folder=Path(folder))
        try:
            yield Mem0Memory(memory, subjects=subjects, k=k)
        finally:
            memory.close()


def _memory(pool: Any, *, embedder: Embedder, folder: Path) -> Any:
    """``Memory.from_config`` on the pool, with the model read from the evaluation's source."""
    os.environ["MEM0_TELEMETRY"] = "false"  # read once, when Mem0 is first imported
    os.environ.setdefault("MEM0_DIR", str(folder))  # else Mem0 writes into ~/.mem0 on import
    from mem0 import Memory  # noqa: PLC0415 - the optional extra
    from mem0.memory import telemetry  # noqa: PLC0415

    if telemetry.MEM0_TELEMETRY:
        raise RuntimeError("Mem0 was imported with telemetry on: set MEM0_TELEMETRY=false")
    config = {
        "vector_store": {
            "provider": "pgvector",
            "config": {
                "connection_pool": pool,
                "collection_name": COLLECTION,
                "embedding_model_dims": embedder.dimensions,
                "hnsw": False,
                "diskann": False,
            },
        },
        "embedder": {
            "provider": "huggingface",
            "config": {
                "model": embedder.source,
                "embedding_dims": embedder.dimensions,
                "model_kwargs": {"device": "cpu"},
            },
        },
        "llm": {
            "provider": "openai",
            "config": {
                "model": "never-called",
                "api_key": "unused",
                "openai_base_url": UNREACHABLE,
            },
        },
        "history_db_path": str(folder / "history.db"),
    }
    return Memory.from_config(config)
