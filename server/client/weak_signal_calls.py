"""The route of the weak-signal buffer as a call.

Returns a ``server.client.call.Call``: nothing here touches the network.
"""

from __future__ import annotations

from server.client.call import Call, query_params
from store.contract.memory import BufferPage


def buffer(
    *,
    subject: str | None = None,
    attribute: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> Call[BufferPage]:
    """One page of buffered weak signals, oldest first (expired ones are not listed)."""
    params = query_params(subject=subject, attribute=attribute, limit=limit, cursor=cursor)
    return Call("GET", "/v1/buffer", BufferPage.model_validate_json, params=params)
