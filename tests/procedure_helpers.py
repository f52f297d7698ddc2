"""Calls of procedural memory for the HTTP tests, each at a fixed system time."""

from __future__ import annotations

from typing import Any

import httpx
from litestar import Litestar
from litestar.testing import TestClient

Client = TestClient[Litestar]
Json = dict[str, Any]

CREATED_AT = "2026-06-01T10:00:00Z"
APPROVED_AT = "2026-06-02T10:00:00Z"
ACTIVATED_AT = "2026-06-03T10:00:00Z"
ROLLED_BACK_AT = "2026-06-04T10:00:00Z"
APPROVAL = {"approver": "ops:lena", "policy": "two-person-review", "evaluation_ref": "eval-17"}


def at(headers: dict[str, str], now: str) -> dict[str, str]:
    """The headers with the system time set to ``now``."""
    return {**headers, "X-SGAM-Now": now}


def version_path(name: str, version: int | str, action: str) -> str:
    """The path of an action on one version."""
    return f"/v1/procedures/{name}/versions/{version}/{action}"


def create(http: Client, key: dict[str, str], body: Json) -> httpx.Response:
    """Write a draft at ``CREATED_AT``."""
    return http.post("/v1/procedures", json=body, headers=at(key, CREATED_AT))


def approve(
    http: Client, key: dict[str, str], name: str, version: int, body: Json = APPROVAL
) -> httpx.Response:
    """Approve a version at ``APPROVED_AT``."""
    return http.post(
        version_path(name, version, "approve"), json=body, headers=at(key, APPROVED_AT)
    )


def activate(
    http: Client, key: dict[str, str], name: str, version: int, scope: str | None = None
) -> httpx.Response:
    """Activate a version at ``ACTIVATED_AT``, in ``scope`` or the default one."""
    body = {} if scope is None else {"scope": scope}
    return http.post(
        version_path(name, version, "activate"), json=body, headers=at(key, ACTIVATED_AT)
    )


def rollback(
    http: Client, key: dict[str, str], name: str, scope: str | None = None
) -> httpx.Response:
    """Roll back at ``ROLLED_BACK_AT``, in ``scope`` or the default one."""
    body = {} if scope is None else {"scope": scope}
    return http.post(f"/v1/procedures/{name}/rollback", json=body, headers=at(key, ROLLED_BACK_AT))


def active(
    http: Client, key: dict[str, str], name: str, scope: str | None = None
) -> httpx.Response:
    """Read the active version of ``scope`` or the default one."""
    query = {} if scope is None else {"scope": scope}
    return http.get(f"/v1/procedures/{name}/active", params=query, headers=key)


def ok(response: httpx.Response, status: int = 200) -> Json:
    """The JSON body of a response with ``status``."""
    assert response.status_code == status, response.text
    body: Json = response.json()
    return body


def ready(http: Client, key: dict[str, str], name: str, versions: int) -> None:
    """``versions`` approved versions of ``name``, none active."""
    for n in range(1, versions + 1):
        assert ok(create(http, key, {"name": name, "steps": f"step {n}"}), 201)["version"] == n
        ok(approve(http, key, name, n))


def draft(name: str, version: int, steps: str | None, definition: Json | None) -> Json:
    """A draft version as the API answers it."""
    return {
        "name": name,
        "version": version,
        "status": "draft",
        "steps": steps,
        "definition": definition,
        "created_at": CREATED_AT,
        "approver": None,
        "policy": None,
        "evaluation_ref": None,
        "approved_at": None,
    }


def approved(draft: Json) -> Json:
    """``draft`` approved with ``APPROVAL`` at ``APPROVED_AT``."""
    return {**draft, "status": "approved", **APPROVAL, "approved_at": APPROVED_AT}
