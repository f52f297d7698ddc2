"""What a context call read, as receipts: every key it planned and every episode it retrieved,
each marked activated when it reached the block (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from retrieval.context.assemble import Assembled, EvidenceCandidate, KeyFacts
from store.governance import touched
from store.governance.receipts import Touched


def context_receipts(
    keys: Sequence[KeyFacts],
    evidence: Sequence[EvidenceCandidate],
    assembled: Assembled,
    *,
    evidence_k: int,
    asked: str | None,
    now: datetime,
) -> list[Touched]:
    """One receipt per key read (found or not) and per distinct episode retrieved.

    A fact is activated when the block states it, as a fact or as a disputed key's
    incumbent; an episode when the block cites it. The episodes retrieved are the facts'
    sources, the search's first ``evidence_k`` hits and any episode the block cites: the
    look-ahead past them (fetched to skip stale or repeated lines) was not put before the
    decision.
    """
    stated = {fact.version_id for fact in assembled.facts}
    disputed = {incumbent.fact_id for incumbent in (key.incumbent for key in assembled.uncertain)}
    cited = {citation.episode_id for citation in assembled.citations}
    receipts = [
        touched.fact_read(
            fact,
            now=now,
            activated=fact.version_id in stated or fact.fact_id in disputed,
            asked=asked,
        )
        if fact is not None
        else touched.fact_missing(key.subject, key.attribute)
        for key in keys
        for fact in (key.facts() or (None,))
    ]
    retrieved: dict[str, datetime | None] = {}
    hits = 0
    for candidate in evidence:
        if candidate.is_fact_source or hits < evidence_k or candidate.episode_id in cited:
            retrieved.setdefault(candidate.episode_id, candidate.recorded_at)
        hits += not candidate.is_fact_source
    receipts.extend(
        touched.episode_read(episode_id, written_at=written, activated=episode_id in cited)
        for episode_id, written in retrieved.items()
    )
    return receipts
