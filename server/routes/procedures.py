"""``/v1/procedures``: procedural memory, versions approved and then active in a scope."""

from __future__ import annotations

from typing import Annotated

from litestar import get, post
from litestar.params import JSONBody, PathParameter, QueryParameter, SkipValidation

from server.http.trace import RequestTrace
from server.routes.common import PROBLEM_RESPONSES, PathId, Store, TenantId
from store.contract.common import IDENTIFIER_PATTERN
from store.contract.procedures import (
    DEFAULT_SCOPE,
    MAX_VERSION,
    ActivationInput,
    ActiveProcedure,
    ApprovalInput,
    ProcedureInput,
    ProcedureVersion,
    RollbackInput,
)

PathVersion = Annotated[
    int, PathParameter(ge=1, le=MAX_VERSION, description="A version of the procedure: 1, 2, ...")
]
# The store checks the scope, naming it ``scope`` when it is refused: Litestar would name the
# handler's own parameter, which cannot be ``scope`` (its name for the ASGI scope).
QueryScope = Annotated[
    SkipValidation[str],
    QueryParameter(
        name="scope",
        pattern=IDENTIFIER_PATTERN,
        description="The scope whose active version to read: an id, default `default`.",
    ),
]
_VERSION_PATH = "/v1/procedures/{name:str}/versions/{version:int}"


@post("/v1/procedures", status_code=201, sync_to_thread=True, responses=PROBLEM_RESPONSES)
def create_procedure_version(
    *, store: Store, tenant_id: TenantId, data: JSONBody[ProcedureInput], trace: RequestTrace
) -> ProcedureVersion:
    """Write a draft: version 1 of a new procedure, or the next version of a known one."""
    return store.procedures.create(tenant_id, data, trace=trace)


@post(_VERSION_PATH + "/approve", status_code=200, sync_to_thread=True, responses=PROBLEM_RESPONSES)
def approve_procedure_version(
    *,
    store: Store,
    tenant_id: TenantId,
    name: PathId,
    version: PathVersion,
    data: JSONBody[ApprovalInput],
    trace: RequestTrace,
) -> ProcedureVersion:
    """Approve a draft, recording by whom and under which policy; 409 if already approved."""
    return store.procedures.approve(tenant_id, name, version=version, approval=data, trace=trace)


@post(
    _VERSION_PATH + "/activate", status_code=200, sync_to_thread=True, responses=PROBLEM_RESPONSES
)
def activate_procedure_version(
    *,
    store: Store,
    tenant_id: TenantId,
    name: PathId,
    version: PathVersion,
    data: JSONBody[ActivationInput],
    trace: RequestTrace,
) -> ActiveProcedure:
    """Make an approved version active in a scope; 409 if it is not approved."""
    return store.procedures.activate(
        tenant_id, name, version=version, scope=data.scope, trace=trace
    )


@post(
    "/v1/procedures/{name:str}/rollback",
    status_code=200,
    sync_to_thread=True,
    responses=PROBLEM_RESPONSES,
)
def roll_back_procedure(
    *,
    store: Store,
    tenant_id: TenantId,
    name: PathId,
    data: JSONBody[RollbackInput],
    trace: RequestTrace,
) -> ActiveProcedure:
    """Make the version active before the current one active again; 409 if there is none."""
    return store.procedures.rollback(tenant_id, name, scope=data.scope, trace=trace)


@get("/v1/procedures/{name:str}/active", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def read_active_procedure(
    *,
    store: Store,
    tenant_id: TenantId,
    name: PathId,
    trace: RequestTrace,
    in_scope: QueryScope = DEFAULT_SCOPE,
) -> ActiveProcedure:
    """The approved version active in the scope; 404 when none is."""
    return store.procedures.active(tenant_id, name, scope=in_scope, trace=trace)


procedure_routes = [
    create_procedure_version,
    approve_procedure_version,
    activate_procedure_version,
    roll_back_procedure,
    read_active_procedure,
]
