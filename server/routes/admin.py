"""``/v1/admin``: tenants and their API keys, behind the admin token."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from litestar import delete, get, patch, post
from litestar.params import JSONBody

from server.routes.common import PROBLEM_RESPONSES, PathId, PathUuid, Store
from store.contract.bodies import TenantChange, TenantCreate, TenantCreated, TenantSettings
from store.contract.results import ApiKeyIssued, ApiKeyRevoked
from store.errors import StoreError


@post("/tenants", status_code=201, sync_to_thread=True, responses=PROBLEM_RESPONSES)
def create_tenant(store: Store, data: JSONBody[TenantCreate]) -> TenantCreated:
    """Create a tenant (409 if it exists), with its default for unverified evidence."""
    policy = data.on_unverified_evidence
    store.admin.create_tenant(data.tenant_id, on_unverified_evidence=policy)
    return TenantCreated(tenant_id=data.tenant_id, on_unverified_evidence=policy)


@get("/tenants/{tenant:str}", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def read_tenant(store: Store, tenant: PathId) -> TenantSettings:
    """A tenant's settings (404 if it does not exist)."""
    with _path_named_tenant():
        policy = store.admin.unverified_evidence(tenant)
    return TenantSettings(tenant_id=tenant, on_unverified_evidence=policy)


@patch("/tenants/{tenant:str}", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def change_tenant(store: Store, tenant: PathId, data: JSONBody[TenantChange]) -> TenantSettings:
    """Change a tenant's settings (a field left out keeps its value); answers them all."""
    with _path_named_tenant():
        if data.on_unverified_evidence is not None:
            store.admin.set_unverified_evidence(tenant, data.on_unverified_evidence)
        policy = store.admin.unverified_evidence(tenant)
    return TenantSettings(tenant_id=tenant, on_unverified_evidence=policy)


@post(
    "/tenants/{tenant:str}/keys", status_code=201, sync_to_thread=True, responses=PROBLEM_RESPONSES
)
def create_key(store: Store, tenant: PathId) -> ApiKeyIssued:
    """Issue an API key for a tenant; ``api_key`` is shown this once and stored hashed."""
    with _path_named_tenant():
        return store.admin.create_api_key(tenant)


@delete("/keys/{key_id:str}", status_code=200, sync_to_thread=True, responses=PROBLEM_RESPONSES)
def revoke_key(store: Store, key_id: PathUuid) -> ApiKeyRevoked:
    """Revoke a key: its next call is 401."""
    return store.admin.revoke_api_key(key_id)


@contextmanager
def _path_named_tenant() -> Iterator[None]:
    """A store error about ``tenant_id`` names the field as the path does: ``tenant``."""
    try:
        yield
    except StoreError as error:
        if error.field == "tenant_id":
            error.field = "tenant"
        raise


admin_routes = [create_tenant, read_tenant, change_tenant, create_key, revoke_key]
