"""Every call with real data, each answer checked against the OpenAPI document.

A tour makes every call of the design (facts, a conflict, evidence, erasures, whole-request
failures) as explicit schemathesis cases through the suite's test client, and asks each path
with several methods for its ``OPTIONS``.
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from litestar import Litestar
from litestar.testing import TestClient
from schemathesis.specs.openapi.checks import allow_header_conformance

from tests.conftest import ApiTenant
from tests.openapi_helpers import ANSWER_CHECKS, DESIGN_ROUTES, load_contract, send, served_document


@pytest.fixture(scope="module")
def contract(http: TestClient[Litestar]) -> schemathesis.BaseSchema:
    """The document the running app serves, as schemathesis loads it."""
    return load_contract(served_document(http))


class Tour:
    """Calls made as explicit schemathesis cases, each answer checked against the document."""

    def __init__(self, contract: schemathesis.BaseSchema, http: TestClient[Litestar]) -> None:
        self.contract = contract
        self.http = http
        self.visited: set[tuple[str, str]] = set()

    def call(
        self,
        method: str,
        path: str,
        *,
        expect: int,
        headers: dict[str, str],
        path_parameters: dict[str, Any] | None = None,
        query: dict[str, Any] | None = None,
        body: Any = None,
        raw: bytes | None = None,
    ) -> Any:
        """Send one call, assert its status and that the document describes the answer."""
        operation = self.contract[path][method.lower()]
        case = operation.Case(
            path_parameters=path_parameters, query=query, **({} if body is None else {"body": body})
        )
        if raw is None:
            response = send(self.http, case, headers)
        else:
            request = case.as_transport_kwargs(base_url=str(self.http.base_url), headers=headers)
            response = self.http.request(
                method,
                request["url"],
                headers={**request["headers"], "Content-Type": "application/json"},
                content=raw,
            )
        assert response.status_code == expect, response.text
        case.validate_response(response, checks=ANSWER_CHECKS)
        self.visited.add((method, path))
        content_type = response.headers["content-type"]
        return response.json() if "json" in content_type else response.text

    def options(self, path: str, *, headers: dict[str, str], **path_parameters: Any) -> None:
        """``OPTIONS`` on a documented path: its ``Allow`` lists exactly the path's methods."""
        operations = self.contract[path]
        case = next(iter(operations.values())).Case(path_parameters=path_parameters)
        request = case.as_transport_kwargs(base_url=str(self.http.base_url), headers=headers)
        response = self.http.options(request["url"], headers=request["headers"])
        assert response.status_code == 204, response.text
        case.validate_response(response, checks=[allow_header_conformance])


EXAMPLE_PATH_PARAMETERS: dict[str, dict[str, Any]] = {
    "/v1/episodes/{episode_id}": {"episode_id": "ep-1"},
    "/v1/subjects/{subject}": {"subject": "mira"},
    "/v1/facts/{subject}/{attribute}": {"subject": "mira", "attribute": "passport_deadline"},
    "/v1/attributes/{attribute}": {"attribute": "passport_deadline"},
    "/v1/admin/keys/{key_id}": {"key_id": "3f1c1a52-8a4b-4d5e-9f53-2d7a0b9e6c11"},
    "/v1/episodes": {},
    "/v1/threads/{thread_id}/checkpoint": {"thread_id": "t-1"},
}
"""Paths whose ``OPTIONS`` answer the tour checks, one of each shape (several methods, one)."""


def _candidate(value: str, evidence: str, *, valid_from: str) -> dict[str, Any]:
    return {
        "subject": "mira",
        "attribute": "passport_deadline",
        "change": "new",
        "value": value,
        "evidence": evidence,
        "valid_from": valid_from,
    }


