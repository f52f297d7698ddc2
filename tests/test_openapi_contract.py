"""The OpenAPI document is valid and describes what the real app answers.

The document is read from the running app and its structure pinned against section 8 of the
design. Schemathesis then generates valid and invalid requests for every operation, and a tour
makes every call with real data (facts, a conflict, evidence, erasures); each request goes
through the suite's test client (lifespan run, real database, real model) and each answer is
checked against the document: no 5xx, only documented status codes, media types and headers,
bodies matching their schemas.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import hypothesis
import jsonschema_rs
import pytest
import schemathesis
from litestar import Litestar
from litestar.testing import TestClient
from schemathesis.checks import negative_data_rejection, not_a_server_error
from schemathesis.config import SchemathesisConfig
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.conftest import ApiTenant

PROBLEM = "application/problem+json"

DESIGN_ROUTES = {
    ("POST", "/v1/admin/tenants"),
    ("POST", "/v1/admin/tenants/{tenant}/keys"),
    ("DELETE", "/v1/admin/keys/{key_id}"),
    ("PUT", "/v1/attributes/{attribute}"),
    ("GET", "/v1/attributes"),
    ("GET", "/v1/memory-update-schema"),
    ("POST", "/v1/episodes"),
    ("POST", "/v1/episodes/batch"),
    ("GET", "/v1/episodes/{episode_id}"),
    ("POST", "/v1/episodes/{episode_id}/updates"),
    ("GET", "/v1/facts/{subject}/{attribute}"),
    ("GET", "/v1/facts/{subject}/{attribute}/history"),
    ("POST", "/v1/facts/{subject}/{attribute}/expire"),
    ("POST", "/v1/facts/{subject}/{attribute}/retract"),
    ("GET", "/v1/subjects"),
    ("GET", "/v1/subjects/{subject}/profile"),
    ("GET", "/v1/subjects/{subject}/export"),
    ("GET", "/v1/conflicts"),
    ("POST", "/v1/conflicts/{conflict_id}/resolve"),
    ("DELETE", "/v1/subjects/{subject}"),
    ("DELETE", "/v1/episodes/{episode_id}"),
    ("POST", "/v1/evidence/search"),
    ("POST", "/v1/context"),
    ("GET", "/healthz"),
    ("GET", "/readyz"),
    ("GET", "/metrics"),
}
"""Every call of the design's section 8 table (``/schema`` serves this document itself)."""

REQUEST_BODIES = {
    ("POST", "/v1/admin/tenants"): "TenantCreate",
    ("PUT", "/v1/attributes/{attribute}"): "AttributeDeclaration",
    ("POST", "/v1/episodes"): "EpisodeBody",
    ("POST", "/v1/episodes/batch"): "EpisodeBatch",
    ("POST", "/v1/episodes/{episode_id}/updates"): "CandidatesBody",
    ("POST", "/v1/facts/{subject}/{attribute}/expire"): "ExpireBody",
    ("POST", "/v1/facts/{subject}/{attribute}/retract"): "RetractBody",
    ("POST", "/v1/conflicts/{conflict_id}/resolve"): "ResolveBody",
    ("POST", "/v1/evidence/search"): "SearchRequest",
    ("POST", "/v1/context"): "ContextRequest",
}
"""The model each body-carrying call takes; every other call takes none."""

INVALID_INPUT_ROUTES = {(method, path) for method, path in DESIGN_ROUTES if path.startswith("/v1/")}
"""Calls with an input that can be invalid: a body, a query parameter, a typed or patterned path
parameter, or the ``X-SGAM-Now`` header (every tenant call). Only the health calls have none.
"""

PROBLEM_STATUSES = {"400", "401", "403", "404", "409", "413", "415", "422", "500", "503"}

GeneratedCase = schemathesis.Case[Any]

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]

