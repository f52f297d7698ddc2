"""The routes of procedural memory as calls: versions, approval, activation and rollback.

Each returns a ``server.client.call.Call``: nothing here touches the network.
"""

from __future__ import annotations

from typing import Any

from server.client.call import Call, json_body, query_params, url_path
from store.contract.procedures import ActiveProcedure, ProcedureVersion


def create_procedure(
    name: str, *, steps: str | None = None, definition: dict[str, Any] | None = None
) -> Call[ProcedureVersion]:
    """Write a draft: version 1 of a new procedure, or the next version of a known one."""
    body = json_body(name=name, steps=steps, definition=definition)
    return Call("POST", "/v1/procedures", ProcedureVersion.model_validate_json, body=body)


def approve_procedure(
    name: str, version: int, *, approver: str, policy: str, evaluation_ref: str | None = None
) -> Call[ProcedureVersion]:
    """Approve a draft version (Conflict if it is already approved)."""
    path = url_path("/v1/procedures/{}/versions/{}/approve", name, str(version))
    body = {"approver": approver, "policy": policy, "evaluation_ref": evaluation_ref}
    return Call("POST", path, ProcedureVersion.model_validate_json, body=body)


def activate_procedure(
    name: str, version: int, *, scope: str | None = None
) -> Call[ActiveProcedure]:
    """Make an approved version active in a scope (Conflict if it is not approved)."""
    path = url_path("/v1/procedures/{}/versions/{}/activate", name, str(version))
    return Call("POST", path, ActiveProcedure.model_validate_json, body=json_body(scope=scope))


def roll_back_procedure(name: str, *, scope: str | None = None) -> Call[ActiveProcedure]:
    """Make the version active before the current one active again (Conflict if none)."""
    path = url_path("/v1/procedures/{}/rollback", name)
    return Call("POST", path, ActiveProcedure.model_validate_json, body=json_body(scope=scope))


def active_procedure(name: str, *, scope: str | None = None) -> Call[ActiveProcedure]:
    """The approved version active in a scope (NotFound when none is)."""
    path = url_path("/v1/procedures/{}/active", name)
    params = query_params(scope=scope)
    return Call("GET", path, ActiveProcedure.model_validate_json, params=params)
