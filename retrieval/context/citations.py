"""A block's citations: every episode it names, once, under its strongest role, with its time.

Pure. Roles rank fact > challenger > evidence: an episode that is a fact's source and also an
evidence line is cited as the fact's. Citations list the keys' sources in the keys' order,
then the disputed keys' challengers, then the evidence lines' episodes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from retrieval.context.block_inputs import EvidenceCandidate, KeyFacts
from retrieval.context.evidence_lines import Shown
from store.contract.reads import Citation, CitationRole
from store.contract.times import parse_timestamp

_ROLE_RANK: dict[CitationRole, int] = {"fact": 0, "challenger": 1, "evidence": 2}


def citation_times(
    candidates: Sequence[EvidenceCandidate], given: Mapping[str, datetime] | None
) -> dict[str, datetime]:
    """When each episode occurred: the evidence candidates' times, overridden by ``given``."""
    times: dict[str, datetime] = {}
    for candidate in candidates:
        times.setdefault(candidate.episode_id, parse_timestamp(candidate.occurred_at))
    for episode_id, occurred_at in (given or {}).items():
        times[episode_id] = parse_timestamp(occurred_at)
    return times


def citations(
    settled: Sequence[KeyFacts],
    disputed: Sequence[KeyFacts],
    *,
    kept: Sequence[Shown],
    times: Mapping[str, datetime],
    newer: Sequence[str] = (),
) -> list[Citation]:
    """The block's citations, each episode once (its time None where none is known); the
    episodes ``newer`` than memory that an uncertain key names are evidence too."""
    cited: list[tuple[str, CitationRole]] = []
    for key in settled:
        cited.extend((fact.source_episode_id, "fact") for fact in key.facts())
    for key in disputed:
        assert key.fact is not None
        cited.extend((fact.source_episode_id, "fact") for fact in key.facts())
        cited.extend((c.source_episode_id, "challenger") for c in key.fact.challengers)
    cited.extend((item.candidate.episode_id, "evidence") for item in kept)
    cited.extend((episode_id, "evidence") for episode_id in newer)

    roles: dict[str, CitationRole] = {}
    for episode_id, role in cited:
        held = roles.get(episode_id)
        if held is None or _ROLE_RANK[role] < _ROLE_RANK[held]:
            roles[episode_id] = role
    return [
        Citation(episode_id=episode_id, occurred_at=times.get(episode_id), role=role)
        for episode_id, role in roles.items()
    ]