FUZZ_SETTINGS = hypothesis.settings(
    max_examples=20,
    derandomize=True,
    database=None,
    deadline=None,
    # A failure is reported as first found: shrinking replays requests against a shared database.
    phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
    # Deeply nested invalid bodies (an episode batch) take seconds to generate on a loaded
    # machine; that is a timing, which tests do not assert. The budget above bounds the work.
    suppress_health_check=[hypothesis.HealthCheck.too_slow],
)


def _operations(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    methods = {"get", "put", "post", "delete", "patch"}
    return {
        (method.upper(), path): operation
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in methods
    }


@pytest.fixture(scope="module")
def document(http: TestClient[Litestar]) -> dict[str, Any]:
    """The OpenAPI document the running app serves."""
    response = http.get("/schema/openapi.json")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


@pytest.fixture(scope="module")
def contract(document: dict[str, Any]) -> schemathesis.BaseSchema:
    """The document as schemathesis loads it, to generate requests and check answers."""
    # The Authorization header is sent by each test, never generated from the security schemes.
    config = SchemathesisConfig.from_dict({"generation": {"with-security-parameters": False}})
    return schemathesis.openapi.from_dict(document, config=config)


def _send(
    http: TestClient[Litestar], case: GeneratedCase, headers: dict[str, str]
) -> httpx.Response:
    """Send a generated case through the suite's test client (the app whose lifespan runs)."""
    request = case.as_transport_kwargs(base_url=str(http.base_url), headers=headers)
    assert not request.get("cookies"), request
    body: dict[str, Any] = {}
    if "json" in request:
        body["json"] = request["json"]
    elif "data" in request:
        body["content"] = request["data"]
    return http.request(
        request["method"],
        request["url"],
        params=request.get("params"),
        headers=request["headers"],
        **body,
    )


# -- the document's structure --------------------------------------------------------------


def test_the_document_is_valid_openapi_3_1(
    document: dict[str, Any], contract: schemathesis.BaseSchema
) -> None:
    assert document["openapi"] == "3.1.0"
    contract.validate()
    dialect = "https://json-schema.org/draft/2020-12/schema"
    for name, schema in document["components"]["schemas"].items():
        assert jsonschema_rs.meta.is_valid({"$schema": dialect, **schema}), name


def test_every_design_route_is_documented_with_its_method(document: dict[str, Any]) -> None:
    assert set(_operations(document)) == DESIGN_ROUTES


def test_every_api_call_documents_its_problems_as_problem_json(document: dict[str, Any]) -> None:
    problem_ref = {"$ref": "#/components/schemas/Problem"}
    for (method, path), operation in _operations(document).items():
        if not path.startswith("/v1/"):
            continue
        responses = operation["responses"]
        problems = {status for status in responses if status.startswith(("4", "5"))}
        assert problems == PROBLEM_STATUSES, (method, path)
        for status in problems:
            assert responses[status]["content"] == {PROBLEM: {"schema": problem_ref}}, (
                method,
                path,
                status,
            )


def test_request_bodies_reference_their_models(document: dict[str, Any]) -> None:
    bodies = {
        key: operation["requestBody"]
        for key, operation in _operations(document).items()
        if "requestBody" in operation
    }
    assert set(bodies) == set(REQUEST_BODIES)
    for key, body in bodies.items():
        assert body["required"] is True, key
        assert body["content"] == {
            "application/json": {"schema": {"$ref": f"#/components/schemas/{REQUEST_BODIES[key]}"}}
        }, key


READ_ANSWERS = {
    ("POST", "/v1/evidence/search"): "SearchResult",
    ("POST", "/v1/context"): "ContextResult",
}
"""The read calls and the model each answers with."""

READ_ANSWER_FIELDS = {
    "SearchResult": ["results", "search"],
    "EvidenceItem": ["episode_id", "occurred_at", "kind", "session_id", "snippet", "score"],
    "SearchPlan": ["method", "scope_size", "scope_size_capped"],
    "ContextResult": [
        "block",
        "citations",
        "facts",
        "evidence",
        "uncertain",
        "plan",
        "decision_id",
        "over_budget",
        "tokens",
    ],
    "Citation": ["episode_id", "occurred_at", "role"],
    "ContextEvidence": [
        "episode_id",
        "occurred_at",
        "snippet",
        "score",
        "superseded",
        "unverified",
    ],
    "UncertainKey": ["subject", "attribute", "incumbent", "challengers"],
    "Incumbent": [
        "fact_id",
        "value",
        "valid_from",
        "valid_to",
        "source_episode_id",
        "source_kind",
    ],
    "Challenger": [
        "conflict_id",
        "value",
        "source_episode_id",
        "source_kind",
        "evidence",
        "evidence_verified",
    ],
    "QuestionPlan": ["mode", "valid_at", "known_at", "subject", "attributes", "routed", "reasons"],
    "PlanReasons": ["subject", "valid_at", "known_at", "mode", "attributes"],
}
"""Each object of the read answers, its fields in the order its JSON carries them."""


def _reached(schemas: dict[str, Any], schema: Any, found: dict[str, dict[str, Any]]) -> None:
    """Every named schema ``schema`` leads to, and a check that no object in it is bare."""
    if isinstance(schema, list):
        for item in schema:
            _reached(schemas, item, found)
        return
    if not isinstance(schema, dict):
        return
    ref = schema.get("$ref")
    if ref is not None:
        name = ref.removeprefix("#/components/schemas/")
        if name not in found:
            found[name] = schemas[name]
            _reached(schemas, schemas[name], found)
        return
    types = schema.get("type", [])
    if "object" in (types if isinstance(types, list) else [types]):
        assert schema.get("properties"), schema  # an object a client reads names its fields
    _reached(schemas, list(schema.get("properties", {}).values()), found)
    for key in ("items", "oneOf", "anyOf", "allOf", "additionalProperties"):
        _reached(schemas, schema.get(key), found)


def test_the_read_answers_describe_every_nested_object_field_by_field(
    document: dict[str, Any],
) -> None:
    schemas = document["components"]["schemas"]
    operations = _operations(document)
    found: dict[str, dict[str, Any]] = {}
    for route, name in READ_ANSWERS.items():
        answer = operations[route]["responses"]["200"]["content"]["application/json"]["schema"]
        assert answer == {"$ref": f"#/components/schemas/{name}"}, route
        _reached(schemas, answer, found)
    assert set(READ_ANSWER_FIELDS) <= set(found)
    for name, fields in READ_ANSWER_FIELDS.items():
        assert list(found[name]["properties"]) == fields, name
        assert set(found[name]["required"]) == set(fields), name


def test_invalid_input_is_generated_for_every_call_that_can_refuse_it(
    document: dict[str, Any],
) -> None:
    constrained = {
        key
        for key, operation in _operations(document).items()
        if "requestBody" in operation
        or any(
            parameter["in"] == "query"
            or "format" in parameter["schema"]
            or "pattern" in parameter["schema"]
            for parameter in operation.get("parameters", [])
        )
    }
    assert constrained == INVALID_INPUT_ROUTES


def test_tenant_calls_need_an_api_key_and_admin_calls_the_admin_token(
    document: dict[str, Any],
) -> None:
    assert document["components"]["securitySchemes"] == {
        "ApiKey": {"type": "http", "scheme": "bearer", "description": "A tenant's API key."},
        "AdminToken": {"type": "http", "scheme": "bearer", "description": "SGAM_ADMIN_TOKEN."},
    }
    for (method, path), operation in _operations(document).items():
        expected: list[dict[str, list[str]]] | None
        if path.startswith("/v1/admin/"):
            expected = [{"AdminToken": []}]
        elif path.startswith("/v1/"):
            expected = [{"ApiKey": []}]
        else:
            expected = None
        assert operation.get("security") == expected, (method, path)


# -- generated requests against the running app ---------------------------------------------


def _route_id(route: tuple[str, str]) -> str:
    return " ".join(route)


@pytest.fixture
def credentials(api_tenant: ApiTenant, admin: dict[str, str]) -> Callable[[str], dict[str, str]]:
    """The headers a path needs: the admin token under /v1/admin/, else a fresh tenant's key."""
    return lambda path: admin if path.startswith("/v1/admin/") else api_tenant.headers


def _fuzz(
    contract: schemathesis.BaseSchema,
    http: TestClient[Litestar],
    route: tuple[str, str],
    *,
    mode: GenerationMode,
    headers: dict[str, str],
) -> None:
    method, path = route
    checks = CHECKS if mode is GenerationMode.POSITIVE else [*CHECKS, negative_data_rejection]

    @FUZZ_SETTINGS
    @hypothesis.given(case=contract[path][method.lower()].as_strategy(generation_mode=mode))
    def answered_as_documented(case: GeneratedCase) -> None:
        case.validate_response(_send(http, case, headers), checks=checks)

    answered_as_documented()


@pytest.mark.parametrize("route", sorted(DESIGN_ROUTES), ids=_route_id)
def test_valid_requests_are_answered_as_documented(
    route: tuple[str, str],
    contract: schemathesis.BaseSchema,
    http: TestClient[Litestar],
    credentials: Callable[[str], dict[str, str]],
) -> None:
    _fuzz(contract, http, route, mode=GenerationMode.POSITIVE, headers=credentials(route[1]))


@pytest.mark.parametrize("route", sorted(INVALID_INPUT_ROUTES), ids=_route_id)
def test_invalid_requests_are_refused_as_documented(
    route: tuple[str, str],
    contract: schemathesis.BaseSchema,
    http: TestClient[Litestar],
    credentials: Callable[[str], dict[str, str]],
) -> None:
    _fuzz(contract, http, route, mode=GenerationMode.NEGATIVE, headers=credentials(route[1]))


# -- every call with real data ----------------------------------------------------------------


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
            response = _send(self.http, case, headers)
        else:
            request = case.as_transport_kwargs(base_url=str(self.http.base_url), headers=headers)
            response = self.http.request(
                method,
                request["url"],
                headers={**request["headers"], "Content-Type": "application/json"},
                content=raw,
            )
        assert response.status_code == expect, response.text
        case.validate_response(response, checks=CHECKS)
        self.visited.add((method, path))
        content_type = response.headers["content-type"]
        return response.json() if "json" in content_type else response.text


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
    tour.call(
        "POST",
        "/v1/evidence/search",
        expect=200,
        headers=key,
        body={"query": "passport deadline", "subject": "mira", "k": 3},
    )
    tour.call(
        "POST",
        "/v1/context",
        expect=200,
        headers=key,
        body={"question": "When is Mira's passport deadline?", "subject": "mira"},
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
    tour.call(
        "DELETE",
        "/v1/subjects/{subject}",
        expect=200,
        headers=key,
        path_parameters={"subject": "mira"},
    )

    # Whole-request failures, each as problem+json.
    tour.call("GET", "/v1/attributes", expect=401, headers={})
    tour.call("GET", "/v1/attributes", expect=401, headers={"Authorization": "Bearer sgam_nope"})
    tour.call("POST", "/v1/evidence/search", expect=400, headers=key, raw=b"{not json")
    tour.call("POST", "/v1/evidence/search", expect=413, headers=key, raw=b" " * (300 * 1024))
    tour.call("POST", "/v1/evidence/search", expect=422, headers=key, body={"query": ""})

    tenant = f"{api_tenant.name}-tour"
    tour.call("POST", "/v1/admin/tenants", expect=201, headers=admin, body={"tenant_id": tenant})
    tour.call("POST", "/v1/admin/tenants", expect=409, headers=admin, body={"tenant_id": tenant})
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
    tour.call("GET", "/healthz", expect=200, headers={})
    tour.call("GET", "/readyz", expect=200, headers={})
    tour.call("GET", "/metrics", expect=200, headers={})

    assert tour.visited == DESIGN_ROUTES
