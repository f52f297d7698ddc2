"""The evidence a context block may quote, gathered in the read's snapshot: the chosen facts'
sources, then episodes similar to the question (within the subject when one was found), each
scored by its similarity to the question; and the asked keys each candidate is about, by its
stored vector (``retrieval.routing.similarity.topics_of``), so that one stating none of a
key's values is judged by its time (``retrieval.context.evidence_quote``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from retrieval.context.block_inputs import EvidenceCandidate, KeyFacts
from retrieval.routing.index import AttributeIndex
from retrieval.routing.similarity import topics_of
from retrieval.search.embeddings import Embedder
from store.contract.episodes import Episode
from store.contract.reads import QuestionPlan
from store.db.snapshot import ReadSnapshot
from store.episodes.evidence import SearchScope
from store.episodes.lexical import TextQuery

Vector = np.ndarray[Any, Any]


def gather_evidence(
    snapshot: ReadSnapshot,
    embedder: Embedder,
    *,
    plan: QuestionPlan,
    sources: Sequence[Episode],
    query: Vector,
    k: int,
    words: TextQuery | None = None,
) -> list[EvidenceCandidate]:
    """The chosen facts' sources, then the ``k`` episodes the search ranks first (by
    similarity, or by ``words``' mode; within the subject when one was found), each scored by
    its similarity to the question and ranked by its place in the search's order."""
    # An erased source is a stub: it has no text to quote.
    texts = {episode.id: episode.text for episode in sources if episode.text is not None}
    scope = SearchScope(subject=plan.subject, known_at=plan.known_at)
    scores = snapshot.episode_scores(query, model=embedder.model_id, episode_ids=list(texts))
    hits, _ = snapshot.search_evidence(
        query,
        model=embedder.model_id,
        dimensions=embedder.dimensions,
        k=k,
        scope=scope,
        words=words,
    )
    unscored = [episode_id for episode_id in texts if episode_id not in scores]
    if unscored:  # no vector of this model yet (a re-embed is pending): embed the text
        vectors = embedder.embed([texts[episode_id] for episode_id in unscored])
        scores.update(zip(unscored, (float(vector @ query) for vector in vectors), strict=True))
    return [
        *(
            EvidenceCandidate(
                episode_id=episode.id,
                occurred_at=episode.occurred_at,
                text=texts[episode.id],
                score=scores[episode.id],
                is_fact_source=True,
                recorded_at=episode.recorded_at,
            )
            for episode in sources
            if episode.id in texts
        ),
        *(
            EvidenceCandidate(
                episode_id=hit.episode_id,
                occurred_at=hit.occurred_at,
                text=hit.text,
                score=hit.score,
                recorded_at=hit.recorded_at,
                search_rank=rank,
            )
            for rank, hit in enumerate(hits)
        ),
    ]


def with_topics(
    snapshot: ReadSnapshot,
    evidence: Sequence[EvidenceCandidate],
    keys: Sequence[KeyFacts],
    attributes: AttributeIndex,
    embedder: Embedder,
    *,
    subject: str | None,
) -> list[EvidenceCandidate]:
    """``evidence``, each candidate with the asked keys it is about (``topics_of`` on its
    stored vector), so that one stating none of a key's value is judged by its time.

    Only attribute vectors already cached are used (a routed read caches them): the read
    keeps to one encoder call, and a named key no read has routed to yet is judged by none.
    """
    asked = {key.attribute for key in keys}
    if not evidence or not asked:
        return list(evidence)
    declared = [attribute for attribute in snapshot.attributes() if attribute.attribute in asked]
    vectors = attributes.cached(declared, subject=subject, tenant_id=snapshot.tenant_id)
    if not vectors:
        return list(evidence)
    episodes = snapshot.episode_vectors(
        model=embedder.model_id,
        episode_ids=list(dict.fromkeys(candidate.episode_id for candidate in evidence)),
    )
    return [
        replace(candidate, about=topics_of(episodes[candidate.episode_id], vectors))
        if candidate.episode_id in episodes
        else candidate
        for candidate in evidence
    ]
