"""A tenant's settings over HTTP and the client: read, changed for later writes, refused
clearly (admin token only, unknown tenant, bad value, unknown field), each refusal changing
nothing."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from server.client import InvalidInput, NotFound, SGAMClient
from store.contract.bodies import TenantSettings
from tests.conftest import ADMIN_TOKEN
from tests.http_helpers import ADMIN, assert_problem

Client = TestClient[Litestar]
NOW = {"X-SGAM-Now": "2026-06-04T12:00:00Z"}
START = "2026-06-01T09:00:00Z"
_names = itertools.count(1)


def _ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def _tenant(http: Client, **body: str) -> tuple[str, dict[str, str]]:
    """A new tenant (with ``body``'s settings) and the headers of a key for it."""
    name = f"settings-{next(_names)}"
    _ok(http.post("/v1/admin/tenants", json={"tenant_id": name, **body}, headers=ADMIN), 201)
    issued = _ok(http.post(f"/v1/admin/tenants/{name}/keys", headers=ADMIN), 201)
    return name, {"Authorization": f"Bearer {issued['api_key']}", **NOW}


def _write_unverified(http: Client, headers: dict[str, str], episode_id: str) -> dict[str, Any]:
    """Record an episode whose one candidate quotes evidence its text does not hold."""
    body = {
        "id": episode_id,
        "occurred_at": START,
        "text": "Nothing about dates here.",
        "updates": [
            {
                "subject": "mira",
                "attribute": "deadline",
                "change": "new",
                "value": "2026-09-09",
                "valid_from": START,
                "evidence": "the deadline is 2026-09-09",
            }
        ],
    }
    [result] = _ok(http.post("/v1/episodes", json=body, headers=headers))["results"]
    return dict(result)


def test_a_changed_default_applies_to_later_writes_and_stored_facts_keep_their_label(
    http: Client,
) -> None:
    name, headers = _tenant(http)
    assert _ok(http.get(f"/v1/admin/tenants/{name}", headers=ADMIN)) == {
        "tenant_id": name,
        "on_unverified_evidence": "accept",
    }
    _ok(http.put("/v1/attributes/deadline", json={"value_type": "date"}, headers=headers))
    accepted = _write_unverified(http, headers, "s1")
    assert (accepted["status"], accepted["fact"]["label"]) == ("written", "current · unverified")

    changed = http.patch(
        f"/v1/admin/tenants/{name}", json={"on_unverified_evidence": "refuse"}, headers=ADMIN
    )
    assert _ok(changed) == {"tenant_id": name, "on_unverified_evidence": "refuse"}
    assert _ok(http.get(f"/v1/admin/tenants/{name}", headers=ADMIN))["on_unverified_evidence"] == (
        "refuse"
    )
    refused = _write_unverified(http, headers, "s2")
    assert (refused["status"], refused["field"]) == ("invalid", "evidence")
    assert "the tenant refuses unverified evidence" in refused["reason"]
    stored = _ok(http.get("/v1/facts/mira/deadline", headers=headers))
    assert (stored["value"], stored["source_episode_id"], stored["label"]) == (
        "2026-09-09",
        "s1",
        "current · unverified",
    )

    # An empty change changes nothing and answers the settings as they stand.
    same = http.patch(f"/v1/admin/tenants/{name}", json={}, headers=ADMIN)
    assert _ok(same) == {"tenant_id": name, "on_unverified_evidence": "refuse"}


def test_a_tenant_created_refusing_reads_so(http: Client) -> None:
    name, _ = _tenant(http, on_unverified_evidence="refuse")
    assert _ok(http.get(f"/v1/admin/tenants/{name}", headers=ADMIN)) == {
        "tenant_id": name,
        "on_unverified_evidence": "refuse",
    }


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"on_unverified_evidence": "sometimes"}, "on_unverified_evidence"),
        ({"on_unverified_evidence": True}, "on_unverified_evidence"),
        ({"on_unverified_evidence": "refuse", "colour": "blue"}, "colour"),
    ],
)
def test_a_bad_change_is_a_problem_naming_the_field_and_changes_nothing(
    http: Client, body: dict[str, Any], field: str
) -> None:
    name, _ = _tenant(http)
    bad = http.patch(f"/v1/admin/tenants/{name}", json=body, headers=ADMIN)
    assert_problem(bad, 422, "invalid", field=field)
    assert _ok(http.get(f"/v1/admin/tenants/{name}", headers=ADMIN))["on_unverified_evidence"] == (
        "accept"
    )


def test_an_unknown_tenant_is_not_found_naming_the_path_and_nothing_is_made(http: Client) -> None:
    assert_problem(
        http.get("/v1/admin/tenants/no-such-tenant", headers=ADMIN),
        404,
        "not_found",
        field="tenant",
    )
    change = {"on_unverified_evidence": "refuse"}
    missing = http.patch("/v1/admin/tenants/no-such-tenant", json=change, headers=ADMIN)
    assert_problem(missing, 404, "not_found", field="tenant")
    assert_problem(
        http.get("/v1/admin/tenants/no-such-tenant", headers=ADMIN),
        404,
        "not_found",
        field="tenant",
    )
    assert_problem(
        http.get("/v1/admin/tenants/a%20b", headers=ADMIN), 422, "invalid", field="tenant"
    )


def test_settings_need_the_admin_token_not_a_tenant_key(http: Client) -> None:
    name, headers = _tenant(http)
    for auth in ({"Authorization": headers["Authorization"]}, {}):
        assert_problem(
            http.get(f"/v1/admin/tenants/{name}", headers=auth),
            401,
            "unauthorized",
            field="Authorization",
        )
        refused = http.patch(
            f"/v1/admin/tenants/{name}", json={"on_unverified_evidence": "refuse"}, headers=auth
        )
        assert_problem(refused, 401, "unauthorized", field="Authorization")
    assert _ok(http.get(f"/v1/admin/tenants/{name}", headers=ADMIN))["on_unverified_evidence"] == (
        "accept"
    )


def test_the_client_reads_and_changes_settings(http: Client) -> None:
    name, _ = _tenant(http)
    admin = SGAMClient(str(http.base_url), admin_token=ADMIN_TOKEN, http=http)
    assert admin.tenant(name) == TenantSettings(tenant_id=name, on_unverified_evidence="accept")
    assert admin.change_tenant(name, on_unverified_evidence="refuse") == TenantSettings(
        tenant_id=name, on_unverified_evidence="refuse"
    )
    assert admin.change_tenant(name) == TenantSettings(
        tenant_id=name, on_unverified_evidence="refuse"
    )
    with pytest.raises(InvalidInput) as bad:
        admin.change_tenant(name, on_unverified_evidence="sometimes")
    assert bad.value.field == "on_unverified_evidence"
    with pytest.raises(NotFound):
        admin.tenant("no-such-tenant")
    assert admin.tenant(name).on_unverified_evidence == "refuse"
