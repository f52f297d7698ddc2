"""The descriptive-memory baselines: raw episodes in pgvector, the most similar as the context.

The raw episodes go into a ``MemoryStore`` of their own database (the store's own vectors of
the same model on the same PostgreSQL; no candidate is applied, so no fact exists there) and
are searched exactly by ``store.episodes.evidence.search_evidence``, filtered to the question's
tenant and subject and to the episodes recorded by its known-at. ``dm`` hands over the top k
episodes by similarity, ``dm_recency`` the newest k of the top k' most similar; both read one
load.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from time import perf_counter
from typing import Any

from evals.arms.systems import Context, Line, Question, body_fields
from evals.leakage.lines import baseline_context
from retrieval.context.snippets import one_line
from retrieval.search.embeddings import Embedder
from server.replay.runner import ReplayClock
from store.bench import EvidenceHit, SearchScope, temporary_database
from store.contract.times import parse_timestamp
from store.errors import StoreError
from store.service import MemoryStore, open_store

EXACT_ALWAYS = 10**9
"""The baselines' scan limit: their search is always exact (recall 1), never HNSW."""


@dataclass(frozen=True)
class BaselineOptions:
    """How the descriptive-memory baselines build a context."""

    k: int = 3
    """Episodes in the context."""
    candidates: int = 10
    """Similar episodes ``dm_recency`` re-ranks by time (k')."""
    subject_filter: bool = True
    """Search only the question's subject's episodes, as SGAM's request names it."""

    def __post_init__(self) -> None:
        if not 1 <= self.k <= self.candidates:
            raise ValueError("need 1 <= k <= candidates")

    def describe(self) -> str:
        """The baselines' settings in words, for the report."""
        scope = "tenant and the question's subject" if self.subject_filter else "tenant"
        return (
            f"raw episode text in pgvector (the store's own vectors of the same model, one"
            f" database on the same PostgreSQL, no facts), exact cosine search filtered to the"
            f" {scope} and to episodes recorded by the question's known-at; dm: top {self.k};"
            f" dm_recency: the newest {self.k} of the top {self.candidates}; one episode per"
            f" line, unmarked"
        )


def cited_subjects(lines: Sequence[Line]) -> dict[tuple[str, str], set[str]]:
    """Per (tenant, episode id), the subjects of the candidates citing it (as the write path
    adds them)."""
    cited: dict[tuple[str, str], set[str]] = defaultdict(set)
    for line in lines:
        if line.get("op") == "update" and line["candidate"].get("subject"):
            cited[line["tenant"], line["episode"]].add(line["candidate"]["subject"])
    return cited


class EpisodeMemory:
    """Raw episodes in a store of their own: what a descriptive memory keeps, and its search.

    Episodes carry the subjects they were given plus those of the candidates citing them
    (subjects are metadata a plain vector store keeps too); candidates, expiries and the other
    fact operations are not part of a descriptive memory and are skipped. Erasures apply.
    """

    def __init__(
        self,
        store: MemoryStore,
        clock: ReplayClock,
        *,
        embedder: Embedder,
        subjects: Mapping[tuple[str, str], set[str]],
        options: BaselineOptions,
    ) -> None:
        self.store = store
        self.clock = clock
        self.embedder = embedder
        self.subjects = subjects
        self.options = options
        self.tenants: set[str] = set()
        self.outcomes: Counter[str] = Counter()

    def write(self, line: Mapping[str, Any], now: str | None) -> None:
        """Record an episode, or apply an erasure, at the line's system time."""
        tenant, op = line["tenant"], line["op"]
        if op not in ("episode", "erase"):
            return
        self.clock.fixed = None if now is None else parse_timestamp(now)
        try:
            if tenant not in self.tenants:
                self.store.admin.ensure_tenant(tenant)
                self.tenants.add(tenant)
            if op == "episode":
                body = body_fields(line, "updates")
                given = set(body.get("subjects") or ())
                cited = self.subjects.get((tenant, str(body.get("id"))), set())
                body["subjects"] = sorted(given | cited)
                self.store.episodes.record(tenant, body)
            elif "episode" in line:
                self.store.erasure.erase_episode(tenant, line["episode"])
            else:
                self.store.erasure.erase_subject(tenant, line["subject"])
        except StoreError as error:
            self.outcomes[f"{op} refused ({error.code})"] += 1
            return
        self.outcomes[op] += 1

    def similar(self, question: Question, *, k: int) -> list[EvidenceHit]:
        """The ``k`` episodes most similar to the question, in the baselines' scope."""
        query = self.embedder.embed([question.question])[0]
        scope = SearchScope(
            subject=question.subject if self.options.subject_filter else None,
            known_at=question.resolved_known_at,
        )
        # The store's snapshot names the tenant, which row-level security requires.
        hits, _ = self.store.snapshots.read(
            question.tenant,
            lambda snapshot: snapshot.search_evidence(
                query,
                model=self.embedder.model_id,
                dimensions=self.embedder.dimensions,
                k=k,
                scope=scope,
                exact_limit=EXACT_ALWAYS,
            ),
        )
        return hits

    def dm(self, question: Question) -> Context:
        """The top k episodes by similarity, one per line."""
        start = perf_counter()
        hits = self.similar(question, k=self.options.k)
        text = baseline_context([one_line(hit.text) for hit in hits])
        return Context(text, (perf_counter() - start) * 1000)

    def dm_recency(self, question: Question) -> Context:
        """The newest k of the top k' similar episodes, newest first."""
        start = perf_counter()
        hits = self.similar(question, k=self.options.candidates)
        newest = sorted(hits, key=lambda hit: (hit.occurred_at, hit.episode_id), reverse=True)
        text = baseline_context([one_line(hit.text) for hit in newest[: self.options.k]])
        return Context(text, (perf_counter() - start) * 1000)


@contextmanager
def open_episodes(
    server: str,
    *,
    embedder: Embedder,
    lines: Sequence[Line],
    options: BaselineOptions,
) -> Iterator[EpisodeMemory]:
    """A descriptive memory on a fresh database of ``server``."""
    clock = ReplayClock()
    with (
        temporary_database(server) as conninfo,
        open_store(
            conninfo, clock=clock, embedder=embedder, max_connections=2, migrate=True
        ) as store,
    ):
        yield EpisodeMemory(
            store, clock, embedder=embedder, subjects=cited_subjects(lines), options=options
        )
