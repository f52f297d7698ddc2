"""Every route of the API as a pure call: method, path, query, body and how to read the answer.

Nothing here touches the network, so the sync and the async client send the same calls,
and a test can check a call without a server. Values go out as given: the server
validates them and answers ``invalid`` naming the field (a naive timestamp included).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Generic, Literal, TypeVar
from urllib.parse import quote
from uuid import UUID

from pydantic import BaseModel, TypeAdapter

from retrieval.models import ContextResult, SearchResult
from server.bodies import (
    AttributeList,
    CandidateResults,
    EpisodeBatchRecorded,
    EpisodeBody,
    EpisodeRecorded,
    TenantCreated,
)
from server.wire import Health, Readiness
from store.models import (
    Attribute,
    Episode,
    EpisodeKind,
    EqualStartPolicy,
    Fact,
    MemoryType,
    MemoryUpdate,
)
from store.results import (
    ApiKeyIssued,
    ApiKeyRevoked,
    ConflictPage,
    ErasureResult,
    ExpireResult,
    Profile,
    ResolveResult,
    RetractResult,
    SubjectExport,
    SubjectPage,
)
from store.values import ValueType

T = TypeVar("T")

Instant = datetime | str
"""An RFC 3339 instant with an offset, as text or an aware datetime."""
Candidate = MemoryUpdate | Mapping[str, Any]
"""A MemoryUpdate, as the model or as its JSON object."""

_FACTS: Final = TypeAdapter(list[Fact])
_JSON_OBJECT: Final = TypeAdapter(dict[str, Any])


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """One request and the reader of its answer."""

    method: Literal["GET", "POST", "PUT", "DELETE"]
    path: str
    parse: Callable[[bytes], T]
    params: dict[str, str | int] = field(default_factory=dict)
    body: Any = None
    admin: bool = False
    """Sent with the admin token rather than the API key."""
    accept: frozenset[int] = frozenset()
    """Failure statuses whose body is still the result (``/readyz`` answers 503 with it)."""


def instant(value: Instant) -> str:
    """The instant as RFC 3339 text; a naive datetime goes without an offset, to be refused."""
    return value if isinstance(value, str) else value.isoformat()


def jsonable(value: object) -> Any:
    """A body value as JSON: models by their JSON form, instants as text, ids as strings."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_unset=True)
    if isinstance(value, datetime):
        return instant(value)
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, Mapping):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(item) for item in value]
    return value


def _segment(value: str | UUID) -> str:
    # Quoting keeps a malformed id inside its segment; "." and ".." (valid ids) are escaped
    # too, or URL normalization would drop them as dot segments.
    text = quote(str(value), safe=":@")
    return text if text.strip(".") else text.replace(".", "%2E")


def _path(template: str, *segments: str | UUID) -> str:
    return template.format(*map(_segment, segments))


def _present(**values: object) -> dict[str, Any]:
    return {name: jsonable(value) for name, value in values.items() if value is not None}


def _query(**values: Instant | int | str | None) -> dict[str, str | int]:
    return {
        name: value if isinstance(value, int | str) else instant(value)
        for name, value in values.items()
        if value is not None
    }


# -- admin ----------------------------------------------------------------------------------


def create_tenant(tenant_id: str) -> Call[TenantCreated]:
    """Create a tenant (admin; ConflictError if it exists)."""
    body = {"tenant_id": tenant_id}
    return Call(
        "POST", "/v1/admin/tenants", TenantCreated.model_validate_json, body=body, admin=True
    )


def create_key(tenant_id: str) -> Call[ApiKeyIssued]:
    """Issue an API key for a tenant (admin); ``api_key`` is shown this once."""
    path = _path("/v1/admin/tenants/{}/keys", tenant_id)
    return Call("POST", path, ApiKeyIssued.model_validate_json, admin=True)


def revoke_key(key_id: UUID | str) -> Call[ApiKeyRevoked]:
    """Revoke a key (admin): its next call is Unauthorized."""
    path = _path("/v1/admin/keys/{}", key_id)
    return Call("DELETE", path, ApiKeyRevoked.model_validate_json, admin=True)


