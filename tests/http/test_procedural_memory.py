"""Procedural memory over HTTP: what only the routes show, their statuses and problems.

The lifecycle (draft, approval, activation per scope, rollback), tenants and refusals naming
their field are scenarios of tests/conformance/test_procedural_memory.py, run here too.
"""

from __future__ import annotations

from tests.conftest import ApiTenant
from tests.http_helpers import assert_problem
from tests.procedure_helpers import (
    Client,
    activate,
    active,
    approve,
    create,
    ok,
    ready,
    rollback,
    version_path,
)


def test_a_draft_is_201_and_each_refusal_a_problem_with_its_status(
    http: Client, api_tenant: ApiTenant
) -> None:
    key = api_tenant.headers
    assert ok(create(http, key, {"name": "triage", "steps": "v1"}), 201)["version"] == 1
    assert_problem(create(http, key, {"name": "bad name"}), 422, "invalid", field="name")
    assert_problem(activate(http, key, "triage", 1), 409, "conflict")
    assert_problem(active(http, key, "triage"), 404, "not_found")
    ok(approve(http, key, "triage", 1))
    assert_problem(approve(http, key, "triage", 1), 409, "conflict")
    assert_problem(rollback(http, key, "triage"), 409, "conflict")
    assert_problem(activate(http, key, "triage", 1, "a scope"), 422, "invalid", field="scope")


def test_a_version_in_the_path_is_a_number_in_range_or_names_no_path(
    http: Client, api_tenant: ApiTenant
) -> None:
    key = api_tenant.headers
    ready(http, key, "triage", 1)
    for version in ("0", str(2**31)):
        response = http.post(version_path("triage", version, "activate"), json={}, headers=key)
        assert_problem(response, 422, "invalid", field="version")
    # A version that is not a number names no version: no such path.
    response = http.post(version_path("triage", "x", "activate"), json={}, headers=key)
    assert_problem(response, 404, "not_found")
    assert_problem(active(http, key, "triage"), 404, "not_found")
