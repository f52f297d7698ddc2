"""The LangGraph store's and the LangChain retriever's tests: a tenant's clients on the module's
app, blocking (Litestar's test client) and async (the same app over ASGI)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from litestar import Litestar
from litestar.testing import TestClient

from server.client import AsyncSGAMClient, SGAMClient
from store.contract.results import UpdateResult
from tests.http_helpers import make_tenant

ASYNC_BASE_URL = "http://sgam.test"


def tenant_client(http: TestClient[Litestar], prefix: str = "langgraph") -> SGAMClient:
    """A client on the API key of a fresh tenant of its own."""
    tenant = make_tenant(http, prefix)
    api_key = tenant.headers["Authorization"].removeprefix("Bearer ")
    return SGAMClient(str(http.base_url), api_key, http=http)


@asynccontextmanager
async def async_twin(
    http: TestClient[Litestar], client: SGAMClient
) -> AsyncIterator[AsyncSGAMClient]:
    """An async client with ``client``'s key on the same app (already started), over ASGI."""
    # A second app cannot start beside the module's in one process (its pool gauges would
    # register twice with Prometheus): the async side reaches the running one.
    transport = httpx.ASGITransport(app=http.app)
    async with httpx.AsyncClient(transport=transport) as asgi:
        yield AsyncSGAMClient(ASYNC_BASE_URL, client.api_key, http=asgi)


def record_mira(
    client: SGAMClient, episode_id: str, at: str, text: str, **candidate: str
) -> UpdateResult:
    """Record an episode about Mira that occurred at ``at`` (system time ten seconds later)
    with the one candidate it states (``change`` new, valid from ``at``); its result."""
    recorded = client.with_now(at.replace(":00Z", ":10Z")).record_episode(
        text,
        at,
        id=episode_id,
        subjects=["mira"],
        updates=[{"subject": "mira", "change": "new", **candidate}],
    )
    [result] = recorded.results
    return result
