"""The routes of episodic memory as calls: an episode's outcome, its extraction's retry, and
experience search.

Each returns a ``server.client.call.Call``: nothing here touches the network.
"""

from __future__ import annotations

from server.client.call import Call, Instant, json_body, url_path
from store.contract.memory import EpisodeOutcome, ExtractionState, OutcomeStatus
from store.contract.reads import ExperienceResult


def record_outcome(
    episode_id: str,
    status: OutcomeStatus,
    *,
    outcome_receipt_id: str | None = None,
    verified: bool = False,
    human_intervened: bool = False,
    budget_exhausted: bool = False,
) -> Call[EpisodeOutcome]:
    """Record what came of an episode; it supersedes the current outcome (Conflict if
    the episode was erased)."""
    body = {
        **json_body(status=status, outcome_receipt_id=outcome_receipt_id),
        "verified": verified,
        "human_intervened": human_intervened,
        "budget_exhausted": budget_exhausted,
    }
    path = url_path("/v1/episodes/{}/outcome", episode_id)
    return Call("POST", path, EpisodeOutcome.model_validate_json, body=body)


def outcome(episode_id: str) -> Call[EpisodeOutcome]:
    """What came of an episode: its current outcome (NotFound when none was recorded)."""
    path = url_path("/v1/episodes/{}/outcome", episode_id)
    return Call("GET", path, EpisodeOutcome.model_validate_json)


def retry_extraction(episode_id: str) -> Call[ExtractionState]:
    """Requeue an episode's dead extraction (Conflict when it is not dead)."""
    path = url_path("/v1/episodes/{}/extraction/retry", episode_id)
    return Call("POST", path, ExtractionState.model_validate_json)


def experiences(
    query: str,
    *,
    subject: str | None = None,
    session_id: str | None = None,
    occurred_from: Instant | None = None,
    occurred_to: Instant | None = None,
    k: int | None = None,
) -> Call[ExperienceResult]:
    """Past episodes similar to the situation, best first, with their outcomes; only those
    with an observed outcome are flagged ``experience``."""
    body = json_body(
        query=query,
        subject=subject,
        session_id=session_id,
        occurred_from=occurred_from,
        occurred_to=occurred_to,
        k=k,
    )
    return Call("POST", "/v1/experiences/search", ExperienceResult.model_validate_json, body=body)
