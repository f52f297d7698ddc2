"""``/v1/admin``: tenants and their API keys, behind the admin token."""

from __future__ import annotations

from litestar import delete, post
from litestar.params import JSONBody

from server.bodies import TenantCreate, TenantCreated
from server.routes.common import PROBLEM_RESPONSES, PathId, PathUuid, Store
from store.errors import StoreError
from store.results import ApiKeyIssued, ApiKeyRevoked


@post("/tenants", status_code=201, sync_to_thread=True, responses=PROBLEM_RESPONSES)
def create_tenant(store: Store, data: JSONBody[TenantCreate]) -> TenantCreated:
    """Create a tenant (409 if it exists), with its default for unverified evidence."""
    policy = data.on_unverified_evidence
    store.admin.create_tenant(data.tenant_id, on_unverified_evidence=policy)
    return TenantCreated(tenant_id=data.tenant_id, on_unverified_evidence=policy)


@post(
    "/tenants/{tenant:str}/keys", status_code=201, sync_to_thread=True, responses=PROBLEM_RESPONSES
)
def create_key(store: Store, tenant: PathId) -> ApiKeyIssued:
    """Issue an API key for a tenant; ``api_key`` is shown this once and stored hashed."""
    try:
        return store.admin.create_api_key(tenant)
    except StoreError as error:
        if error.field == "tenant_id":  # the path calls it {tenant}
            error.field = "tenant"
        raise


@delete("/keys/{key_id:str}", status_code=200, sync_to_thread=True, responses=PROBLEM_RESPONSES)
def revoke_key(store: Store, key_id: PathUuid) -> ApiKeyRevoked:
    """Revoke a key: its next call is 401."""
    return store.admin.revoke_api_key(key_id)


admin_routes = [create_tenant, create_key, revoke_key]
