"""``/v1/facts/{subject}/{attribute}``: exact reads of one key, its history, expiry, retraction;
``/v1/conflicts``: equal-start conflicts awaiting settlement, and their resolution."""

from __future__ import annotations

from typing import Annotated, Literal

from litestar import Router, get, post
from litestar.params import JSONBody, QueryParameter

from server.http.trace import RequestTrace
from server.routes.common import (
    PROBLEM_RESPONSES,
    PathId,
    PathUuid,
    QueryId,
    Store,
    TenantId,
    Times,
)
from server.routes.subjects import Cursor, Limit
from store.contract.bodies import ExpireBody, ResolveBody, RetractBody
from store.contract.facts import Fact
from store.contract.results import ConflictPage, ExpireResult, ResolveResult, RetractResult


@get("/", responses=PROBLEM_RESPONSES)
async def read_fact(
    *,
    store: Store,
    tenant_id: TenantId,
    subject: PathId,
    attribute: PathId,
    times: Times,
    trace: RequestTrace,
) -> Fact:
    """The value valid at ``valid_at`` as believed at ``known_at``; 404 means "not known".

    Both default to now; given only ``known_at``, ``valid_at`` defaults to it. With
    ``X-SGAM-Decision`` the read leaves a receipt under that decision.
    """
    return await store.facts.aat(
        tenant_id,
        subject,
        attribute,
        valid_at=times.valid_at,
        known_at=times.known_at,
        trace=trace,
    )


@get("/history", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def read_history(
    *, store: Store, tenant_id: TenantId, subject: PathId, attribute: PathId
) -> list[Fact]:
    """Every version of the key, by valid_from then recorded_at, each with its status."""
    return store.facts.history(tenant_id, subject, attribute)


@post("/expire", status_code=200, sync_to_thread=True, responses=PROBLEM_RESPONSES)
def expire(
    *,
    store: Store,
    tenant_id: TenantId,
    subject: PathId,
    attribute: PathId,
    data: JSONBody[ExpireBody],
) -> ExpireResult:
    """End the key's value at ``at`` (the value stops being true; nothing replaces it)."""
    return store.facts.expire(
        tenant_id, subject, attribute, at=data.at, source_episode_id=data.source_episode_id
    )


@post("/retract", status_code=200, sync_to_thread=True, responses=PROBLEM_RESPONSES)
def retract(
    *,
    store: Store,
    tenant_id: TenantId,
    subject: PathId,
    attribute: PathId,
    data: JSONBody[RetractBody],
) -> RetractResult:
    """Withdraw a wrong fact; the key reads as if it had never been asserted."""
    return store.facts.retract(
        tenant_id, subject, attribute, fact_id=data.fact_id, valid_from=data.valid_from
    )


fact_router = Router(
    "/v1/facts/{subject:str}/{attribute:str}",
    route_handlers=[read_fact, read_history, expire, retract],
    tags=["facts"],
)


@get("/v1/conflicts", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def list_conflicts(
    *,
    store: Store,
    tenant_id: TenantId,
    status: Annotated[
        Literal["open", "resolved", "all"], QueryParameter(description="Which conflicts.")
    ] = "open",
    subject: QueryId = None,
    attribute: QueryId = None,
    limit: Limit = 100,
    cursor: Cursor = None,
) -> ConflictPage:
    """A page of conflicts, oldest first (open ones by default)."""
    return store.conflicts.list(
        tenant_id,
        status=None if status == "all" else status,
        subject=subject,
        attribute=attribute,
        limit=limit,
        cursor=cursor,
    )


@post(
    "/v1/conflicts/{conflict_id:str}/resolve",
    status_code=200,
    sync_to_thread=True,
    responses=PROBLEM_RESPONSES,
)
def resolve_conflict(
    *, store: Store, tenant_id: TenantId, conflict_id: PathUuid, data: JSONBody[ResolveBody]
) -> ResolveResult:
    """Keep the incumbent, or let the challenger replace it."""
    return store.conflicts.resolve(tenant_id, conflict_id, choose=data.choose)


conflict_routes = [list_conflicts, resolve_conflict]
