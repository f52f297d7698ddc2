"""The OpenAPI document as the tests read it: the design's calls, loading, sending a case."""

from __future__ import annotations

from typing import Any

import httpx
import schemathesis
from litestar import Litestar
from litestar.testing import TestClient
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

DESIGN_ROUTES = {
    ("POST", "/v1/admin/tenants"),
    ("GET", "/v1/admin/tenants/{tenant}"),
    ("PATCH", "/v1/admin/tenants/{tenant}"),
    ("POST", "/v1/admin/tenants/{tenant}/keys"),
    ("DELETE", "/v1/admin/keys/{key_id}"),
    ("PUT", "/v1/attributes/{attribute}"),
    ("POST", "/v1/attributes/{attribute}/migrations"),
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
    ("POST", "/v1/subjects/{subject}/merge"),
    ("PUT", "/v1/subjects/{subject}"),
    ("GET", "/v1/subjects/{subject}/names"),
    ("GET", "/v1/conflicts"),
    ("GET", "/v1/buffer"),
    ("PUT", "/v1/retention-classes/{name}"),
    ("GET", "/v1/retention-classes"),
    ("POST", "/v1/subjects/{subject}/legal-hold"),
    ("DELETE", "/v1/subjects/{subject}/legal-hold"),
    ("GET", "/v1/purged-facts/{fact_id}"),
    ("POST", "/v1/conflicts/{conflict_id}/resolve"),
    ("DELETE", "/v1/subjects/{subject}"),
    ("DELETE", "/v1/episodes/{episode_id}"),
    ("POST", "/v1/episodes/{episode_id}/outcome"),
    ("GET", "/v1/episodes/{episode_id}/outcome"),
    ("POST", "/v1/episodes/{episode_id}/extraction/retry"),
    ("POST", "/v1/experiences/search"),
    ("POST", "/v1/evidence/search"),
    ("POST", "/v1/context"),
    ("PUT", "/v1/threads/{thread_id}/checkpoint"),
    ("GET", "/v1/threads/{thread_id}/checkpoint"),
    ("DELETE", "/v1/threads/{thread_id}"),
    ("POST", "/v1/procedures"),
    ("POST", "/v1/procedures/{name}/versions/{version}/approve"),
    ("POST", "/v1/procedures/{name}/versions/{version}/activate"),
    ("POST", "/v1/procedures/{name}/rollback"),
    ("GET", "/v1/procedures/{name}/active"),
    ("GET", "/v1/decisions/{decision_id}/receipts"),
    ("POST", "/v1/health/classify"),
    ("GET", "/healthz"),
    ("GET", "/readyz"),
    ("GET", "/metrics"),
}
"""Every call of the design's section 8 table (``/schema`` serves this document itself)."""

INVALID_INPUT_ROUTES = {(method, path) for method, path in DESIGN_ROUTES if path.startswith("/v1/")}
"""Calls with an input that can be invalid: a body, a query parameter, a typed or patterned path
parameter, or the ``X-SGAM-Now`` header (every tenant call). Only the health calls have none.
"""

GeneratedCase = schemathesis.Case[Any]

ANSWER_CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]
"""The checks of an answer to a call made by hand (no generated data to judge)."""


def operations(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """Each documented operation by (METHOD, path)."""
    methods = {"get", "put", "post", "delete", "patch"}
    return {
        (method.upper(), path): operation
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in methods
    }


def route_id(route: tuple[str, str]) -> str:
    """A call as a test id: ``GET /v1/attributes``."""
    return " ".join(route)


def served_document(http: TestClient[Litestar]) -> dict[str, Any]:
    """The OpenAPI document the running app serves."""
    response = http.get("/schema/openapi.json")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def load_contract(document: dict[str, Any]) -> schemathesis.BaseSchema:
    """The document as schemathesis loads it, to generate requests and check answers."""
    # The Authorization header is sent by each test, never generated from the security schemes.
    # NUL is never generated: PostgreSQL text cannot hold it, so every string refuses it (422
    # naming the field). The document states the rule (a pattern on each string of a body, a
    # sentence on each free object: tests/http/test_openapi_exact.py), but no generator reads a
    # sentence, and a free object (metadata, state) would get NUL in its strings.
    # Schemathesis' own list of refusals, and 413: a generated invalid body can run past the
    # size limit, which refuses it as surely as 422 would.
    rejected = [
        "400",
        "401",
        "403",
        "404",
        "405",
        "406",
        "409",
        "413",
        "415",
        "422",
        "428",
        "429",
        "5xx",
    ]
    config = SchemathesisConfig.from_dict(
        {
            "generation": {"with-security-parameters": False, "allow-x00": False},
            "checks": {"negative_data_rejection": {"expected-statuses": rejected}},
        }
    )
    return schemathesis.openapi.from_dict(document, config=config)


def send(
    http: TestClient[Litestar], case: GeneratedCase, headers: dict[str, str]
) -> httpx.Response:
    """Send a case through the suite's test client (the app whose lifespan runs)."""
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
