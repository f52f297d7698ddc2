"""The routes of tenants, keys, attributes, episodes and facts as calls.

Each returns a ``server.client.call.Call``: nothing here touches the network.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal
from uuid import UUID

from pydantic import TypeAdapter

from server.client.call import Call, Candidate, Instant, json_body, jsonable, query_params, url_path
from store.contract.bodies import (
    AttributeList,
    CandidateResults,
    EpisodeBatchRecorded,
    EpisodeBody,
    EpisodeRead,
    EpisodeRecorded,
    TenantCreated,
    TenantSettings,
)
from store.contract.common import EpisodeKind, EqualStartPolicy, MemoryType
from store.contract.facts import Attribute, Fact
from store.contract.governance import MigrationResult
from store.contract.results import (
    ApiKeyIssued,
    ApiKeyRevoked,
    ErasureResult,
    ExpireResult,
    RetractResult,
)
from store.contract.values import ValueType

_FACTS: Final = TypeAdapter(list[Fact])
_JSON_OBJECT: Final = TypeAdapter(dict[str, Any])


# -- admin ----------------------------------------------------------------------------------


def create_tenant(
    tenant_id: str, *, on_unverified_evidence: str | None = None
) -> Call[TenantCreated]:
    """Create a tenant (admin; Conflict if it exists), optionally refusing candidates
    whose evidence is not in their episode (``on_unverified_evidence="refuse"``)."""
    body = {"tenant_id": tenant_id}
    if on_unverified_evidence is not None:
        body["on_unverified_evidence"] = on_unverified_evidence
    return Call(
        "POST", "/v1/admin/tenants", TenantCreated.model_validate_json, body=body, admin=True
    )


def tenant(tenant_id: str) -> Call[TenantSettings]:
    """A tenant's settings (admin; NotFound if it does not exist)."""
    path = url_path("/v1/admin/tenants/{}", tenant_id)
    return Call("GET", path, TenantSettings.model_validate_json, admin=True)


def change_tenant(
    tenant_id: str, *, on_unverified_evidence: str | None = None
) -> Call[TenantSettings]:
    """Change a tenant's settings (admin); an argument left None keeps its value."""
    path = url_path("/v1/admin/tenants/{}", tenant_id)
    body = (
        {} if on_unverified_evidence is None else {"on_unverified_evidence": on_unverified_evidence}
    )
    return Call("PATCH", path, TenantSettings.model_validate_json, body=body, admin=True)


def create_key(tenant_id: str) -> Call[ApiKeyIssued]:
    """Issue an API key for a tenant (admin); ``api_key`` is shown this once."""
    path = url_path("/v1/admin/tenants/{}/keys", tenant_id)
    return Call("POST", path, ApiKeyIssued.model_validate_json, admin=True)


def revoke_key(key_id: UUID | str) -> Call[ApiKeyRevoked]:
    """Revoke a key (admin): its next call is Unauthorized."""
    path = url_path("/v1/admin/keys/{}", key_id)
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
    weak_quorum: int | None = None,
    weak_window_days: int | None = None,
) -> Call[Attribute]:
    """Declare or redeclare an attribute; omitted fields take the server's defaults."""
    body = json_body(
        value_type=str(value_type),
        description=description,
        enum_values=enum_values,
        aliases=aliases,
        memory_type=memory_type,
        on_equal_start=on_equal_start,
        source_ranks=source_ranks,
        retention_class=retention_class,
        weak_quorum=weak_quorum,
        weak_window_days=weak_window_days,
    )
    path = url_path("/v1/attributes/{}", attribute)
    return Call("PUT", path, Attribute.model_validate_json, body=body)