# -- attributes -----------------------------------------------------------------------------


def declare_attribute(
    attribute: str,
    value_type: ValueType | str,
    *,
    description: str | None = None,
    enum_values: Sequence[str] | None = None,
    aliases: Sequence[str] | None = None,
    memory_type: MemoryType | None = None,
    on_equal_start: EqualStartPolicy | None = None,
    source_ranks: Mapping[EpisodeKind, int] | None = None,
    retention_class: str | None = None,
) -> Call[Attribute]:
    """Declare or redeclare an attribute; omitted fields take the server's defaults."""
    body = _present(
        value_type=str(value_type),
        description=description,
        enum_values=enum_values,
        aliases=aliases,
        memory_type=memory_type,
        on_equal_start=on_equal_start,
        source_ranks=source_ranks,
        retention_class=retention_class,
    )
    path = _path("/v1/attributes/{}", attribute)
    return Call("PUT", path, Attribute.model_validate_json, body=body)


def attributes() -> Call[AttributeList]:
    """Every declared attribute of the tenant."""
    return Call("GET", "/v1/attributes", AttributeList.model_validate_json)


def memory_update_schema() -> Call[dict[str, Any]]:
    """The MemoryUpdate JSON Schema for structured output, the tenant's attributes as an enum."""
    return Call("GET", "/v1/memory-update-schema", _JSON_OBJECT.validate_json)


# -- episodes -------------------------------------------------------------------------------


def record_episode(
    text: str,
    occurred_at: Instant,
    *,
    id: str | None = None,
    kind: EpisodeKind | None = None,
    session_id: str | None = None,
    subjects: Sequence[str] | None = None,
    retention_class: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    updates: Sequence[Candidate] | None = None,
) -> Call[EpisodeRecorded]:
    """Record an episode (idempotent on ``id``) and apply the candidates citing it."""
    body = _present(
        id=id,
        occurred_at=occurred_at,
        text=text,
        kind=kind,
        session_id=session_id,
        subjects=subjects,
        retention_class=retention_class,
        metadata=metadata,
        updates=updates,
    )
    return Call("POST", "/v1/episodes", EpisodeRecorded.model_validate_json, body=body)


def record_batch(episodes: Sequence[EpisodeBody | Mapping[str, Any]]) -> Call[EpisodeBatchRecorded]:
    """Record several episodes in one transaction (all or none), each with its candidates."""
    body = {"episodes": jsonable(list(episodes))}
    return Call("POST", "/v1/episodes/batch", EpisodeBatchRecorded.model_validate_json, body=body)


def episode(episode_id: str) -> Call[Episode]:
    """One episode, as citations name it (an erased one is a stub without text)."""
    return Call("GET", _path("/v1/episodes/{}", episode_id), Episode.model_validate_json)


def apply_updates(episode_id: str, candidates: Sequence[Candidate]) -> Call[CandidateResults]:
    """Candidates from a later extraction of an episode; one result per candidate."""
    path = _path("/v1/episodes/{}/updates", episode_id)
    body = {"candidates": jsonable(list(candidates))}
    return Call("POST", path, CandidateResults.model_validate_json, body=body)


def erase_episode(episode_id: str) -> Call[ErasureResult]:
    """Erase an episode: retract what it sourced, delete it, keep a content-free tombstone."""
    path = _path("/v1/episodes/{}", episode_id)
    return Call("DELETE", path, ErasureResult.model_validate_json)


# -- facts ----------------------------------------------------------------------------------


def fact(
    subject: str,
    attribute: str,
    *,
    valid_at: Instant | None = None,
    known_at: Instant | None = None,
) -> Call[Fact]:
    """The value valid at ``valid_at`` as believed at ``known_at``; NotFoundError: not known.

    Both default to the server's now; given only ``known_at``, ``valid_at`` defaults to it.
    """
    path = _path("/v1/facts/{}/{}", subject, attribute)
    params = _query(valid_at=valid_at, known_at=known_at)
    return Call("GET", path, Fact.model_validate_json, params=params)


