"""``/v1/decisions/{decision_id}/receipts``: what a decision read, as content-free receipts."""

from __future__ import annotations

from litestar import get

from server.routes.common import PROBLEM_RESPONSES, PathUuid, Store, TenantId
from store.contract.receipts import DecisionReceipts


@get(
    "/v1/decisions/{decision_id:str}/receipts",
    sync_to_thread=True,
    responses=PROBLEM_RESPONSES,
    tags=["receipts"],
)
def read_receipts(*, store: Store, tenant_id: TenantId, decision_id: PathUuid) -> DecisionReceipts:
    """The decision's receipts, oldest first: ids, hashes, times, enums and flags, never what
    the memory says. 404 when the tenant has no such decision."""
    return store.receipts.decision(tenant_id, decision_id)


decision_routes = [read_receipts]
