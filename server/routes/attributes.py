"""``/v1/attributes`` and ``/v1/memory-update-schema``: the tenant's attribute schema."""

from __future__ import annotations

from typing import Any

from litestar import get, put
from litestar.params import JSONBody

from server.bodies import AttributeList
from server.routes.common import PROBLEM_RESPONSES, PathId, Store, TenantId
from store.models import Attribute, AttributeDeclaration


@put("/v1/attributes/{attribute:str}", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def declare_attribute(
    *, store: Store, tenant_id: TenantId, attribute: PathId, data: JSONBody[AttributeDeclaration]
) -> Attribute:
    """Declare or redeclare an attribute; a change bumps its ``schema_version``."""
    return store.admin.declare_attribute(tenant_id, attribute, data)


@get("/v1/attributes", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def list_attributes(store: Store, tenant_id: TenantId) -> AttributeList:
    """Every declared attribute of the tenant."""
    return AttributeList(attributes=store.admin.list_attributes(tenant_id))


@get("/v1/memory-update-schema", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def memory_update_schema(store: Store, tenant_id: TenantId) -> dict[str, Any]:
    """The MemoryUpdate JSON Schema for structured output, attributes limited to the tenant's."""
    return store.admin.memory_update_schema(tenant_id)


attribute_routes = [declare_attribute, list_attributes, memory_update_schema]
