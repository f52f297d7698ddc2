"""Builders for the weak-signal tests: a tenant with a weak-signal attribute, episodes carrying
candidates at a chosen system time (``X-SGAM-Now``), the buffer and the key as read over HTTP."""

from __future__ import annotations

from typing import Any

from tests.conftest import ApiTenant
from tests.http_helpers import Client, candidate, declare, make_tenant, record

NOW = "2026-06-10T00:00:00Z"
KEY = "/v1/facts/mira/export_format"


def at(tenant: ApiTenant, now: str = NOW) -> dict[str, str]:
    """The tenant's headers at system time ``now``."""
    return {**tenant.headers, "X-SGAM-Now": now}


def weak(value: str, subject: str = "mira", attribute: str = "export_format") -> dict[str, Any]:
    """A weak candidate proposing ``value``."""
    return candidate(subject, attribute, value, evidence="as CSV", change="new", strength="weak")


def weak_tenant(http: Client, **declaration: Any) -> ApiTenant:
    """A fresh tenant that declares ``export_format`` (a string) with ``declaration``."""
    tenant = make_tenant(http, "weak")
    declare(http, tenant.headers, "export_format", "string", **declaration)
    return tenant


def say(
    http: Client,
    tenant: ApiTenant,
    episode_id: str,
    text: str,
    *updates: dict[str, Any],
    occurred_at: str = "2026-06-01T09:00:00Z",
    now: str = NOW,
    **extra: Any,
) -> list[dict[str, Any]]:
    """Record an episode carrying ``updates`` at system time ``now``; their results."""
    recorded = record(
        http,
        at(tenant, now),
        episode_id,
        text,
        occurred_at=occurred_at,
        updates=list(updates),
        **extra,
    )
    results: list[dict[str, Any]] = recorded["results"]
    return results


def buffer(http: Client, tenant: ApiTenant, now: str = NOW, **query: Any) -> list[Any]:
    """The live buffered signals ``GET /v1/buffer`` lists at ``now``."""
    response = http.get("/v1/buffer", params=query, headers=at(tenant, now))
    assert response.status_code == 200, response.text
    signals: list[Any] = response.json()["signals"]
    return signals


def known(http: Client, tenant: ApiTenant, now: str = NOW) -> Any:
    """The value of mira's export_format read at ``now``, or None when not known."""
    response = http.get(KEY, headers=at(tenant, now))
    assert response.status_code in (200, 404), response.text
    return response.json()["value"] if response.status_code == 200 else None
