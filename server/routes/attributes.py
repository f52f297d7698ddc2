"""``/v1/attributes`` and ``/v1/memory-update-schema``: the tenant's attribute schema."""

from __future__ import annotations

from typing import Any

from litestar import Request, get, put
from litestar.params import JSONBody

from server.bodies import AttributeList
from server.routes.common import PROBLEM_RESPONSES, PathId, store_of, tenant_of
from store.models import Attribute, AttributeDeclaration


@put("/v1/attributes/{attribute:str}", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def declare_attribute(
    request: Request[Any, Any, Any],
    attribute: PathId,
    data: JSONBody[AttributeDeclaration],
) -> Attribute:
    """Declare or redeclare an attribute; a change bumps its ``schema_version``."""
    store = store_of(request)
    tenant_id = tenant_of(request)
    return store.declare_attribute(tenant_id, attribute, data)


@get("/v1/attributes", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def list_attributes(
    request: Request[Any, Any, Any],
) -> AttributeList:
    """Every declared attribute of the tenant."""
    store = store_of(request)
    tenant_id = tenant_of(request)
    return AttributeList(attributes=store.list_attributes(tenant_id))


@get("/v1/memory-update-schema", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def memory_update_schema(
    request: Request[Any, Any, Any],
) -> dict[str, Any]:
    """The MemoryUpdate JSON Schema for structured output, attributes limited to the tenant's."""
    store = store_of(request)
    tenant_id = tenant_of(request)
    return store.memory_update_schema(tenant_id)


attribute_routes = [declare_attribute, list_attributes, memory_update_schema]
