"""The read path: a question becomes exact reads, cited evidence and one small block.

Similarity routes the question to attributes and ranks evidence; the values themselves
always come from exact reads of the fact store (invariant 5).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import replace
from typing import Any

import numpy as np

from retrieval.context.assemble import KeyFacts, assemble_context
from retrieval.context.stale import subject_values
from retrieval.context.unnamed import unnamed_values
from retrieval.question.planner import plan_question
from retrieval.question.renamed import read_old_names_as_new
from retrieval.question.subjects import name_mentions, unsure_subject_line
from retrieval.question.words import KnownSubject, routing_text
from retrieval.receipts import context_receipts
from retrieval.routing.index import AttributeIndex
from retrieval.routing.route import route_keys
from retrieval.search.cited import cited_fields
from retrieval.search.embeddings import Embedder
from retrieval.search.gather import gather_evidence, with_topics
from store.contract.reads import (
    ContextRequest,
    ContextResult,
    EvidenceItem,
    QuestionPlan,
    SearchPlan,
    SearchRequest,
    SearchResult,
)
from store.db.snapshot import ReadSnapshot
from store.db.text_search import DEFAULT_TEXT_SEARCH_CONFIG
from store.episodes.evidence import (
    EvidenceHit,
    SearchScope,
    request_scope,
)
from store.episodes.lexical import TextQuery
from store.governance.receipts import NO_TRACE, Trace
from store.service import MemoryStore
from store.subjects.reads import SubjectMemory, ValidRange

Vector = np.ndarray[Any, Any]

# Evidence candidates fetched per block slot, so stale or duplicate snippets can be skipped.
_CANDIDATES_PER_SLOT = 3


class Reader:
    """Evidence search and context assembly over one store and one embedding model."""

    def __init__(
        self,
        store: MemoryStore,
        embedder: Embedder,
        *,
        attributes: AttributeIndex | None = None,
        text_search_config: str = DEFAULT_TEXT_SEARCH_CONFIG,
    ) -> None:
        self.store = store
        self.embedder = embedder
        # The episodes' documents are built with it (SGAM_TEXT_SEARCH_CONFIG, applied by migrate).
        self.text_search_config = text_search_config
        # Pass a shared index to keep its cache across readers (one per request in the server).
        # An empty index is falsy (it has a length): test for None, or the cache never fills.
        self.attributes = AttributeIndex(embedder) if attributes is None else attributes

    def search(self, tenant_id: str, request: SearchRequest) -> SearchResult:
        """Episodes similar to the query, cited, best first."""
        query = self.embedder.embed([request.query])[0]
        scope = request_scope(request)
        hits, plan = self.store.snapshots.read(
            tenant_id,
            lambda snapshot: self._search(
                snapshot,
                query=query,
                # A merged subject's episodes name its survivor now.
                scope=replace(scope, subject=snapshot.resolve_subject(scope.subject))
                if scope.subject
                else scope,
                k=request.k,
                words=TextQuery(request.query, request.mode, self.text_search_config),
            ),
        )
        return SearchResult(
            results=[EvidenceItem(**cited_fields(hit, request.query)) for hit in hits],
            search=plan,
        )

    def _search(
        self,
        snapshot: ReadSnapshot,
        *,
        query: np.ndarray[Any, Any],
        scope: SearchScope,
        k: int,
        words: TextQuery,
    ) -> tuple[list[EvidenceHit], SearchPlan]:
        return snapshot.search_evidence(
            query,
            model=self.embedder.model_id,
            dimensions=self.embedder.dimensions,
            k=k,
            scope=scope,
            words=words,
        )

    def context(
        self, tenant_id: str, request: ContextRequest, *, trace: Trace = NO_TRACE
    ) -> ContextResult:
        """The smallest cited block answering the question, with its plan.

        Every read it makes (subjects, the subject's memory, evidence) is of one snapshot at
        one ``now``, and the question costs at most one call to the encoder. The call opens a
        decision (``trace``'s, or a new one) and leaves a receipt for every key and episode
        it read, in the same transaction.
        """
        decision = replace(trace, decision_id=trace.decision_id or self.store.new_id())
        return self.store.snapshots.read(
            tenant_id, lambda snapshot: self._context(snapshot, request, decision)
        )

    def _context(
        self, snapshot: ReadSnapshot, request: ContextRequest, trace: Trace
    ) -> ContextResult:
        request, migrated, subject = read_old_names_as_new(snapshot, request)
        plan, memory, query = self._plan(snapshot, request, subject=subject)
        if migrated:
            plan = plan.model_copy(update={"migrated_from": migrated})
        keys = [] if memory is None else [_key_facts(memory, name) for name in plan.attributes]
        read = memory.cited(plan.attributes) if memory is not None else set()
        # Without evidence the block cites an episode by its time alone: only that is read.
        episodes = snapshot.episodes(read) if query is not None else {}
        times = (
            {episode_id: e.occurred_at for episode_id, e in episodes.items()}
            if query is not None
            else snapshot.episode_times(read)
        )
        cited = dict.fromkeys(fact.source_episode_id for key in keys for fact in key.facts())
        sources = [episodes[episode] for episode in cited if episode in episodes]
        evidence = (
            gather_evidence(
                snapshot,
                self.embedder,
                plan=plan,
                sources=sources,
                query=query,
                k=request.evidence_k * _CANDIDATES_PER_SLOT,
                words=TextQuery(request.question, request.mode, self.text_search_config),
            )
            if query is not None
            else []
        )
        evidence = with_topics(
            snapshot, evidence, keys, self.attributes, self.embedder, subject=plan.subject
        )
        assembled = assemble_context(
            keys=keys,
            evidence=evidence,
            question=request.question,
            subject=plan.subject,
            mode=plan.mode,
            now=snapshot.now,
            values=subject_values(memory)
            if memory is not None
            else unnamed_values(snapshot, evidence, plan, period=_period(plan)),
            episode_times=times,
            valid_at=plan.valid_at,
            known_at=plan.known_at,
            evidence_k=request.evidence_k,
            token_budget=request.token_budget,
            count_tokens=self.embedder.count_tokens,
            unverified=not plan.routed,
            period=_period(plan),
            unsure_subject=unsure_subject_line(plan),
        )
        snapshot.leave_receipts(
            context_receipts(
                keys,
                evidence,
                assembled,
                evidence_k=request.evidence_k,
                asked=request.subject or plan.subject,
                now=snapshot.now,
            ),
            trace=trace,
        )
        assert trace.decision_id is not None
        return ContextResult(
            block=assembled.block,
            citations=assembled.citations,
            facts=assembled.facts,
            evidence=assembled.evidence,
            uncertain=assembled.uncertain,
            plan=plan,
            decision_id=trace.decision_id,
            over_budget=assembled.over_budget,
            tokens=assembled.tokens,
        )

    def _plan(
        self, snapshot: ReadSnapshot, request: ContextRequest, *, subject: str | None
    ) -> tuple[QuestionPlan, SubjectMemory | None, Vector | None]:
        """The plan, the subject's memory at the plan's instant, and the question's vector
        (None when no evidence is asked for), from one embed call at most. ``subject``: the
        one the request names, resolved (``read_old_names_as_new``)."""
        now = snapshot.now
        # The caller's subject and attributes need no names: nothing is chosen or routed.
        mentions = (
            []
            if subject and request.attributes
            else name_mentions(snapshot, request.question, subject=subject)
        )
        known = [KnownSubject(mention.subject, (mention.text,)) for mention in mentions]
        plan = plan_question(
            request.question,
            now=now,
            subject=subject,
            attributes=request.attributes,
            valid_at=request.valid_at,
            known_at=request.known_at,
            name_mentions=mentions,
            valid_from=request.valid_from,
            valid_to=request.valid_to,
        )
        wanted = [request.question] if request.evidence_k > 0 else []
        if plan.subject is None:
            query = self._embed(wanted)
            if request.attributes:
                return plan, None, query
            reason = "No subject is known for the question, so no key was read."
            return _with_attributes(plan, (), routed=False, reason=reason), None, query
        # Named keys need no routing (no schema); no evidence needs no stale check (no history),
        # and then only the named keys are read. The encoder works while the subject is read.
        named = bool(request.attributes)
        history = bool(wanted) or not named
        vectors: Future[Vector] | None = None
        if named:
            vectors = self.embedder.embed_later(wanted) if wanted else None
        else:
            # Names and dates say nothing about which attribute is asked: route on the rest.
            topic = routing_text(
                request.question, now=now, subject=plan.subject, known_subjects=known
            )
            # A question with no name or date to cut is its own routing text: its one vector
            # routes it and searches for its evidence. A routing text the tenant asked before
            # is not encoded again (``AttributeIndex``): with no evidence asked, nothing may be.
            alone = [] if topic == request.question else wanted
            batch = self.attributes.batch(
                topic,
                snapshot.attributes(),
                subject=plan.subject,
                texts=alone,
                tenant_id=snapshot.tenant_id,
            )
            vectors = self.embedder.embed_later(batch.texts)
        try:
            memory = snapshot.subject_memory(
                plan.subject,
                valid_at=plan.valid_at,
                known_at=plan.known_at,
                history=history,
                attributes=None if history else plan.attributes,
                period=_period(plan),
            )
        except BaseException:
            if vectors is not None:
                vectors.cancel()  # if still queued, no other request waits behind it
            raise
        if named:
            return plan, memory, vectors.result()[0] if vectors is not None else None
        assert vectors is not None
        found = batch.finish(vectors.result())
        routing = route_keys(found.scores, held=memory.held_attributes(), subject=plan.subject)
        routed = _with_attributes(
            plan, routing.attributes, routed=routing.routed, reason=routing.reason
        )
        if not wanted:
            return routed, memory, None
        return routed, memory, found.asked[0] if alone else found.question

    def _embed(self, texts: Sequence[str]) -> Vector | None:
        """The vector of the one text asked for, or None when none is."""
        return self.embedder.embed(list(texts))[0] if texts else None


def _key_facts(memory: SubjectMemory, attribute: str) -> KeyFacts:
    """The asked key with the fact the read shows (and, for a period, the earlier ones)."""
    facts = memory.facts_of(attribute)
    if not facts:
        return KeyFacts(memory.subject, attribute, None)
    return KeyFacts(memory.subject, attribute, facts[-1], earlier=tuple(facts[:-1]))


def _period(plan: QuestionPlan) -> ValidRange | None:
    """The plan's valid-time range, for a period read."""
    return (plan.valid_from, plan.valid_to) if plan.mode == "period" else None


def _with_attributes(
    plan: QuestionPlan, attributes: tuple[str, ...], *, routed: bool, reason: str
) -> QuestionPlan:
    """``plan`` reading ``attributes``; the reason replaces the planner's in its place."""
    reasons = {**plan.reasons, "attributes": reason}
    return plan.model_copy(update={"attributes": attributes, "routed": routed, "reasons": reasons})
