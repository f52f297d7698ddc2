"""A tenant's store and reader over the real database and model, for read-path tests."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from psycopg_pool import ConnectionPool

from retrieval.reader import Reader
from retrieval.search.embeddings import Embedder
from store.contract.reads import ContextRequest, ContextResult, SearchRequest, SearchResult
from store.contract.results import UpdateResult
from store.db.clock import ManualClock
from store.service import MemoryStore
from tests.conftest import ts

_tenants = itertools.count(1)


@dataclass
class ReadPath:
    """One tenant's store (embedding episodes as they are recorded) and its reader."""

    store: MemoryStore
    reader: Reader
    clock: ManualClock
    embedder: Embedder
    tenant: str
    texts: dict[str, str] = field(default_factory=dict)
    """Each recorded episode's text: a candidate quotes it as its evidence (so it is verified)."""

    def at(self, now: str) -> None:
        """Move system time."""
        self.clock.set(ts(now))

    def tick(self) -> None:
        """Advance system time by one second, so each write has its own instant."""
        self.clock.set(self.clock() + timedelta(seconds=1))

    def declare(self, attribute: str, description: str, **extra: Any) -> None:
        """Declare an attribute (a string unless ``value_type`` says otherwise)."""
        declaration: dict[str, Any] = {"value_type": "string", "description": description}
        declaration.update(extra)
        self.store.admin.declare_attribute(self.tenant, attribute, declaration)

    def record(self, episode_id: str, occurred_at: str, text: str, **extra: Any) -> None:
        """Record (and embed) one episode."""
        self.texts[episode_id] = text
        self.store.episodes.record(
            self.tenant, {"id": episode_id, "occurred_at": occurred_at, "text": text, **extra}
        )

    def record_batch(self, episodes: list[dict[str, Any]]) -> None:
        """Record (and embed) episodes in one call."""
        self.texts.update({episode["id"]: episode["text"] for episode in episodes})
        self.store.episodes.record_batch(self.tenant, episodes)

    def assert_value(
        self, episode_id: str, subject: str, attribute: str, value: str, valid_from: str
    ) -> UpdateResult:
        """Apply one candidate citing ``episode_id``, quoting its text when it was recorded here
        (else quoting nothing: evidence that is unverified)."""
        self.tick()
        [result] = self.store.facts.apply_candidates(
            self.tenant,
            episode_id,
            [
                {
                    "evidence": self.texts.get(episode_id, ""),
                    "subject": subject,
                    "attribute": attribute,
                    "change": "update",
                    "value": value,
                    "valid_from": valid_from,
                }
            ],
        )
        return result

    def context(self, question: str, **extra: Any) -> ContextResult:
        """The context for one question."""
        return self.reader.context(self.tenant, ContextRequest(question=question, **extra))

    def search(self, query: str, **extra: Any) -> SearchResult:
        """Evidence search for one query."""
        return self.reader.search(self.tenant, SearchRequest(query=query, **extra))


def read_path(pool: ConnectionPool, clock: ManualClock, embedder: Embedder) -> ReadPath:
    store = MemoryStore(pool, clock=clock, embedder=embedder)
    tenant = f"reads-{next(_tenants)}"
    store.admin.create_tenant(tenant)
    return ReadPath(store, Reader(store, embedder), clock, embedder, tenant)
