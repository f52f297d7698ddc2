"""A search hit as the API cites it: its episode, time, kind and score, and a snippet trimmed
around the query. Pure."""

from __future__ import annotations

from typing import Any

from retrieval.context.snippets import trim_snippet
from store.episodes.evidence import EvidenceHit


def cited_fields(hit: EvidenceHit, query: str) -> dict[str, Any]:
    """A hit's ``EvidenceItem`` fields: its snippet trimmed around ``query``."""
    return {
        "episode_id": hit.episode_id,
        "occurred_at": hit.occurred_at,
        "kind": hit.kind,
        "session_id": hit.session_id,
        "snippet": trim_snippet(hit.text, query),
        "score": hit.score,
    }
