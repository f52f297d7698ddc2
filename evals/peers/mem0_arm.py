"""Mem0's open-source ``Memory`` as an arm, on pgvector: episodes added as written, or through
Mem0's own extraction on the evaluation's extractor.

``Memory.from_config`` gets the pgvector store on a database of its own (no HNSW or DiskANN
index, so its search is an exact scan as the baselines' is), the evaluation's embedding model,
and a history file in a temporary folder; ``agent_id`` is the tenant and ``user_id`` the
subject, and a question searches by both (by the tenant alone without a subject). The search
is Mem0's own: semantic candidates rescored with its BM25 keyword match and cut at its default
score threshold (0.1); without Mem0's ``nlp`` extra (spaCy, not installed by ours) it matches
the raw words and adds no entity boost. Telemetry is turned off before Mem0 is imported.

By default each episode is added with ``infer=False``: stored as written, with no LLM deciding
what to keep, because the evaluation gives every system the same input and Mem0's extraction
needs a model. Mem0 still builds an LLM client at start; it is pointed at a closed local port
and never called, so the arm makes no outbound call. Given the settings of SGAM's extractor
(``sgam eval leakage --extractor``), the arm adds with ``infer=True`` and Mem0's client asks the
same OpenAI-compatible endpoint and model as SGAM's extraction (``llm_config``), so both
systems extract with the same model; the arm refuses to start if Mem0's client points anywhere
else (as ``OPENROUTER_API_KEY`` in the environment would make it).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from itertools import count
from pathlib import Path
from typing import Any

from evals.peers.episodes import PeerMemory, Placed
from retrieval.search.embeddings import Embedder
from server.settings import Settings
from store.bench import ConnectionPool, temporary_database

BUILT = (
    "Mem0's open-source Memory on pgvector (no index: exact cosine) with the same model (its"
    " huggingface embedder), each episode added as a memory with agent_id the tenant and user_id"
    " the subject, searched by both with its own scoring (semantic and BM25 keyword, default"
    " threshold)"
)
"""How the arm is built and scoped, for the report."""
WITHOUT_INFERENCE = (
    "infer=False: each episode is stored as written and no LLM is asked; Mem0's own extraction"
    " (infer=True, a model choosing the facts to keep and storing those instead) is off. Why:"
    " the evaluation gives every system the same input, SGAM the history's extracted facts and"
    " the others the raw text they were extracted from, and raw-text extraction needs a model,"
    " which this run was not given. So this arm measures Mem0's storage, scoping and search"
    " over raw episodes, as dm's are measured, and not what Mem0's extraction would keep;"
    " sgam eval leakage --extractor runs it with infer=True on SGAM's extractor endpoint"
)
"""What ``infer=False`` means for the arm, and why the evaluation runs it so, for the report."""


def inference(extractor: Settings | None) -> str:
    """How the arm added episodes in a run with (or without) SGAM's extractor, in words."""
    if extractor is None or extractor.extractor_url is None:
        return WITHOUT_INFERENCE
    return (
        f"infer=True: Mem0's own extraction asked {extractor.extractor_model} at"
        f" {extractor.extractor_url}, the endpoint and model of SGAM's extraction in this run,"
        " once per episode and subject it is filed under; what it kept (not the episode) was"
        " stored and searched, and an extraction that failed stored nothing"
    )


UNREACHABLE = "http://127.0.0.1:9/v1"
"""The never-called LLM client's endpoint: the discard port on this machine."""
COLLECTION = "episodes"


