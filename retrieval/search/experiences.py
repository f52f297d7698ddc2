"""Experience search: past episodes similar to a situation, each with what came of it.

The episodes are found as evidence is (``search_evidence``), and their outcomes are read in the
same snapshot. Only an episode with an observed outcome is experience (design, section 6): one
without an outcome, or whose outcome is ``unknown``, is listed for its similarity but flagged
``experience: false`` and never counted.
"""

from __future__ import annotations

from retrieval.search.cited import cited_fields
from retrieval.search.embeddings import Embedder
from store.contract.memory import EpisodeOutcome
from store.contract.reads import (
    ExperienceItem,
    ExperienceRequest,
    ExperienceResult,
    SearchPlan,
)
from store.db.snapshot import ReadSnapshot
from store.episodes.evidence import EvidenceHit, request_scope
from store.service import MemoryStore


def search_experiences(
    store: MemoryStore, embedder: Embedder, *, tenant_id: str, request: ExperienceRequest
) -> ExperienceResult:
    """The episodes most similar to ``request.query``, with their outcomes, in one snapshot."""
    query = embedder.embed([request.query])[0]
    scope = request_scope(request)

    def read(
        snapshot: ReadSnapshot,
    ) -> tuple[list[EvidenceHit], SearchPlan, dict[str, EpisodeOutcome]]:
        hits, plan = snapshot.search_evidence(
            query,
            model=embedder.model_id,
            dimensions=embedder.dimensions,
            k=request.k,
            scope=scope,
        )
        found = snapshot.outcomes([hit.episode_id for hit in hits])
        return hits, plan, found

    hits, plan, found = store.snapshots.read(tenant_id, read)
    return experiences(hits, found, query=request.query, plan=plan)


def experiences(
    hits: list[EvidenceHit],
    found: dict[str, EpisodeOutcome],
    *,
    query: str,
    plan: SearchPlan,
) -> ExperienceResult:
    """The answer for ``hits`` (best first) given their outcomes: the order stays similarity's."""
    results = [
        ExperienceItem(
            **cited_fields(hit, query),
            outcome=found.get(hit.episode_id),
            experience=is_experience(found.get(hit.episode_id)),
        )
        for hit in hits
    ]
    return ExperienceResult(
        results=results,
        experience_count=sum(item.experience for item in results),
        search=plan,
    )


def is_experience(outcome: EpisodeOutcome | None) -> bool:
    """Whether an episode with this outcome may be presented as experience."""
    return outcome is not None and outcome.observed
