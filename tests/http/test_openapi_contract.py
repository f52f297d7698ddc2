"""The OpenAPI document is valid and describes section 8 of the design, call by call.

The document is read from the running app. ``test_openapi_generated`` then holds the server to
it with generated requests, and ``test_openapi_tour`` with every call made on real data.
"""

from __future__ import annotations

from typing import Any

import jsonschema_rs
import pytest
import schemathesis
from litestar import Litestar
from litestar.testing import TestClient

from tests.openapi_helpers import (
    DESIGN_ROUTES,
    INVALID_INPUT_ROUTES,
    load_contract,
    operations,
    served_document,
)

PROBLEM = "application/problem+json"

REQUEST_BODIES = {
    ("POST", "/v1/admin/tenants"): "TenantCreate",
    ("PATCH", "/v1/admin/tenants/{tenant}"): "TenantChange",
    ("PUT", "/v1/attributes/{attribute}"): "AttributeDeclaration",
    ("PUT", "/v1/retention-classes/{name}"): "RetentionClassDeclaration",
    ("POST", "/v1/attributes/{attribute}/migrations"): "MigrationRequest",
    ("POST", "/v1/episodes"): "EpisodeBody",
    ("POST", "/v1/episodes/batch"): "EpisodeBatch",
    ("POST", "/v1/episodes/{episode_id}/updates"): "CandidatesBody",
    ("POST", "/v1/facts/{subject}/{attribute}/expire"): "ExpireBody",
    ("POST", "/v1/facts/{subject}/{attribute}/retract"): "RetractBody",
    ("POST", "/v1/subjects/{subject}/merge"): "MergeBody",
    ("PUT", "/v1/subjects/{subject}"): "SubjectNamesDeclaration",
    ("POST", "/v1/conflicts/{conflict_id}/resolve"): "ResolveBody",
    ("POST", "/v1/evidence/search"): "SearchRequest",
    ("POST", "/v1/episodes/{episode_id}/outcome"): "OutcomeInput",
    ("POST", "/v1/experiences/search"): "ExperienceRequest",
    ("POST", "/v1/context"): "ContextRequest",
    ("POST", "/v1/procedures"): "ProcedureInput",
    ("POST", "/v1/procedures/{name}/versions/{version}/approve"): "ApprovalInput",
    ("POST", "/v1/procedures/{name}/versions/{version}/activate"): "ActivationInput",
    ("POST", "/v1/procedures/{name}/rollback"): "RollbackInput",
    ("PUT", "/v1/threads/{thread_id}/checkpoint"): "CheckpointWrite",
    ("POST", "/v1/health/classify"): "ClassifyRequest",
}
"""The model each body-carrying call takes; every other call takes none."""

PROBLEM_STATUSES = {"400", "401", "403", "404", "409", "413", "415", "422", "500", "503"}


@pytest.fixture(scope="module")
def document(http: TestClient[Litestar]) -> dict[str, Any]:
    """The OpenAPI document the running app serves."""
    return served_document(http)


@pytest.fixture(scope="module")
def contract(document: dict[str, Any]) -> schemathesis.BaseSchema:
    """The document as schemathesis loads it."""
    return load_contract(document)


def test_the_document_is_valid_openapi_3_1(
    document: dict[str, Any], contract: schemathesis.BaseSchema
) -> None:
    assert document["openapi"] == "3.1.0"
    contract.validate()
    dialect = "https://json-schema.org/draft/2020-12/schema"
    for name, schema in document["components"]["schemas"].items():
        assert jsonschema_rs.meta.is_valid({"$schema": dialect, **schema}), name


def test_every_design_route_is_documented_with_its_method(document: dict[str, Any]) -> None:
    assert set(operations(document)) == DESIGN_ROUTES


def test_every_api_call_documents_its_problems_as_problem_json(document: dict[str, Any]) -> None:
    problem_ref = {"$ref": "#/components/schemas/Problem"}
    for (method, path), operation in operations(document).items():
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
        for key, operation in operations(document).items()
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
    ("POST", "/v1/experiences/search"): "ExperienceResult",
}
"""The read calls and the model each answers with."""

READ_ANSWER_FIELDS = {
    "SearchResult": ["results", "search"],
    "EvidenceItem": ["episode_id", "occurred_at", "kind", "session_id", "snippet", "score"],
    "SearchPlan": ["method", "scope_size", "scope_size_capped", "mode"],
    "ExperienceResult": ["results", "experience_count", "search"],
    "ExperienceItem": [
        "episode_id",
        "occurred_at",
        "kind",
        "session_id",
        "snippet",
        "score",
        "outcome",
        "experience",
    ],
    "EpisodeOutcome": [
        "episode_id",
        "revision",
        "status",
        "outcome_receipt_id",
        "verified",
        "human_intervened",
        "budget_exhausted",
        "recorded_at",
        "observed",
    ],
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
        "mark",
    ],
    "UncertainKey": ["subject", "attribute", "incumbent", "challengers", "newer_evidence"],
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
    "QuestionPlan": [
        "mode",
        "valid_at",
        "known_at",
        "subject",
        "attributes",
        "routed",
        "reasons",
        "migrated_from",
        "valid_from",
        "valid_to",
        "subject_candidates",
    ],
    "SubjectCandidate": ["subject", "name", "text", "how", "score"],
    "PlanReasons": ["subject", "valid_at", "known_at", "mode", "attributes"],
}
"""Each object of the read answers, its fields in the order its JSON carries them."""

OPTIONAL_ANSWER_FIELDS = {
    "QuestionPlan": {"migrated_from", "valid_from", "valid_to", "subject_candidates"},
    "ContextEvidence": {"mark"},
    "UncertainKey": {"newer_evidence"},
}
"""Fields an answer carries only when they apply (a renamed attribute's old name, a period
read's range, the subjects weighed when none was chosen, an evidence line's mark, the episodes
newer than an uncertain key's value)."""


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
    by_route = operations(document)
    found: dict[str, dict[str, Any]] = {}
    for route, name in READ_ANSWERS.items():
        answer = by_route[route]["responses"]["200"]["content"]["application/json"]["schema"]
        assert answer == {"$ref": f"#/components/schemas/{name}"}, route
        _reached(schemas, answer, found)
    assert set(READ_ANSWER_FIELDS) <= set(found)
    for name, fields in READ_ANSWER_FIELDS.items():
        assert list(found[name]["properties"]) == fields, name
        optional = OPTIONAL_ANSWER_FIELDS.get(name, set())
        assert set(found[name]["required"]) == set(fields) - optional, name


def test_invalid_input_is_generated_for_every_call_that_can_refuse_it(
    document: dict[str, Any],
) -> None:
    constrained = {
        key
        for key, operation in operations(document).items()
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
    for (method, path), operation in operations(document).items():
        expected: list[dict[str, list[str]]] | None
        if path.startswith("/v1/admin/"):
            expected = [{"AdminToken": []}]
        elif path.startswith("/v1/"):
            expected = [{"ApiKey": []}]
        else:
            expected = None
        assert operation.get("security") == expected, (method, path)
