"""The routes of subjects, conflicts, evidence, context and health as calls.

Each returns a ``server.client.call.Call``: nothing here touches the network.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal
from uuid import UUID

from server.client.call import Call, Instant, json_body, query_params, url_path
from store.contract.problems import Health, Readiness
from store.contract.reads import ContextResult, SearchMode, SearchResult
from store.contract.results import (
    ConflictPage,
    ErasureResult,
    MergeResult,
    Profile,
    ResolveResult,
    SubjectExport,
    SubjectNames,
    SubjectPage,
)

# -- subjects -------------------------------------------------------------------------------


def subjects(*, limit: int | None = None, cursor: str | None = None) -> Call[SubjectPage]:
    """One page of subject ids, by id; pass ``next_cursor`` back for the next."""
    params = query_params(limit=limit, cursor=cursor)
    return Call("GET", "/v1/subjects", SubjectPage.model_validate_json, params=params)


def profile(
    subject: str, *, valid_at: Instant | None = None, known_at: Instant | None = None
) -> Call[Profile]:
    """Every attribute of the subject valid at ``valid_at`` as believed at ``known_at``."""
    path = url_path("/v1/subjects/{}/profile", subject)
    params = query_params(valid_at=valid_at, known_at=known_at)
    return Call("GET", path, Profile.model_validate_json, params=params)


def export_subject(subject: str) -> Call[SubjectExport]:
    """Everything held about the subject: facts, every version, episodes, conflicts."""
    path = url_path("/v1/subjects/{}/export", subject)
    return Call("GET", path, SubjectExport.model_validate_json)


def put_subject_names(
    subject: str, *, display_name: str | None = None, aliases: Sequence[str] = ()
) -> Call[SubjectNames]:
    """Declare the subject's display name and aliases (replacing those declared before)."""
    path = url_path("/v1/subjects/{}", subject)
    body = json_body(display_name=display_name, aliases=list(aliases))
    return Call("PUT", path, SubjectNames.model_validate_json, body=body)


def subject_names(subject: str) -> Call[SubjectNames]:
    """The subject's names: declared, and learned from the episodes that wrote them."""
    return Call("GET", url_path("/v1/subjects/{}/names", subject), SubjectNames.model_validate_json)


def merge_subject(subject: str, *, into: str) -> Call[MergeResult]:
    """Fold the duplicate ``subject`` into ``into``; its id names the survivor from then on."""
    path = url_path("/v1/subjects/{}/merge", subject)
    return Call("POST", path, MergeResult.model_validate_json, body=json_body(into=into))


def erase_subject(subject: str) -> Call[ErasureResult]:
    """Erase everything held about the subject; keep a content-free tombstone."""
    path = url_path("/v1/subjects/{}", subject)
    return Call("DELETE", path, ErasureResult.model_validate_json)


# -- conflicts ------------------------------------------------------------------------------


def conflicts(
    *,
    status: Literal["open", "resolved", "all"] | None = None,
    subject: str | None = None,
    attribute: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> Call[ConflictPage]:
    """One page of conflicts, oldest first (the server's default: open ones)."""
    params = query_params(
        status=status, subject=subject, attribute=attribute, limit=limit, cursor=cursor
    )
    return Call("GET", "/v1/conflicts", ConflictPage.model_validate_json, params=params)


def resolve_conflict(
    conflict_id: UUID | str, choose: Literal["incumbent", "challenger"]
) -> Call[ResolveResult]:
    """Keep the incumbent, or let the challenger replace it."""
    path = url_path("/v1/conflicts/{}/resolve", conflict_id)
    body = {"choose": choose}
    return Call("POST", path, ResolveResult.model_validate_json, body=body)


# -- retrieval ------------------------------------------------------------------------------


def search(
    query: str,
    *,
    subject: str | None = None,
    session_id: str | None = None,
    occurred_from: Instant | None = None,
    occurred_to: Instant | None = None,
    k: int | None = None,
    mode: SearchMode | None = None,
) -> Call[SearchResult]:
    """Episodes found for the query, best first, each cited by id (evidence, never authority):
    by similarity, by their words or both (``mode``; the server's default when None)."""
    body = json_body(
        query=query,
        subject=subject,
        session_id=session_id,
        occurred_from=occurred_from,
        occurred_to=occurred_to,
        k=k,
        mode=mode,
    )
    return Call("POST", "/v1/evidence/search", SearchResult.model_validate_json, body=body)


def context(
    question: str,
    *,
    subject: str | None = None,
    attributes: Sequence[str] | None = None,
    valid_at: Instant | None = None,
    known_at: Instant | None = None,
    token_budget: int | None = None,
    evidence_k: int | None = None,
    valid_from: Instant | None = None,
    valid_to: Instant | None = None,
    mode: SearchMode | None = None,
) -> Call[ContextResult]:
    """The smallest cited block answering the question: exact facts first, then evidence.

    ``valid_from`` / ``valid_to`` ask about a period (every value valid in it), not with
    ``valid_at``; ``mode`` is how evidence is found (``search``'s)."""
    body = json_body(
        question=question,
        subject=subject,
        attributes=attributes,
        valid_at=valid_at,
        known_at=known_at,
        token_budget=token_budget,
        evidence_k=evidence_k,
        valid_from=valid_from,
        valid_to=valid_to,
        mode=mode,
    )
    return Call("POST", "/v1/context", ContextResult.model_validate_json, body=body)


# -- health ---------------------------------------------------------------------------------


def healthz() -> Call[Health]:
    """Liveness: the process is up (no credentials needed)."""
    return Call("GET", "/healthz", Health.model_validate_json)


def readyz() -> Call[Readiness]:
    """Readiness and each check behind it; a server not ready answers it too (503)."""
    return Call("GET", "/readyz", Readiness.model_validate_json, accept=frozenset({503}))