def migrate_attribute(
    attribute: str,
    declaration: Mapping[str, Any],
    *,
    dry_run: bool = False,
    keep_unconvertible: bool = False,
) -> Call[MigrationResult]:
    """Change an attribute's type, enum members or name (``attribute`` in ``declaration``)
    and convert its facts; ``dry_run`` reports without changing anything."""
    body = {
        **json_body(**declaration),
        "dry_run": dry_run,
        "keep_unconvertible": keep_unconvertible,
    }
    path = url_path("/v1/attributes/{}/migrations", attribute)
    return Call("POST", path, MigrationResult.model_validate_json, body=body)


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
    extract: Literal["none", "now", "background"] | None = None,
) -> Call[EpisodeRecorded]:
    """Record an episode (idempotent on ``id``) and apply the candidates citing it; with
    ``extract``, send its text to the server's extractor (``now``: before answering)."""
    body = json_body(
        id=id,
        occurred_at=occurred_at,
        text=text,
        kind=kind,
        session_id=session_id,
        subjects=subjects,
        retention_class=retention_class,
        metadata=metadata,
        updates=updates,
        extract=extract,
    )
    return Call("POST", "/v1/episodes", EpisodeRecorded.model_validate_json, body=body)


def record_batch(episodes: Sequence[EpisodeBody | Mapping[str, Any]]) -> Call[EpisodeBatchRecorded]:
    """Record several episodes in one transaction (all or none), each with its candidates."""
    body = {"episodes": jsonable(list(episodes))}
    return Call("POST", "/v1/episodes/batch", EpisodeBatchRecorded.model_validate_json, body=body)


def episode(episode_id: str) -> Call[EpisodeRead]:
    """One episode, as citations name it (an erased one is a stub without text), with its
    extraction state."""
    path = url_path("/v1/episodes/{}", episode_id)
    return Call("GET", path, EpisodeRead.model_validate_json)


def apply_candidates(episode_id: str, candidates: Sequence[Candidate]) -> Call[CandidateResults]:
    """Candidates from a later extraction of an episode; one result per candidate."""
    path = url_path("/v1/episodes/{}/updates", episode_id)
    body = {"candidates": jsonable(list(candidates))}
    return Call("POST", path, CandidateResults.model_validate_json, body=body)


def erase_episode(episode_id: str) -> Call[ErasureResult]:
    """Erase an episode: retract what it sourced, delete it, keep a content-free tombstone."""
    path = url_path("/v1/episodes/{}", episode_id)
    return Call("DELETE", path, ErasureResult.model_validate_json)


# -- facts ----------------------------------------------------------------------------------


def fact(
    subject: str,
    attribute: str,
    *,
    valid_at: Instant | None = None,
    known_at: Instant | None = None,
) -> Call[Fact]:
    """The value valid at ``valid_at`` as believed at ``known_at``; NotFound: not known.

    Both default to the server's now; given only ``known_at``, ``valid_at`` defaults to it.
    """
    path = url_path("/v1/facts/{}/{}", subject, attribute)
    params = query_params(valid_at=valid_at, known_at=known_at)
    return Call("GET", path, Fact.model_validate_json, params=params)


def history(subject: str, attribute: str) -> Call[list[Fact]]:
    """Every version of the key, by valid_from then recorded_at."""
    path = url_path("/v1/facts/{}/{}/history", subject, attribute)
    return Call("GET", path, _FACTS.validate_json)


def expire(
    subject: str, attribute: str, *, at: Instant, source_episode_id: str
) -> Call[ExpireResult]:
    """End the key's value at ``at``, citing the episode that said so."""
    path = url_path("/v1/facts/{}/{}/expire", subject, attribute)
    body = json_body(at=at, source_episode_id=source_episode_id)
    return Call("POST", path, ExpireResult.model_validate_json, body=body)


def retract(
    subject: str,
    attribute: str,
    *,
    fact_id: UUID | str | None = None,
    valid_from: Instant | None = None,
) -> Call[RetractResult]:
    """Withdraw a wrong fact, named by ``fact_id`` or by its ``valid_from`` (exactly one)."""
    path = url_path("/v1/facts/{}/{}/retract", subject, attribute)
    body = json_body(fact_id=fact_id, valid_from=valid_from)
    return Call("POST", path, RetractResult.model_validate_json, body=body)
