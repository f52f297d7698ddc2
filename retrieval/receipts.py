"""What a context call read, as receipts: every key it planned and every episode it retrieved,
each marked activated when it reached the block (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from retrieval.assemble import Assembled, EvidenceCandidate, KeyFacts
from store import touched
from store.receipts import Touched


def context_receipts(
    keys: Sequence[KeyFacts],
    evidence: Sequence[EvidenceCandidate],
    assembled: Assembled,
    *,
    asked: str | None,
    now: datetime,
) -> list[Touched]:
    """One receipt per key read (found or not) and per distinct episode retrieved.

    A fact is activated when the block states it, as a fact or as a disputed key's
    incumbent; an episode when the block quotes it.
    """
    stated = {fact.version_id for fact in assembled.facts}
    disputed = {incumbent.fact_id for incumbent in (key.incumbent for key in assembled.uncertain)}
    quoted = {line.episode_id for line in assembled.evidence}
    receipts = [
        touched.fact_missing(key.subject, key.attribute)
        if key.fact is None
        else touched.fact_read(
            key.fact,
            now=now,
            activated=key.fact.version_id in stated or key.fact.fact_id in disputed,
            asked=asked,
        )
        for key in keys
    ]
    retrieved: dict[str, datetime | None] = {}
    for candidate in evidence:
        retrieved.setdefault(candidate.episode_id, candidate.recorded_at)
    receipts.extend(
        touched.episode_read(episode_id, written_at=written, activated=episode_id in quoted)
        for episode_id, written in retrieved.items()
    )
    return receipts
