"""The surfaces as fixtures: ``surface`` runs a scenario on the store and over HTTP,
``any_surface`` on MCP's tools as well (for the scenarios cheap enough to run three times)."""

from __future__ import annotations

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from server.client import SGAMClient
from store.db.clock import ManualClock
from store.service import MemoryStore
from tests.conformance.http_surface import HttpSurface
from tests.conformance.mcp_surface import McpSurface
from tests.conformance.store_surface import StoreSurface
from tests.conformance.surfaces import FactSurface, Surface, new_tenant_name
from tests.conftest import ADMIN_TOKEN


def _surface(request: pytest.FixtureRequest, kind: str) -> FactSurface:
    clock: ManualClock = request.getfixturevalue("clock")
    if kind == "store":
        store: MemoryStore = request.getfixturevalue("store")
        return StoreSurface(store, clock)
    http: TestClient[Litestar] = request.getfixturevalue("http")
    if kind == "http":
        return HttpSurface(http, clock)
    tenant = new_tenant_name(kind)
    with SGAMClient(str(http.base_url), admin_token=ADMIN_TOKEN, http=http) as admin:
        admin.create_tenant(tenant)
        key = admin.create_key(tenant)
    return McpSurface(http, tenant=tenant, api_key=key.api_key, clock=clock)


@pytest.fixture(params=["store", "http"])
def surface(request: pytest.FixtureRequest) -> Surface:
    """A fresh tenant on the store's Python API or on the HTTP client."""
    made = _surface(request, request.param)
    assert isinstance(made, Surface)
    return made


@pytest.fixture(params=["store", "http", "mcp"])
def any_surface(request: pytest.FixtureRequest) -> FactSurface:
    """A fresh tenant on the store, the HTTP client or MCP's tools."""
    return _surface(request, request.param)


@pytest.fixture
def mcp(request: pytest.FixtureRequest) -> McpSurface:
    """A fresh tenant on MCP's tools alone."""
    made = _surface(request, "mcp")
    assert isinstance(made, McpSurface)
    return made
