"""The OpenAPI document states each input rule the server enforces, and the server keeps it.

Each test pairs what the document says about one input with what the server answers to it:
ids carry their pattern wherever they are sent, bodies refuse unknown fields, counts are
integers and never booleans, a retraction names exactly one fact, source ranks are keyed by
episode kind, and ``OPTIONS`` lists every method of a path.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from store.contract.common import IDENTIFIER_PATTERN, NO_NUL_IN_OBJECT
from tests.conftest import ApiTenant
from tests.openapi_helpers import operations, served_document

ID_SCHEMA = {"type": "string", "maxLength": 100_000, "pattern": IDENTIFIER_PATTERN}
"""An id in an episode (its model caps every string at 100,000 characters, the pattern at 200)."""

EPISODE_KINDS = [
    "message",
    "tool_result",
    "event",
    "file",
    "ticket",
    "user_confirmation",
    "inference",
]

BODIES = [
    "TenantCreate",
    "AttributeDeclaration",
    "MigrationRequest",
    "EpisodeBody",
    "EpisodeBatch",
    "CandidatesBody",
    "ExpireBody",
    "RetractBody",
    "ResolveBody",
    "SearchRequest",
    "ContextRequest",
]


DECISION = "5f0c1e6a-3b0e-4c55-9d53-8d1c2b7f4a10"
FACT_EXPECTED = {
    "decision_id": DECISION,
    "memory": {"type": "semantic", "subject": "ada", "attribute": "city"},
}
THREAD = {"type": "working", "thread": "t-1"}
THREAD_EXPECTED = {"decision_id": DECISION, "memory": THREAD}


@pytest.fixture(scope="module")
def schemas(http: TestClient[Litestar]) -> dict[str, Any]:
    """The components of the document the running app serves."""
    response = http.get("/schema/openapi.json")
    assert response.status_code == 200, response.text
    components: dict[str, Any] = response.json()["components"]["schemas"]
    return components


def _parameters(http: TestClient[Litestar], method: str, path: str) -> dict[str, Any]:
    document = http.get("/schema/openapi.json").json()
    return {
        parameter["name"]: parameter for parameter in document["paths"][path][method]["parameters"]
    }


def _refused(response: Any, field: str) -> None:
    assert response.status_code == 422, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert (problem["code"], problem["field"]) == ("invalid", field), problem


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/v1/evidence/search", {"query": "passport", "k": True}, "k"),
        ("/v1/context", {"question": "When?", "evidence_k": False}, "evidence_k"),
        ("/v1/evidence/search", {"query": "passport", "k": "5"}, "k"),
        (
            "/v1/health/classify",
            {"expectations": [{**FACT_EXPECTED, "freshness_budget_s": True}]},
            "expectations.0.freshness_budget_s",
        ),
        (
            "/v1/health/classify",
            {"expectations": [{**FACT_EXPECTED, "freshness_budget_s": "5"}]},
            "expectations.0.freshness_budget_s",
        ),
        (
            "/v1/health/classify",
            {"expectations": [{**THREAD_EXPECTED, "memory": {**THREAD, "version": True}}]},
            "expectations.0.memory.working.version",
        ),
        (
            "/v1/health/classify",
            {"expectations": [{**THREAD_EXPECTED, "memory": {**THREAD, "version": "5"}}]},
            "expectations.0.memory.working.version",
        ),
    ],
)
def test_a_count_that_is_not_a_json_integer_is_refused_naming_it(
    http: TestClient[Litestar], api_tenant: ApiTenant, path: str, body: Any, field: str
) -> None:
    _refused(http.post(path, json=body, headers=api_tenant.headers), field)


def test_ids_in_bodies_carry_the_id_pattern(schemas: dict[str, Any]) -> None:
    episode = schemas["EpisodeBody"]["properties"]
    assert episode["subjects"] == {"type": "array", "items": ID_SCHEMA, "maxItems": 100}
    assert episode["session_id"] == {"anyOf": [ID_SCHEMA, {"type": "null"}]}
    assert episode["id"] == {"anyOf": [ID_SCHEMA, {"type": "null"}]}
    bare_id = {"type": "string", "pattern": IDENTIFIER_PATTERN}
    search = schemas["SearchRequest"]["properties"]
    assert search["session_id"] == {"anyOf": [bare_id, {"type": "null"}]}
    assert search["subject"] == {"anyOf": [bare_id, {"type": "null"}]}
    context = schemas["ContextRequest"]["properties"]
    assert context["attributes"] == {
        "anyOf": [{"type": "array", "items": bare_id, "maxItems": 50}, {"type": "null"}]
    }


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"subjects": ["mira", "not an id"]}, "subjects.1"),
        ({"session_id": "s/1"}, "session_id"),
    ],
)
def test_an_id_with_a_bad_character_in_a_body_is_refused_as_its_schema_says(
    http: TestClient[Litestar],
    api_tenant: ApiTenant,
    schemas: dict[str, Any],
    body: dict[str, Any],
    field: str,
) -> None:
    [name] = body
    assert f'"pattern": "{IDENTIFIER_PATTERN}"' in json.dumps(
        schemas["EpisodeBody"]["properties"][name]
    )
    episode = {"occurred_at": "2026-05-01T09:00:00Z", "text": "Mira moved.", **body}
    _refused(http.post("/v1/episodes", json=episode, headers=api_tenant.headers), field)


def test_the_conflict_filters_carry_the_id_pattern_and_the_server_keeps_it(
    http: TestClient[Litestar], api_tenant: ApiTenant
) -> None:
    parameters = _parameters(http, "get", "/v1/conflicts")
    for name in ("subject", "attribute"):
        assert parameters[name]["schema"]["pattern"] == IDENTIFIER_PATTERN, name
        response = http.get("/v1/conflicts", params={name: "a b"}, headers=api_tenant.headers)
        _refused(response, name)


def test_every_body_refuses_unknown_fields_in_the_document_and_on_the_wire(
    http: TestClient[Litestar], api_tenant: ApiTenant, schemas: dict[str, Any]
) -> None:
    for name in BODIES:
        assert schemas[name]["additionalProperties"] is False, name
    body = {"query": "passport", "colour": "blue"}
    _refused(http.post("/v1/evidence/search", json=body, headers=api_tenant.headers), "colour")


def test_a_retraction_names_exactly_one_fact_in_the_document_and_on_the_wire(
    http: TestClient[Litestar], api_tenant: ApiTenant, schemas: dict[str, Any]
) -> None:
    retract = schemas["RetractBody"]
    assert retract["oneOf"] == [{"required": ["fact_id"]}, {"required": ["valid_from"]}]
    assert retract["properties"] == {
        "fact_id": {"type": "string", "format": "uuid"},
        "valid_from": {"type": "string", "format": "date-time"},
    }
    path = "/v1/facts/mira/passport_deadline/retract"
    both = {"fact_id": "3f1c1a52-8a4b-4d5e-9f53-2d7a0b9e6c11", "valid_from": "2026-05-01T00:00:00Z"}
    for body, field in [
        ({}, "fact_id"),
        (both, "fact_id"),
        ({"fact_id": None}, "fact_id"),
        ({"valid_from": None}, "valid_from"),
        ({"fact_id": "not-a-uuid"}, "fact_id"),
    ]:
        _refused(http.post(path, json=body, headers=api_tenant.headers), field)
    named = http.post(path, json={"fact_id": both["fact_id"]}, headers=api_tenant.headers)
    assert named.status_code == 404, named.text


def test_source_ranks_are_keyed_by_episode_kind_in_the_document_and_on_the_wire(
    http: TestClient[Litestar], api_tenant: ApiTenant, schemas: dict[str, Any]
) -> None:
    ranks = schemas["AttributeDeclaration"]["properties"]["source_ranks"]
    assert ranks == {
        "anyOf": [
            {
                "type": "object",
                "propertyNames": {"enum": EPISODE_KINDS},
                "additionalProperties": {"type": "integer", "minimum": 0, "maximum": 100},
            },
            {"type": "null"},
        ],
        "description": "Override of the source ranks source_precedence compares, by episode"
        " kind (unnamed kinds keep their default rank)",
    }
    path, headers = "/v1/attributes/home_city", api_tenant.headers
    declaration: dict[str, Any] = {"value_type": "string", "on_equal_start": "source_precedence"}
    refused = http.put(path, json={**declaration, "source_ranks": {"rumour": 1}}, headers=headers)
    _refused(refused, "source_ranks.rumour.[key]")
    boolean = http.put(path, json={**declaration, "source_ranks": {"file": True}}, headers=headers)
    _refused(boolean, "source_ranks.file")
    kept = http.put(path, json={**declaration, "source_ranks": {"file": 7}}, headers=headers)
    assert kept.status_code == 200, kept.text
    assert kept.json()["source_ranks"] == {"file": 7}


def test_the_time_alias_and_the_clock_header_say_when_they_are_refused(
    http: TestClient[Litestar],
) -> None:
    parameters = _parameters(http, "get", "/v1/facts/{subject}/{attribute}")
    assert "a request with both is refused (422, field at)" in parameters["at"]["description"]
    clock = parameters["X-SGAM-Now"]
    assert clock["required"] is False
    assert clock["description"].startswith(
        "Honoured only when the server is configured to allow it"
        " (SGAM_ALLOW_CLOCK_HEADER=true; off by default)"
    )


def test_options_lists_every_method_of_a_path_with_several(
    http: TestClient[Litestar], api_tenant: ApiTenant
) -> None:
    response = http.options("/v1/episodes/ep-1", headers=api_tenant.headers)
    assert response.status_code == 204, response.text
    assert response.headers["allow"] == "DELETE, GET, OPTIONS"


def _body_strings_and_objects(document: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every string and free object schema a request body holds, with where it is."""
    components = document["components"]["schemas"]
    found: list[tuple[str, dict[str, Any]]] = []
    visited: set[str] = set()

    def walk(node: Any, where: str) -> None:
        if isinstance(node, list):
            for index, item in enumerate(node):
                walk(item, f"{where}[{index}]")
            return
        if not isinstance(node, dict):
            return
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            if name not in visited:
                visited.add(name)
                walk(components[name], name)
            return
        free_object = (
            node.get("type") == "object" and not {"properties", "patternProperties"} & node.keys()
        )
        free_object = free_object and node.get("additionalProperties", True) is True
        fixed = "enum" in node or "const" in node
        if (node.get("type") == "string" and not fixed) or free_object:
            found.append((where, node))
        for key, value in node.items():
            walk(value, f"{where}.{key}")

    for (method, path), operation in operations(document).items():
        if "requestBody" in operation:
            walk(operation["requestBody"], f"{method} {path}")
    return found