def history(subject: str, attribute: str) -> Call[list[Fact]]:
    """Every version of the key, by valid_from then recorded_at."""
    path = _path("/v1/facts/{}/{}/history", subject, attribute)
    return Call("GET", path, _FACTS.validate_json)


def expire(
    subject: str, attribute: str, *, at: Instant, source_episode_id: str
) -> Call[ExpireResult]:
    """End the key's value at ``at``, citing the episode that said so."""
    path = _path("/v1/facts/{}/{}/expire", subject, attribute)
    body = _present(at=at, source_episode_id=source_episode_id)
    return Call("POST", path, ExpireResult.model_validate_json, body=body)


def retract(
    subject: str,
    attribute: str,
    *,
    fact_id: UUID | str | None = None,
    valid_from: Instant | None = None,
) -> Call[RetractResult]:
    """Withdraw a wrong fact, named by ``fact_id`` or by its ``valid_from`` (exactly one)."""
    path = _path("/v1/facts/{}/{}/retract", subject, attribute)
    body = _present(fact_id=fact_id, valid_from=valid_from)
    return Call("POST", path, RetractResult.model_validate_json, body=body)


# -- subjects -------------------------------------------------------------------------------


def subjects(*, limit: int | None = None, cursor: str | None = None) -> Call[SubjectPage]:
    """One page of subject ids, by id; pass ``next_cursor`` back for the next."""
    params = _query(limit=limit, cursor=cursor)
    return Call("GET", "/v1/subjects", SubjectPage.model_validate_json, params=params)


def profile(
    subject: str, *, valid_at: Instant | None = None, known_at: Instant | None = None
) -> Call[Profile]:
    """Every attribute of the subject valid at ``valid_at`` as believed at ``known_at``."""
    path = _path("/v1/subjects/{}/profile", subject)
    params = _query(valid_at=valid_at, known_at=known_at)
    return Call("GET", path, Profile.model_validate_json, params=params)


def export_subject(subject: str) -> Call[SubjectExport]:
    """Everything held about the subject: facts, every version, episodes, conflicts."""
    path = _path("/v1/subjects/{}/export", subject)
    return Call("GET", path, SubjectExport.model_validate_json)


def erase_subject(subject: str) -> Call[ErasureResult]:
    """Erase everything held about the subject; keep a content-free tombstone."""
    path = _path("/v1/subjects/{}", subject)
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
    params = _query(status=status, subject=subject, attribute=attribute, limit=limit, cursor=cursor)
    return Call("GET", "/v1/conflicts", ConflictPage.model_validate_json, params=params)


def resolve_conflict(
    conflict_id: UUID | str, choose: Literal["incumbent", "challenger"]
) -> Call[ResolveResult]:
    """Keep the incumbent, or let the challenger replace it."""
    path = _path("/v1/conflicts/{}/resolve", conflict_id)
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
) -> Call[SearchResult]:
    """Episodes similar to the query, best first, each cited by id (evidence, never authority)."""
    body = _present(
        query=query,
        subject=subject,
        session_id=session_id,
        occurred_from=occurred_from,
        occurred_to=occurred_to,
        k=k,
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
) -> Call[ContextResult]:
    """The smallest cited block answering the question: exact facts first, then evidence."""
    body = _present(
        question=question,
        subject=subject,
        attributes=attributes,
        valid_at=valid_at,
        known_at=known_at,
        token_budget=token_budget,
        evidence_k=evidence_k,
    )
    return Call("POST", "/v1/context", ContextResult.model_validate_json, body=body)


# -- health ---------------------------------------------------------------------------------


def healthz() -> Call[Health]:
    """Liveness: the process is up (no credentials needed)."""
    return Call("GET", "/healthz", Health.model_validate_json)


def readyz() -> Call[Readiness]:
    """Readiness and each check behind it; a server not ready answers it too (503)."""
    return Call("GET", "/readyz", Readiness.model_validate_json, accept=frozenset({503}))
