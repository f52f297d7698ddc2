"""``/v1/admin``: tenants and their API keys, behind the admin token."""

from __future__ import annotations

from uuid import UUID

from litestar import Router, delete, post
from litestar.params import FromPath, JSONBody

from server.auth import admin_guard
from server.bodies import TenantCreate, TenantCreated
from server.routes.common import PROBLEM_RESPONSES, PathId, Store
from store.models import ApiKeyIssued, ApiKeyRevoked


@post("/tenants", status_code=201, sync_to_thread=True, responses=PROBLEM_RESPONSES)
def create_tenant(store: Store, data: JSONBody[TenantCreate]) -> TenantCreated:
    """Create a tenant (409 if it exists)."""
    store.create_tenant(data.tenant_id)
    return TenantCreated(tenant_id=data.tenant_id)


@post(
    "/tenants/{tenant:str}/keys", status_code=201, sync_to_thread=True, responses=PROBLEM_RESPONSES
)
def create_key(store: Store, tenant: PathId) -> ApiKeyIssued:
    """Issue an API key for a tenant; ``api_key`` is shown this once and stored hashed."""
    return store.create_api_key(tenant)


@delete("/keys/{key_id:uuid}", status_code=200, sync_to_thread=True, responses=PROBLEM_RESPONSES)
def revoke_key(store: Store, key_id: FromPath[UUID]) -> ApiKeyRevoked:
    """Revoke a key: its next call is 401."""
    return store.revoke_api_key(key_id)


admin_router = Router(
    "/v1/admin",
    route_handlers=[create_tenant, create_key, revoke_key],
    guards=[admin_guard],
    tags=["admin"],
    security=[{"AdminToken": []}],
)
