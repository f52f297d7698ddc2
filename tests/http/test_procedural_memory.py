"""Procedural memory over HTTP: versions are drafted, approved once, activated per scope and
rolled back; only the approved, active version is ever served, and tenants are walled apart."""

from __future__ import annotations

import pytest

from server.client import Conflict, NotFound, SGAMClient
from tests.conftest import ApiTenant
from tests.http_helpers import assert_problem, make_tenant
from tests.procedure_helpers import (
    ACTIVATED_AT,
    CREATED_AT,
    ROLLED_BACK_AT,
    Client,
    Json,
    activate,
    active,
    approve,
    approved,
    create,
    draft,
    ok,
    ready,
    rollback,
    version_path,
)


def test_a_version_goes_from_draft_to_approved_to_active_and_back(
    http: Client, api_tenant: ApiTenant
) -> None:
    key, steps = api_tenant.headers, "1. check the passport\n2. book the appointment"
    definition = {"tool": "calendar", "args": {"days": [1, 2]}}
    first = ok(create(http, key, {"name": "renew-passport", "steps": steps}), 201)
    assert first == draft("renew-passport", 1, steps, None)
    assert ok(approve(http, key, "renew-passport", 1)) == approved(first)
    activated = ok(activate(http, key, "renew-passport", 1))
    serving_first = {
        **approved(first),
        "scope": "default",
        "activated_at": ACTIVATED_AT,
        "rollback_target": None,
    }
    assert activated == serving_first
    assert ok(active(http, key, "renew-passport")) == serving_first

    second = ok(create(http, key, {"name": "renew-passport", "definition": definition}), 201)
    assert second == draft("renew-passport", 2, None, definition)
    ok(approve(http, key, "renew-passport", 2))
    serving_second = {
        **approved(second),
        "scope": "default",
        "activated_at": ACTIVATED_AT,
        "rollback_target": 1,
    }
    assert ok(activate(http, key, "renew-passport", 2, "default")) == serving_second
    assert ok(active(http, key, "renew-passport", "default")) == serving_second

    rolled_back = {**serving_first, "activated_at": ROLLED_BACK_AT}
    assert ok(rollback(http, key, "renew-passport")) == rolled_back
    assert ok(active(http, key, "renew-passport")) == rolled_back


def test_only_the_approved_active_version_is_served(http: Client, api_tenant: ApiTenant) -> None:
    key = api_tenant.headers
    ok(create(http, key, {"name": "triage", "steps": "v1"}), 201)
    assert_problem(active(http, key, "triage"), 404, "not_found")
    ok(approve(http, key, "triage", 1))
    assert_problem(active(http, key, "triage"), 404, "not_found")
    ok(activate(http, key, "triage", 1))
    ok(create(http, key, {"name": "triage", "steps": "v2, a draft"}), 201)
    served = ok(active(http, key, "triage"))
    assert (served["version"], served["status"], served["steps"]) == (1, "approved", "v1")


def test_activating_an_unapproved_version_is_a_conflict_and_changes_nothing(
    http: Client, api_tenant: ApiTenant
) -> None:
    key = api_tenant.headers
    ready(http, key, "triage", 1)
    before = ok(activate(http, key, "triage", 1))
    ok(create(http, key, {"name": "triage", "steps": "v2, a draft"}), 201)
    assert_problem(activate(http, key, "triage", 2), 409, "conflict")
    assert_problem(activate(http, key, "triage", 2, "eu"), 409, "conflict")
    assert ok(active(http, key, "triage")) == before
    assert_problem(active(http, key, "triage", "eu"), 404, "not_found")
    # Approved later, it activates on top of the same history.
    ok(approve(http, key, "triage", 2))
    assert ok(activate(http, key, "triage", 2))["rollback_target"] == 1


def test_approving_twice_is_a_conflict_and_keeps_the_first_approval(
    http: Client, api_tenant: ApiTenant
) -> None:
    key = api_tenant.headers
    ok(create(http, key, {"name": "triage", "steps": "v1"}), 201)
    first = ok(approve(http, key, "triage", 1, {"approver": "a", "policy": "p"}))
    assert (first["approver"], first["policy"], first["evaluation_ref"]) == ("a", "p", None)
    assert_problem(approve(http, key, "triage", 1), 409, "conflict")
    assert ok(activate(http, key, "triage", 1))["approver"] == "a"


def test_rollback_walks_back_through_earlier_activations(
    http: Client, api_tenant: ApiTenant
) -> None:
    key = api_tenant.headers
    ready(http, key, "triage", 3)
    assert_problem(rollback(http, key, "triage"), 409, "conflict")
    for version in (1, 2, 3):
        ok(activate(http, key, "triage", version))
    # Activating the active version again changes nothing, its rollback target included.
    assert ok(activate(http, key, "triage", 3))["rollback_target"] == 2
    back = ok(rollback(http, key, "triage"))
    assert (back["version"], back["rollback_target"]) == (2, 1)
    back = ok(rollback(http, key, "triage"))
    assert (back["version"], back["rollback_target"]) == (1, None)
    assert_problem(rollback(http, key, "triage"), 409, "conflict")
    assert ok(active(http, key, "triage"))["version"] == 1


