"""``/v1/conflicts``: equal-start conflicts awaiting settlement, and their resolution."""

from __future__ import annotations

from typing import Annotated, Literal

from litestar import get, post
from litestar.params import JSONBody, QueryParameter

from server.routes.common import PROBLEM_RESPONSES, PathUuid, QueryId, Store, TenantId
from server.routes.subjects import Cursor, Limit
from store.contract.bodies import ResolveBody
from store.contract.results import ConflictPage, ResolveResult


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
