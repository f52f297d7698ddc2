"""``/v1/attributes`` and ``/v1/memory-update-schema``: the tenant's attribute schema."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from litestar import get, post, put
from litestar.params import JSONBody

from server.routes.common import PROBLEM_RESPONSES, PathId, Store, TenantId
from server.routes.extraction import Shared
from store.contract.bodies import AttributeList
from store.contract.facts import Attribute, AttributeDeclaration
from store.contract.governance import MigrationRequest, MigrationResult


@put("/v1/attributes/{attribute:str}", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def declare_attribute(
    *, store: Store, tenant_id: TenantId, attribute: PathId, data: JSONBody[AttributeDeclaration]
) -> Attribute:
    """Declare or redeclare an attribute; a change bumps its ``schema_version``.

    A new value type or a removed enum member of an attribute holding values, or a new name
    (``attribute`` in the body), is 409 ``schema_change_requires_migration``: only a migration
    converts the values it holds.
    """
    return store.admin.declare_attribute(tenant_id, attribute, data)


@post(
    "/v1/attributes/{attribute:str}/migrations",
    status_code=200,
    sync_to_thread=True,
    responses=PROBLEM_RESPONSES,
)
def migrate_attribute(
    *,
    store: Store,
    tenant_id: TenantId,
    resources: Shared,
    attribute: PathId,
    data: JSONBody[MigrationRequest],
) -> MigrationResult:
    """Change an attribute's type, enum members or name and convert the facts it holds, in
    one transaction; ``dry_run`` reports the same and changes nothing. Values that cannot
    convert are refused (409, listed) unless ``keep_unconvertible``."""
    # The request is the change itself (a MigrationRequest is an AttributeChange); its run
    # options are not declaration fields, so nothing of them is written.
    return store.admin.migrate_attribute(
        tenant_id,
        attribute,
        data,
        dry_run=data.dry_run,
        keep_unconvertible=data.keep_unconvertible,
        dual_read=timedelta(days=resources.settings.attribute_dual_read_days),
    )


@get("/v1/attributes", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def list_attributes(store: Store, tenant_id: TenantId) -> AttributeList:
    """Every declared attribute of the tenant."""
    return AttributeList(attributes=store.admin.list_attributes(tenant_id))


@get("/v1/memory-update-schema", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def memory_update_schema(store: Store, tenant_id: TenantId) -> dict[str, Any]:
    """The MemoryUpdate JSON Schema for structured output, attributes limited to the tenant's."""
    return store.admin.memory_update_schema(tenant_id)


attribute_routes = [declare_attribute, migrate_attribute, list_attributes, memory_update_schema]