def test_scopes_are_independent(http: Client, api_tenant: ApiTenant) -> None:
    key = api_tenant.headers
    ready(http, key, "triage", 2)
    ok(activate(http, key, "triage", 1, "eu"))
    ok(activate(http, key, "triage", 2, "eu"))
    ok(activate(http, key, "triage", 2, "us"))
    assert_problem(active(http, key, "triage"), 404, "not_found")
    assert_problem(rollback(http, key, "triage", "us"), 409, "conflict")
    assert ok(rollback(http, key, "triage", "eu"))["version"] == 1
    us = ok(active(http, key, "triage", "us"))
    assert (us["scope"], us["version"], us["rollback_target"]) == ("us", 2, None)
    assert ok(active(http, key, "triage", "eu"))["version"] == 1


def test_another_tenant_can_neither_see_nor_change_a_procedure(
    http: Client, api_tenant: ApiTenant
) -> None:
    key, other = api_tenant.headers, make_tenant(http, "procedures").headers
    ready(http, key, "triage", 2)
    ok(activate(http, key, "triage", 1))
    assert_problem(active(http, other, "triage"), 404, "not_found")
    assert_problem(approve(http, other, "triage", 2), 404, "not_found")
    assert_problem(activate(http, other, "triage", 2), 404, "not_found")
    assert_problem(rollback(http, other, "triage"), 404, "not_found")
    # The same name is another procedure there, numbered from 1.
    assert ok(create(http, other, {"name": "triage", "steps": "theirs"}), 201)["version"] == 1
    assert ok(active(http, key, "triage"))["version"] == 1


def test_an_unknown_procedure_or_version_is_not_found(http: Client, api_tenant: ApiTenant) -> None:
    key = api_tenant.headers
    ready(http, key, "triage", 1)
    for response in (
        approve(http, key, "nope", 1),
        approve(http, key, "triage", 2),
        activate(http, key, "nope", 1),
        activate(http, key, "triage", 2),
        rollback(http, key, "nope"),
        active(http, key, "nope"),
    ):
        assert_problem(response, 404, "not_found")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"steps": "x"}, "name"),
        ({"name": "bad name", "steps": "x"}, "name"),
        ({"name": "triage"}, None),
        ({"name": "triage", "steps": None}, "steps"),
        ({"name": "triage", "steps": ""}, "steps"),
        ({"name": "triage", "steps": "a\x00b"}, "steps"),
        ({"name": "triage", "steps": "x" * 100_001}, "steps"),
        ({"name": "triage", "definition": [1, 2]}, "definition"),
        ({"name": "triage", "definition": {"k": "a\x00b"}}, "definition"),
        ({"name": "triage", "steps": "x", "owner": "me"}, "owner"),
    ],
)
def test_a_bad_draft_is_refused_whole_naming_the_field(
    http: Client, api_tenant: ApiTenant, body: Json, field: str | None
) -> None:
    key = api_tenant.headers
    assert_problem(create(http, key, body), 422, "invalid", field=field)
    # Nothing was written: the first good draft is still version 1.
    assert ok(create(http, key, {"name": "triage", "steps": "x"}), 201)["version"] == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"policy": "p"}, "approver"),
        ({"approver": "a"}, "policy"),
        ({"approver": "a b", "policy": "p"}, "approver"),
        ({"approver": "a", "policy": "p", "evaluation_ref": ""}, "evaluation_ref"),
        ({"approver": "a", "policy": "p", "extra": 1}, "extra"),
    ],
)
def test_a_bad_approval_is_refused_whole_naming_the_field(
    http: Client, api_tenant: ApiTenant, body: Json, field: str
) -> None:
    key = api_tenant.headers
    ok(create(http, key, {"name": "triage", "steps": "x"}), 201)
    assert_problem(approve(http, key, "triage", 1, body), 422, "invalid", field=field)
    assert_problem(activate(http, key, "triage", 1), 409, "conflict")  # still a draft
    assert ok(approve(http, key, "triage", 1))["status"] == "approved"


def test_a_bad_scope_or_version_is_refused_naming_it(http: Client, api_tenant: ApiTenant) -> None:
    key = api_tenant.headers
    ready(http, key, "triage", 1)
    assert_problem(activate(http, key, "triage", 1, "a scope"), 422, "invalid", field="scope")
    assert_problem(rollback(http, key, "triage", ""), 422, "invalid", field="scope")
    assert_problem(active(http, key, "triage", "a/b"), 422, "invalid", field="scope")
    for version in ("0", str(2**31)):
        response = http.post(version_path("triage", version, "activate"), json={}, headers=key)
        assert_problem(response, 422, "invalid", field="version")
    # A version that is not a number names no version: no such path.
    response = http.post(version_path("triage", "x", "activate"), json={}, headers=key)
    assert_problem(response, 404, "not_found")
    assert_problem(active(http, key, "triage"), 404, "not_found")


def test_the_client_drives_the_same_lifecycle(http: Client, api_tenant: ApiTenant) -> None:
    token = api_tenant.headers["Authorization"].removeprefix("Bearer ")
    sgam = SGAMClient(str(http.base_url), token, now=CREATED_AT, http=http)
    written = sgam.create_procedure("triage", definition={"tool": "pager"})
    assert (written.version, written.status, written.definition) == (1, "draft", {"tool": "pager"})
    with pytest.raises(Conflict):
        sgam.activate_procedure("triage", 1)
    assert sgam.approve_procedure("triage", 1, approver="a", policy="p").status == "approved"
    activated = sgam.activate_procedure("triage", 1, scope="eu")
    assert sgam.active_procedure("triage", scope="eu") == activated
    with pytest.raises(NotFound):
        sgam.active_procedure("triage")
    with pytest.raises(Conflict):
        sgam.roll_back_procedure("triage", scope="eu")