def test_every_string_and_free_object_of_a_body_states_the_no_nul_rule(
    http: TestClient[Litestar],
) -> None:
    found = _body_strings_and_objects(served_document(http))

    assert len(found) > 50
    strings = [(where, schema) for where, schema in found if schema["type"] == "string"]
    without_pattern = [
        where
        for where, schema in strings
        if "format" not in schema
        and ("pattern" not in schema or re.search(schema["pattern"], "a\x00b") is not None)
    ]
    assert without_pattern == []
    objects = [(where, schema) for where, schema in found if schema["type"] == "object"]
    unstated = [
        where for where, schema in objects if NO_NUL_IN_OBJECT not in schema.get("description", "")
    ]
    assert unstated == []


@pytest.mark.parametrize(
    ("field", "body"),
    [
        ("text", {"text": "a\x00b"}),
        ("session_id", {"text": "t", "session_id": "a\x00b"}),
        ("metadata", {"text": "t", "metadata": {"k": ["a\x00b"]}}),
    ],
)
def test_a_nul_in_a_body_string_is_refused_as_the_document_says(
    http: TestClient[Litestar], api_tenant: ApiTenant, field: str, body: dict[str, Any]
) -> None:
    episode = {"occurred_at": "2026-03-01T09:00:00Z", **body}

    _refused(http.post("/v1/episodes", json=episode, headers=api_tenant.headers), field)
