"""``/v1/admin``: tenants and their API keys, behind the admin token."""

from __future__ import annotations

from typing import Any

from litestar import Request, Router, delete, post
from litestar.params import JSONBody

from server.auth import admin_guard
from server.bodies import TenantCreate, TenantCreated
from server.routes.common import PROBLEM_RESPONSES, PathId, PathUuid, store_of
from store.errors import StoreError
from store.models import ApiKeyIssued, ApiKeyRevoked


@post("/tenants", status_code=201, sync_to_thread=True, responses=PROBLEM_RESPONSES)
def create_tenant(request: Request[Any, Any, Any], data: JSONBody[TenantCreate]) -> TenantCreated:
    """Create a tenant (409 if it exists)."""
    store = store_of(request)
    store.create_tenant(data.tenant_id)
    return TenantCreated(tenant_id=data.tenant_id)


@post(
    "/tenants/{tenant:str}/keys", status_code=201, sync_to_thread=True, responses=PROBLEM_RESPONSES
)
def create_key(request: Request[Any, Any, Any], tenant: PathId) -> ApiKeyIssued:
    """Issue an API key for a tenant; ``api_key`` is shown this once and stored hashed."""
    store = store_of(request)
    try:
        return store.create_api_key(tenant)
    except StoreError as error:
        if error.field == "tenant_id":  # the path calls it {tenant}
            error.field = "tenant"
        raise


@delete("/keys/{key_id:str}", status_code=200, sync_to_thread=True, responses=PROBLEM_RESPONSES)
def revoke_key(request: Request[Any, Any, Any], key_id: PathUuid) -> ApiKeyRevoked:
    """Revoke a key: its next call is 401."""
    store = store_of(request)
    return store.revoke_api_key(key_id)


admin_router = Router(
    "/v1/admin",
    route_handlers=[create_tenant, create_key, revoke_key],
    guards=[admin_guard],
    tags=["admin"],
    security=[{"AdminToken": []}],
)