class Mem0Memory(PeerMemory):
    """Episodes as Mem0 memories, per subject they are filed under: one each as written, or
    those Mem0's extraction keeps (``infer``)."""

    def __init__(
        self,
        memory: Any,
        *,
        subjects: Mapping[tuple[str, str], set[str]],
        k: int,
        infer: bool = False,
    ) -> None:
        super().__init__(subjects=subjects, k=k)
        self.memory = memory
        self.infer = infer
        self._memories: dict[str, list[str]] = {}
        self._copies = count()

    def put(self, tenant: str, subject: str | None, *, episode_id: str, text: str) -> str:
        """Add the text, as written or through Mem0's extraction; the arm's id for the copy.

        With ``infer`` an extraction that fails (the endpoint's error) stores nothing and is
        counted as ``extraction failed``, as SGAM's arm counts its own."""
        from mem0.exceptions import LLMError  # noqa: PLC0415 - the optional extra

        try:
            added = self.memory.add(
                [{"role": "user", "content": text}],
                **_scope(tenant, subject),
                metadata={"episode_id": episode_id},
                infer=self.infer,
            )
        except LLMError:
            if not self.infer:
                raise
            added = {"results": []}
            self.outcomes["extraction failed"] += 1
        ids = [str(result["id"]) for result in added["results"]]
        if self.infer:
            self.outcomes["memories"] += len(ids)
        copy = str(next(self._copies))
        self._memories[copy] = ids
        return copy

    def delete(self, tenant: str, placed: Placed) -> None:
        """Delete the copy's memories."""
        for memory_id in self._memories.pop(placed.stored_id, []):
            self.memory.delete(memory_id)

    def search(
        self, tenant: str, subject: str | None, *, query: str, k: int
    ) -> list[tuple[str, str]]:
        """Mem0's search in the scope, best first; a hit is its episode, or with ``infer`` its
        text (an episode's several memories are each a hit, one text under several subjects
        one)."""
        found = self.memory.search(query, filters=_scope(tenant, subject), top_k=k)
        return [
            (hit["memory"] if self.infer else hit["metadata"]["episode_id"], hit["memory"])
            for hit in found["results"]
        ]


def _scope(tenant: str, subject: str | None) -> dict[str, str]:
    return {"agent_id": tenant} if subject is None else {"agent_id": tenant, "user_id": subject}


def llm_config(extractor: Settings | None) -> dict[str, Any]:
    """Mem0's ``llm`` configuration: SGAM's extractor endpoint and model, or (without one) a
    client on a closed local port that is never called."""
    config: dict[str, Any]
    if extractor is None or extractor.extractor_url is None:
        config = {"model": "never-called", "api_key": "unused", "openai_base_url": UNREACHABLE}
    else:
        key = extractor.extractor_api_key
        config = {
            "model": extractor.extractor_model,
            "api_key": "unset" if key is None else key.get_secret_value(),
            "openai_base_url": extractor.extractor_url,
        }
    return {"provider": "openai", "config": config}


@contextmanager
def open_mem0(
    server: str,
    *,
    embedder: Embedder,
    subjects: Mapping[tuple[str, str], set[str]],
    k: int,
    extractor: Settings | None = None,
) -> Iterator[Mem0Memory]:
    """A Mem0 ``Memory`` on a fresh database of ``server``, its history in a temporary folder;
    with ``extractor``, adding through Mem0's extraction on that endpoint."""
    llm = llm_config(extractor)
    with (
        tempfile.TemporaryDirectory(prefix="sgam-mem0-") as folder,
        temporary_database(server) as conninfo,
        ConnectionPool(conninfo, min_size=1, max_size=2) as pool,
    ):
        memory = _memory(pool, embedder=embedder, folder=Path(folder), llm=llm)
        try:
            _check_endpoint(memory, llm["config"]["openai_base_url"])
            yield Mem0Memory(memory, subjects=subjects, k=k, infer=extractor is not None)
        finally:
            memory.close()


def _check_endpoint(memory: Any, url: str) -> None:
    """Refuse a Mem0 whose LLM client would ask another host than ``url``."""
    base_url = str(memory.llm.client.base_url).rstrip("/")
    if base_url != url.rstrip("/"):
        raise RuntimeError(
            f"Mem0's LLM client asks {base_url}, not {url} (is OPENROUTER_API_KEY set?)"
        )


def _memory(pool: Any, *, embedder: Embedder, folder: Path, llm: dict[str, Any]) -> Any:
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
        "llm": llm,
        "history_db_path": str(folder / "history.db"),
    }
    return Memory.from_config(config)