def test_every_call_with_real_data_answers_as_documented(
    contract: schemathesis.BaseSchema,
    http: TestClient[Litestar],
    api_tenant: ApiTenant,
    admin: dict[str, str],
) -> None:
    tour, key = Tour(contract, http), api_tenant.headers
    fact_path = "/v1/facts/{subject}/{attribute}"
    mira = {"subject": "mira", "attribute": "passport_deadline"}
    start = "2026-05-01T00:00:00Z"

    tour.call(
        "PUT",
        "/v1/attributes/{attribute}",
        expect=200,
        headers=key,
        path_parameters={"attribute": "passport_deadline"},
        body={"value_type": "date", "description": "when Mira's passport must be renewed"},
    )
    tour.call("GET", "/v1/attributes", expect=200, headers=key)
    tour.call("GET", "/v1/memory-update-schema", expect=200, headers=key)
    first = tour.call(
        "POST",
        "/v1/episodes",
        expect=200,
        headers=key,
        body={
            "id": "ep-1",
            "occurred_at": "2026-05-01T09:00:00+02:00",
            "text": "Mira: my passport deadline is 2026-09-01.",
            "subjects": ["mira"],
            "metadata": {"channel": "chat"},
            "updates": [
                _candidate("2026-09-01", "my passport deadline is 2026-09-01", valid_from=start)
            ],
        },
    )
    assert [result["status"] for result in first["results"]] == ["written"]
    tour.call(
        "POST",
        "/v1/episodes/batch",
        expect=200,
        headers=key,
        body={
            "episodes": [
                {
                    "id": "ep-2",
                    "occurred_at": "2026-05-02T09:00:00Z",
                    "text": "Mira: no, the deadline is 2026-10-01.",
                    "subjects": ["mira"],
                    "session_id": "s-1",
                },
                {"id": "ep-3", "occurred_at": "2026-05-03T09:00:00Z", "text": "Mira moved."},
            ]
        },
    )
    challenged = tour.call(
        "POST",
        "/v1/episodes/{episode_id}/updates",
        expect=200,
        headers=key,
        path_parameters={"episode_id": "ep-2"},
        body={
            "candidates": [_candidate("2026-10-01", "the deadline is 2026-10-01", valid_from=start)]
        },
    )
    [conflict] = challenged["results"]
    assert conflict["status"] == "conflict", conflict
    tour.call(
        "GET",
        "/v1/episodes/{episode_id}",
        expect=200,
        headers=key,
        path_parameters={"episode_id": "ep-1"},
    )
    fact = tour.call("GET", fact_path, expect=200, headers=key, path_parameters=mira)
    assert fact["value"] == "2026-09-01", fact
    tour.call(
        "GET",
        fact_path,
        expect=404,
        headers=key,
        path_parameters=mira,
        query={"valid_at": "2020-01-01T00:00:00Z"},
    )
    tour.call("GET", f"{fact_path}/history", expect=200, headers=key, path_parameters=mira)
    tour.call("GET", "/v1/subjects", expect=200, headers=key, query={"limit": 1})
    tour.call(
        "GET",
        "/v1/subjects/{subject}/profile",
        expect=200,
        headers=key,
        path_parameters={"subject": "mira"},
        query={"known_at": "2026-05-02T00:00:00Z"},
    )
    tour.call(
        "GET",
        "/v1/subjects/{subject}/export",
        expect=200,
        headers=key,
        path_parameters={"subject": "mira"},
    )
    conflicts = tour.call("GET", "/v1/conflicts", expect=200, headers=key)
    assert [c["conflict_id"] for c in conflicts["conflicts"]] == [conflict["conflict_id"]]
    tour.call(
        "POST",
        "/v1/conflicts/{conflict_id}/resolve",
        expect=200,
        headers=key,
        path_parameters={"conflict_id": conflict["conflict_id"]},
        body={"choose": "challenger"},
    )
    # A type change is a migration: the PUT is refused, the dry run reports, nothing changes.
    passport = {"attribute": "passport_deadline"}
    tour.call(
        "PUT",
        "/v1/attributes/{attribute}",
        expect=409,
        headers=key,
        path_parameters=passport,
        body={"value_type": "string"},
    )
    tour.call(
        "POST",
        "/v1/attributes/{attribute}/migrations",
        expect=200,
        headers=key,
        path_parameters=passport,
        body={"value_type": "string", "dry_run": True},
    )
    weak = {**_candidate("2026-11-01", "Mira moved.", valid_from=start), "strength": "weak"}
    buffered = tour.call(
        "POST",
        "/v1/episodes/{episode_id}/updates",
        expect=200,
        headers=key,
        path_parameters={"episode_id": "ep-3"},
        body={"candidates": [weak]},
    )
    assert [r["status"] for r in buffered["results"]] == ["buffered"], buffered
    waiting = tour.call("GET", "/v1/buffer", expect=200, headers=key, query={"subject": "mira"})
    assert [s["episode_id"] for s in waiting["signals"]] == ["ep-3"], waiting
    tour.call(
        "POST",
        "/v1/evidence/search",
        expect=200,
        headers=key,
        body={"query": "passport deadline", "subject": "mira", "k": 3},
    )
    ep_1 = {"episode_id": "ep-1"}
    outcome = {"status": "succeeded", "outcome_receipt_id": "r-1", "verified": True}
    path = "/v1/episodes/{episode_id}/outcome"
    tour.call("POST", path, expect=200, headers=key, path_parameters=ep_1, body=outcome)
    read = tour.call("GET", path, expect=200, headers=key, path_parameters=ep_1)
    assert read["status"] == "succeeded", read
    tour.call("GET", path, expect=404, headers=key, path_parameters={"episode_id": "ep-3"})
    retry = "/v1/episodes/{episode_id}/extraction/retry"  # ep-1 was never sent: nothing dead
    tour.call("POST", retry, expect=409, headers=key, path_parameters=ep_1)
    found = tour.call(
        "POST",
        "/v1/experiences/search",
        expect=200,
        headers=key,
        body={"query": "passport deadline", "subject": "mira", "k": 3},
    )
    assert found["experience_count"] == 1, found
    tour.call(
        "POST",
        "/v1/context",
        expect=200,
        headers=key,
        body={"question": "When is Mira's passport deadline?", "subject": "mira"},
    )
    tour.call(
        "POST",
        "/v1/context",
        expect=200,
        headers=key,
        body={
            "question": "What was Mira's passport deadline?",
            "subject": "mira",
            "valid_from": "2026-05-01T00:00:00Z",
            "valid_to": "2026-07-01T00:00:00Z",
        },
    )
    tour.call(
        "POST",
        f"{fact_path}/expire",
        expect=200,
        headers=key,
        path_parameters=mira,
        body={"at": "2026-06-01T00:00:00Z", "source_episode_id": "ep-3"},
    )
    current = tour.call(
        "GET", f"{fact_path}/history", expect=200, headers=key, path_parameters=mira
    )
    tour.call(
        "POST",
        f"{fact_path}/retract",
        expect=200,
        headers=key,
        path_parameters=mira,
        body={"fact_id": current[-1]["fact_id"]},
    )
    tour.call(
        "DELETE",
        "/v1/episodes/{episode_id}",
        expect=200,
        headers=key,
        path_parameters={"episode_id": "ep-3"},
    )
    hold_path, subject = "/v1/subjects/{subject}/legal-hold", {"subject": "mira"}
    held = tour.call("POST", hold_path, expect=200, headers=key, path_parameters=subject)
    assert held["status"] == "held", held
    refused = tour.call(
        "DELETE", "/v1/subjects/{subject}", expect=409, headers=key, path_parameters=subject
    )
    assert (refused["code"], refused["field"]) == ("legal_hold", "subject"), refused
    released = tour.call("DELETE", hold_path, expect=200, headers=key, path_parameters=subject)
    assert released["status"] == "released", released
    tour.call("DELETE", hold_path, expect=404, headers=key, path_parameters=subject)
    tour.call(
        "PUT",
        "/v1/retention-classes/{name}",
        expect=200,
        headers=key,
        path_parameters={"name": "legal"},
        body={"keep_days": 3650},
    )
    tour.call(
        "GET",
        "/v1/purged-facts/{fact_id}",
        expect=404,
        headers=key,
        path_parameters={"fact_id": current[-1]["fact_id"]},
    )
    classes = tour.call("GET", "/v1/retention-classes", expect=200, headers=key)
    assert [c["name"] for c in classes["classes"]] == [
        "ephemeral",
        "legal",
        "permanent",
        "session",
        "standard",
    ], classes
    # A duplicate folds into mira; its id then names mira. Refusals are problem+json.
    tour.call(
        "POST",
        "/v1/episodes",
        expect=200,
        headers=key,
        body={
            "id": "ep-twin",
            "occurred_at": "2026-05-04T09:00:00Z",
            "text": "A note about the same person under another id.",
            "subjects": ["mira-twin"],
        },
    )
    merge_path, twin = "/v1/subjects/{subject}/merge", {"subject": "mira-twin"}
    into_mira = {"into": "mira"}
    merged = tour.call(
        "POST", merge_path, expect=200, headers=key, path_parameters=twin, body=into_mira
    )
    assert (merged["merged"], merged["into"], merged["episodes_linked"]) == ("mira-twin", "mira", 1)
    tour.call("POST", merge_path, expect=409, headers=key, path_parameters=twin, body=into_mira)
    tour.call(
        "POST",
        merge_path,
        expect=409,
        headers=key,
        path_parameters={"subject": "mira"},
        body={"into": "mira-twin"},
    )
    tour.call(
        "POST",
        merge_path,
        expect=422,
        headers=key,
        path_parameters={"subject": "mira"},
        body=into_mira,
    )
    tour.call(
        "POST",
        merge_path,
        expect=404,
        headers=key,
        path_parameters={"subject": "nobody"},
        body=into_mira,
    )
    # Names: declared on the survivor, read back (the merged id reads the survivor's).
    mira = {"subject": "mira"}
    named = tour.call(
        "PUT",
        "/v1/subjects/{subject}",
        expect=200,
        headers=key,
        path_parameters=mira,
        body={"display_name": "Mira Lopez", "aliases": ["M. Lopez"]},
    )
    assert (named["display_name"], named["aliases"]) == ("Mira Lopez", ["M. Lopez"])
    tour.call(
        "PUT",
        "/v1/subjects/{subject}",
        expect=422,
        headers=key,
        path_parameters=mira,
        body={"display_name": "?!"},
    )
    names = tour.call(
        "GET", "/v1/subjects/{subject}/names", expect=200, headers=key, path_parameters=twin
    )
    assert (names["subject"], names["display_name"]) == ("mira", "Mira Lopez")
    tour.call(
        "DELETE",
        "/v1/subjects/{subject}",
        expect=200,
        headers=key,
        path_parameters={"subject": "mira"},
    )

    checkpoint_path, thread = "/v1/threads/{thread_id}/checkpoint", {"thread_id": "t-1"}
    tour.call("GET", checkpoint_path, expect=404, headers=key, path_parameters=thread)
    written = tour.call(
        "PUT",
        checkpoint_path,
        expect=200,
        headers=key,
        path_parameters=thread,
        body={
            "active_goal_id": "renew-passport",
            "pending_dependency": "ep-2",
            "state": {"step": 1},
            "expected_version": 0,
        },
    )
    assert written["version"] == 1, written
    tour.call(
        "PUT",
        checkpoint_path,
        expect=409,
        headers=key,
        path_parameters=thread,
        body={"active_goal_id": None, "expected_version": 0},
    )
    tour.call(
        "GET",
        checkpoint_path,
        expect=200,
        headers=key,
        path_parameters=thread,
        query={"version": 1},
    )

    procedure = {"name": "renew-passport"}
    version_path = "/v1/procedures/{name}/versions/{version}"
    for version, steps in enumerate(("check the passport", "check the passport, then book"), 1):
        tour.call(
            "POST",
            "/v1/procedures",
            expect=201,
            headers=key,
            body={"name": "renew-passport", "steps": steps, "definition": {"tool": "calendar"}},
        )
        drafted = {**procedure, "version": version}
        tour.call(
            "POST",
            f"{version_path}/activate",
            expect=409,
            headers=key,
            path_parameters=drafted,
            body={"scope": "eu"},
        )
        tour.call(
            "POST",
            f"{version_path}/approve",
            expect=200,
            headers=key,
            path_parameters=drafted,
            body={"approver": "ops:lena", "policy": "review", "evaluation_ref": None},
        )
        tour.call(
            "POST",
            f"{version_path}/activate",
            expect=200,
            headers=key,
            path_parameters=drafted,
            body={"scope": "eu"},
        )
    active_path = "/v1/procedures/{name}/active"
    tour.call(
        "GET",
        active_path,
        expect=200,
        headers=key,
        path_parameters=procedure,
        query={"scope": "eu"},
    )
    tour.call(
        "POST",
        "/v1/procedures/{name}/rollback",
        expect=200,
        headers=key,
        path_parameters=procedure,
        body={"scope": "eu"},
    )
    tour.call("GET", active_path, expect=404, headers=key, path_parameters=procedure)

    # A read made for a decision leaves receipts; the decision reads back, and is judged.
    decision = "6f1c0a52-3f0e-4f57-9a43-5d2f3b8f0a11"
    traced = {**key, "X-SGAM-Decision": decision, "X-SGAM-Scope": "project:acme"}
    tour.call("GET", checkpoint_path, expect=200, headers=traced, path_parameters=thread)
    receipts_path = "/v1/decisions/{decision_id}/receipts"
    answer = tour.call(
        "GET", receipts_path, expect=200, headers=key, path_parameters={"decision_id": decision}
    )
    assert [receipt["memory_type"] for receipt in answer["receipts"]] == ["working"]
    tour.call(
        "GET",
        receipts_path,
        expect=404,
        headers=key,
        path_parameters={"decision_id": "00000000-0000-0000-0000-000000000000"},
    )
    expectation = {
        "decision_id": decision,
        "memory": {"type": "working", "thread": thread["thread_id"]},
        "scope": "project:acme",
    }
    judged = tour.call(
        "POST", "/v1/health/classify", expect=200, headers=key, body={"expectations": [expectation]}
    )
    assert [verdict["verdict"] for verdict in judged["verdicts"]] == ["HEALTHY"]
    erased = tour.call(
        "DELETE", "/v1/threads/{thread_id}", expect=200, headers=key, path_parameters=thread
    )
    assert erased["checkpoints_deleted"] == 1, erased
    tour.call("DELETE", "/v1/threads/{thread_id}", expect=404, headers=key, path_parameters=thread)

    # Whole-request failures, each as problem+json.
    tour.call("GET", "/v1/attributes", expect=401, headers={})
    tour.call("GET", "/v1/attributes", expect=401, headers={"Authorization": "Bearer sgam_nope"})
    tour.call("POST", "/v1/evidence/search", expect=400, headers=key, raw=b"{not json")
    tour.call("POST", "/v1/evidence/search", expect=413, headers=key, raw=b" " * (300 * 1024))
    tour.call("POST", "/v1/evidence/search", expect=422, headers=key, body={"query": ""})

    tenant = f"{api_tenant.name}-tour"
    tour.call("POST", "/v1/admin/tenants", expect=201, headers=admin, body={"tenant_id": tenant})
    tour.call("POST", "/v1/admin/tenants", expect=409, headers=admin, body={"tenant_id": tenant})
    named = {"tenant": tenant}
    tour.call("GET", "/v1/admin/tenants/{tenant}", expect=200, headers=admin, path_parameters=named)
    refusing = {"on_unverified_evidence": "refuse"}
    changed = tour.call(
        "PATCH",
        "/v1/admin/tenants/{tenant}",
        expect=200,
        headers=admin,
        path_parameters=named,
        body=refusing,
    )
    assert changed == {"tenant_id": tenant, **refusing}, changed
    tour.call(
        "PATCH",
        "/v1/admin/tenants/{tenant}",
        expect=404,
        headers=admin,
        path_parameters={"tenant": "no-such-tenant"},
        body=refusing,
    )
    issued = tour.call(
        "POST",
        "/v1/admin/tenants/{tenant}/keys",
        expect=201,
        headers=admin,
        path_parameters={"tenant": tenant},
    )
    tour.call(
        "DELETE",
        "/v1/admin/keys/{key_id}",
        expect=200,
        headers=admin,
        path_parameters={"key_id": issued["key_id"]},
    )
    tour.call("POST", "/v1/admin/tenants", expect=401, headers=key, body={"tenant_id": "x"})
    for path, parameters in EXAMPLE_PATH_PARAMETERS.items():
        tour.options(path, headers=admin if path.startswith("/v1/admin/") else key, **parameters)
    tour.call("GET", "/healthz", expect=200, headers={})
    tour.call("GET", "/readyz", expect=200, headers={})
    tour.call("GET", "/metrics", expect=200, headers={})

    assert tour.visited == DESIGN_ROUTES
