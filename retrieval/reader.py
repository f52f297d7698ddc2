"""The read path: a question becomes exact reads, cited evidence and one small block.

Similarity routes the question to attributes and ranks evidence; the values themselves
always come from exact reads of the fact store (invariant 5).
"""

from __future__ import annotations

import re
from dataclasses import replace
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
from retrieval.route import route_keys
from retrieval.routing import AttributeIndex
from retrieval.snippets import trim_snippet
from retrieval.stale import NO_VALUES, subject_values
from store.service import MemoryStore
from store.subject_reads import SubjectMemory

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
        # An empty index is falsy (it has a length): test for None, or the cache never fills.
        self.attributes = AttributeIndex(embedder) if attributes is None else attributes

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

    def _plan(
        self, tenant_id: str, request: ContextRequest
    ) -> tuple[QuestionPlan, SubjectMemory | None, datetime]:
        """The plan, the subject's memory at the plan's instant, and the read's clock."""
        now = self.store.clock()
        known = [
            KnownSubject(subject)
            for subject in self.store.find_subjects(tenant_id, subject_candidates(request.question))
        ]
        plan = plan_question(
            request.question,
            now=now,
            subject=request.subject,
            attributes=request.attributes,
            valid_at=request.valid_at,
            known_at=request.known_at,
            known_subjects=known,
        )
        if plan.subject is None:
            if request.attributes:
                return plan, None, now
            reason = "No subject is known for the question, so no key was read."
            return replace(plan, reasons={**plan.reasons, "attributes": reason}), None, now
        memory = self.store.subject_memory(
            tenant_id, plan.subject, valid_at=plan.valid_at, known_at=plan.known_at
        )
        if request.attributes:
            return plan, memory, now
        # Names and dates say nothing about which attribute is asked: route on the rest.
        topic = routing_text(request.question, now=now, subject=plan.subject, known_subjects=known)
        routing = route_keys(
            self.attributes.score(topic, memory.attributes, subject=plan.subject),
            held=memory.held_attributes(),
            subject=plan.subject,
        )
        reasons = {**plan.reasons, "attributes": routing.reason}
        routed = replace(
            plan, attributes=routing.attributes, routed=routing.routed, reasons=reasons
        )
        return routed, memory, now

    def context(self, tenant_id: str, request: ContextRequest) -> ContextResult:
        """The smallest cited block answering the question, with its plan."""
        plan, memory, now = self._plan(tenant_id, request)
        keys = (
            []
            if memory is None
            else [KeyFacts(memory.subject, name, memory.fact(name)) for name in plan.attributes]
        )
        episodes = memory.episodes if memory is not None else {}
        sources = [
            EvidenceCandidate(
                episode_id=episode.id,
                occurred_at=episode.occurred_at,
                text=episode.text,
                score=1.0,
                is_fact_source=True,
            )
            for episode in (
                episodes.get(key.fact.source_episode_id) for key in keys if key.fact is not None
            )
            if episode is not None and episode.text is not None  # an erased source is a stub
        ]
        related = self._related(tenant_id, request, plan=plan)
        assembled = assemble_context(
            keys=keys,
            evidence=[*sources, *related] if request.evidence_k else [],
            question=request.question,
            subject=plan.subject,
            mode=plan.mode,
            now=now,
            values=subject_values(memory) if memory is not None else NO_VALUES,
            episode_times={episode_id: e.occurred_at for episode_id, e in episodes.items()},
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
                text=hit.text,
                score=hit.score,
            )
            for hit in hits
        ]
