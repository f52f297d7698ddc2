"""The read path: a question becomes exact reads, cited evidence and one small block.

Similarity routes the question to attributes and ranks evidence; the values themselves
always come from exact reads of the fact store (invariant 5).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np

from retrieval.assemble import EvidenceCandidate, KeyFacts, assemble_context
from retrieval.embeddings import Embedder
from retrieval.evidence import SearchScope, search_evidence
from retrieval.models import (
    ContextRequest,
    ContextResult,
    EvidenceItem,
    SearchRequest,
    SearchResult,
)
from retrieval.planner import KnownSubject, QuestionPlan, plan_question, routing_text
from retrieval.routing import AttributeIndex
from retrieval.snippets import trim_snippet
from store.errors import NotFound
from store.models import Fact
from store.paging import MAX_LIMIT
from store.service import MemoryStore
from store.values import display

_WORD = re.compile(r"[a-z0-9@]+")
_JOINERS = ("", "_", "-", ":", ".")
# Evidence candidates fetched per block slot, so stale or duplicate snippets can be skipped.
_CANDIDATES_PER_SLOT = 3


def subject_candidates(question: str) -> list[str]:
    """Ids a question may name: its words and runs of up to three joined by id punctuation."""
    words = _WORD.findall(question.lower().replace("'s ", " "))
    found: set[str] = set()
    for size in (1, 2, 3):
        for start in range(len(words) - size + 1):
            run = words[start : start + size]
            found.update(joiner.join(run) for joiner in _JOINERS)
    return sorted(found)


class Reader:
    """Evidence search and context assembly over one store and one embedding model."""

    def __init__(
        self, store: MemoryStore, embedder: Embedder, *, attributes: AttributeIndex | None = None
    ) -> None:
        self.store = store
        self.embedder = embedder
        # Pass a shared index to keep its cache across readers (one per request in the server).
        self.attributes = attributes or AttributeIndex(embedder)

    def search(self, tenant_id: str, request: SearchRequest) -> SearchResult:
        """Episodes similar to the query, cited, best first."""
        query = self.embedder.embed([request.query])[0]
        scope = SearchScope(
            subject=request.subject,
            session_id=request.session_id,
            occurred_from=request.occurred_from,
            occurred_to=request.occurred_to,
        )
        hits, plan = self._search(tenant_id, query=query, scope=scope, k=request.k)
        return SearchResult(
            results=[
                EvidenceItem(
                    episode_id=hit.episode_id,
                    occurred_at=hit.occurred_at,
                    kind=hit.kind,
                    session_id=hit.session_id,
                    snippet=trim_snippet(hit.text, request.query),
                    score=round(hit.score, 6),
                )
                for hit in hits
            ],
            search={
                "method": plan.method,
                "scope_size": plan.scope_size,
                "scope_size_capped": plan.scope_size_capped,
            },
        )

    def _search(
        self, tenant_id: str, *, query: np.ndarray[Any, Any], scope: SearchScope, k: int
    ) -> tuple[list[Any], Any]:
        with self.store.pool.connection() as conn, conn.transaction():
            return search_evidence(
                conn,
                tenant_id,
                query=query,
                model=self.embedder.model_id,
                dimensions=self.embedder.dimensions,
                k=k,
                scope=scope,
            )

    def plan(self, tenant_id: str, request: ContextRequest) -> QuestionPlan:
        """Decide mode, times, subject and attributes for the question."""
        now = self.store.clock()
        declared = self.store.list_attributes(tenant_id)
        known = [
            KnownSubject(subject)
            for subject in self.store.find_subjects(tenant_id, subject_candidates(request.question))
        ]
        # Names and dates say nothing about which attribute is asked: route on the rest.
        topic = routing_text(
            request.question, now=now, subject=request.subject, known_subjects=known
        )
        scores = self.attributes.score(topic, declared)
        return plan_question(
            request.question,
            now=now,
            subject=request.subject,
            attributes=request.attributes,
            valid_at=request.valid_at,
            known_at=request.known_at,
            known_subjects=known,
            attribute_scores=scores,
        )

    def context(self, tenant_id: str, request: ContextRequest) -> ContextResult:
        """The smallest cited block answering the question, with its plan."""
        plan = self.plan(tenant_id, request)
        keys = self._keys(tenant_id, plan)
        sources = self._sources(tenant_id, keys, question=request.question)
        related = self._related(tenant_id, request, plan=plan)
        assembled = assemble_context(
            keys=keys,
            evidence=[*sources, *related] if request.evidence_k else [],
            episode_times=self._cited_times(tenant_id, keys, sources),
            valid_at=plan.valid_at,
            known_at=plan.known_at,
            evidence_k=request.evidence_k,
            token_budget=request.token_budget,
            count_tokens=self.embedder.count_tokens,
            unverified=not plan.routed,
        )
        return ContextResult(
            block=assembled.block,
            citations=assembled.citations,
            facts=assembled.facts,
            evidence=assembled.evidence,
            uncertain=assembled.uncertain,
            plan=plan.to_json(),
            decision_id=self.store.new_id(),
            over_budget=assembled.over_budget,
            tokens=assembled.tokens,
        )

    def _keys(self, tenant_id: str, plan: QuestionPlan) -> list[KeyFacts]:
        if plan.subject is None:
            return []
        keys = []
        for attribute in plan.attributes:
            fact: Fact | None
            try:
                fact = self.store.at(
                    tenant_id,
                    plan.subject,
                    attribute,
                    valid_at=plan.valid_at,
                    known_at=plan.known_at,
                )
            except NotFound:
                fact = None
            history = self.store.history(tenant_id, plan.subject, attribute)
            others = {display(version.value) for version in history}
            others |= self._challenger_values(tenant_id, plan.subject, attribute)
            if fact is not None:
                others.discard(display(fact.value))
                # A dispute open at known-at is shown on the Uncertain line, not as stale.
                others -= {display(challenger.value) for challenger in fact.challengers}
            keys.append(KeyFacts(plan.subject, attribute, fact, tuple(sorted(others))))
        return keys

    def _challenger_values(self, tenant_id: str, subject: str, attribute: str) -> set[str]:
        """Values claimed against the key in conflicts (never versions, yet not to be shown as
        holding where they are not the disputed side)."""
        page = self.store.list_conflicts(
            tenant_id, status=None, subject=subject, attribute=attribute, limit=MAX_LIMIT
        )
        return {display(conflict.challenger.value) for conflict in page.conflicts}

    def _sources(
        self, tenant_id: str, keys: Sequence[KeyFacts], *, question: str
    ) -> list[EvidenceCandidate]:
        """The chosen facts' source episodes, quoted around the question's words."""
        sources = []
        for key in keys:
            if key.fact is None:
                continue
            episode = self.store.get_episode(tenant_id, key.fact.source_episode_id)
            if episode.text is None:  # an erased source leaves a stub: nothing to quote
                continue
            sources.append(
                EvidenceCandidate(
                    episode_id=episode.id,
                    occurred_at=episode.occurred_at,
                    text=trim_snippet(episode.text, question),
                    score=1.0,
                    is_fact_source=True,
                )
            )
        return sources

    def _cited_times(
        self, tenant_id: str, keys: Sequence[KeyFacts], sources: Sequence[EvidenceCandidate]
    ) -> dict[str, datetime]:
        """When each cited episode happened: fact sources and disputed keys' challengers."""
        times = {source.episode_id: source.occurred_at for source in sources}
        for key in keys:
            for challenger in key.fact.challengers if key.fact else ():
                if challenger.source_episode_id not in times:
                    episode = self.store.get_episode(tenant_id, challenger.source_episode_id)
                    times[episode.id] = episode.occurred_at
        return times

    def _related(
        self, tenant_id: str, request: ContextRequest, *, plan: QuestionPlan
    ) -> list[EvidenceCandidate]:
        """Episodes similar to the question, within the subject when one was found."""
        if request.evidence_k == 0:
            return []
        query = self.embedder.embed([request.question])[0]
        hits, _ = self._search(
            tenant_id,
            query=query,
            scope=SearchScope(subject=plan.subject, recorded_by=plan.known_at),
            k=request.evidence_k * _CANDIDATES_PER_SLOT,
        )
        return [
            EvidenceCandidate(
                episode_id=hit.episode_id,
                occurred_at=hit.occurred_at,
                text=trim_snippet(hit.text, request.question),
                score=hit.score,
            )
            for hit in hits
        ]
