"""``/v1/buffer``: weak candidates waiting for independent episodes to repeat them."""

from __future__ import annotations

from litestar import get

from server.routes.common import PROBLEM_RESPONSES, QueryId, Store, TenantId
from server.routes.subjects import Cursor, Limit
from store.contract.memory import BufferPage


@get("/v1/buffer", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def list_buffer(
    *,
    store: Store,
    tenant_id: TenantId,
    subject: QueryId = None,
    attribute: QueryId = None,
    limit: Limit = 100,
    cursor: Cursor = None,
) -> BufferPage:
    """A page of buffered weak signals, oldest first: each waits until enough independent
    episodes support its value (or a confirmation does) and expires after its attribute's
    window; expired ones are not listed."""
    return store.weak_signals.list(
        tenant_id, subject=subject, attribute=attribute, limit=limit, cursor=cursor
    )


weak_signal_routes = [list_buffer]
