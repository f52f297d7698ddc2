"""Operating the server: liveness, readiness, metrics, the OpenAPI document, the clock header,
the admin switch and the one table that turns store errors into problem+json.

Counters are process-global (every app in the process shares the default registry), so the
metric tests read values before and after and compare the difference.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import httpx
import psycopg
import pytest
from litestar import Litestar
from litestar.testing import TestClient
from prometheus_client.parser import text_string_to_metric_families

from retrieval.search.embeddings import Embedder
from server.app import create_app
from server.http.problems import status_of, store_error_handler
from server.runtime.resources import resources_of
from server.settings import Settings
from store.contract.problems import ERRORS, HTTP_STATUS_CODE, ErrorCode
from store.contract.times import parse_timestamp
from store.db.database import make_pool, temporary_database
from store.db.migrate import available_migrations
from store.errors import (
    Conflict,
    DatabaseUnavailable,
    InvalidInput,
    LegalHold,
    NotFound,
    SchemaChangeRequiresMigration,
    StoreError,
)
from store.service import MemoryStore
from tests.conftest import ADMIN_TOKEN, ApiTenant, app_url
from tests.http_helpers import DEPENDENCIES, dependency_names

Client = TestClient[Litestar]
Json = dict[str, Any]
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
CLOCK = "X-SGAM-Now"
READY = {
    "status": "ready",
    "database": True,
    "migrations_pending": 0,
    "model_loaded": True,
    "detail": None,
}

_numbers = itertools.count(1)


# -- helpers --------------------------------------------------------------------------------


def ok(response: httpx.Response, status: int = 200) -> Any:
    """The JSON body of a successful response."""
    assert response.status_code == status, (response.status_code, response.text)
    return response.json()


def problem(response: httpx.Response, status: int, code: str, field: str | None = None) -> Json:
    """The problem+json body of a failed response: ``status``, ``code``, and ``field`` if given."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/problem+json")
    body: Json = response.json()
    assert body == {
        "type": f"urn:sgam:problem:{code}",
        "title": body["title"],
        "status": status,
        "detail": body["detail"],
        "code": code,
        **({"field": field if field is not None else body["field"]} if "field" in body else {}),
    }, body
    if field is not None:
        assert body.get("field") == field, body
    assert body["title"], body
    assert body["detail"], body
    return body


def episode(episode_id: str, **fields: Any) -> Json:
    """A short episode body."""
    return {"id": episode_id, "occurred_at": "2026-04-01T09:00:00Z", "text": "A note.", **fields}


def candidate(subject: str, attribute: str, value: str | None, **fields: Any) -> Json:
    """A MemoryUpdate for ``subject.attribute``."""
    return {
        "evidence": "",
        "subject": subject,
        "attribute": attribute,
        "change": "update",
        "value": value,
        "valid_from": "2026-04-01T09:00:00Z",
        **fields,
    }


def declare(http: Client, headers: dict[str, str], attribute: str, value_type: str) -> None:
    """Declare an attribute (reject on equal starts)."""
    body = {"value_type": value_type, "description": f"the {attribute}"}
    ok(http.put(f"/v1/attributes/{attribute}", json=body, headers=headers))


def scrape(http: Client) -> Samples:
    """Every sample /metrics serves, by name and labels (Prometheus text, parsed)."""
    response = http.get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain"), response.headers
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    """One sample's value; a series not yet created counts as 0."""
    return samples.get((name, frozenset(labels.items())), 0.0)


def requests_total(samples: Samples, path: str, status_code: int) -> float:
    """``sgam_http_requests_total`` of one route template and status."""
    return value(
        samples,
        "sgam_http_requests_total",
        app_name="sgam",
        method="GET",
        path=path,
        status_code=str(status_code),
    )


@contextmanager
def swapped(app: Litestar, **changes: Any) -> Iterator[None]:
    """Run with some of the app's resources replaced; put the real ones back after."""
    real = resources_of(app)
    app.state.resources = replace(real, **changes)
    try:
        yield
    finally:
        app.state.resources = real


@pytest.fixture(scope="module")
def defaults(conninfo: str, embedder: Embedder) -> Iterator[Client]:
    """An app with the default settings (clock header off, no admin token) on the same database.

    It runs beside the module's ``http`` app, as two workers of one process would.
    """
    settings = Settings(
        database_url=conninfo,
        app_database_url=app_url(conninfo),
        allow_clock_header=False,
        admin_token=None,
    )
    app = create_app(settings, embedder=embedder)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


# -- liveness and readiness -----------------------------------------------------------------


def test_healthz_says_the_process_is_up(http: Client) -> None:
    assert ok(http.get("/healthz")) == {"status": "ok"}


def test_readyz_is_ready_with_the_database_migrated_and_the_model_loaded(http: Client) -> None:
    assert ok(http.get("/readyz")) == READY


def test_readyz_is_503_while_the_model_is_not_loaded(http: Client) -> None:
    with swapped(http.app, embedder=Embedder()):
        response = http.get("/readyz")
    assert response.status_code == 503, response.text
    assert response.json() == {**READY, "status": "not_ready", "model_loaded": False}
    assert ok(http.get("/readyz")) == READY


def test_readyz_is_503_while_the_database_does_not_answer(http: Client, conninfo: str) -> None:
    closed = make_pool(conninfo)  # never opened: every checkout fails
    with swapped(http.app, pool=closed):
        response = http.get("/readyz")
    assert response.status_code == 503, response.text
    assert response.json() == {
        "status": "not_ready",
        "database": False,
        "migrations_pending": None,
        "model_loaded": True,
        "detail": "database: PoolClosed",
    }


def _readiness_without_migrating(conninfo: str, embedder: Embedder) -> Json:
    """Start an app that may not migrate on ``conninfo``; its /healthz and /readyz."""
    settings = Settings(
        database_url=conninfo, app_database_url=app_url(conninfo), migrate_on_start=False
    )
    app = create_app(settings, embedder=embedder)
    with TestClient(app, raise_server_exceptions=False) as client:
        assert ok(client.get("/healthz")) == {"status": "ok"}
        response = client.get("/readyz")
    assert response.status_code == 503, response.text
    body: Json = response.json()
    return body


def test_readyz_is_503_while_migrations_are_pending(
    server_conninfo: str, embedder: Embedder
) -> None:
    # The extension is there (as after an upgrade that brings new migrations), the schema not.
    with temporary_database(server_conninfo) as blank:
        with psycopg.connect(blank, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION vector")
        body = _readiness_without_migrating(blank, embedder)
    assert body == {
        **READY,
        "status": "not_ready",
        "migrations_pending": len(available_migrations()),
    }


def test_a_server_that_may_not_migrate_starts_on_a_blank_database_and_is_not_ready(
    server_conninfo: str, embedder: Embedder
) -> None:
    # Nothing at all in the database, not even the vector extension: the server must still
    # start, so that /readyz can say what is missing.
    with temporary_database(server_conninfo) as blank:
        body = _readiness_without_migrating(blank, embedder)
    assert body == {
        **READY,
        "status": "not_ready",
        "migrations_pending": len(available_migrations()),
    }


# -- metrics --------------------------------------------------------------------------------


def test_metrics_label_requests_by_route_template_never_by_subject(
    http: Client, api_tenant: ApiTenant
) -> None:
    path = "/v1/facts/{subject}/{attribute}"
    declare(http, api_tenant.headers, "home_city", "string")
    ok(
        http.post(
            "/v1/episodes",
            json=episode("m1", updates=[candidate("zz-secret-subject-1", "home_city", "Oslo")]),
            headers=api_tenant.headers,
        )
    )
    before = scrape(http)
    ok(http.get("/v1/facts/zz-secret-subject-1/home_city", headers=api_tenant.headers))
    for number in (2, 3):
        missing = http.get(
            f"/v1/facts/zz-secret-subject-{number}/home_city", headers=api_tenant.headers
        )
        problem(missing, 404, "not_found")
    problem(http.get("/v1/facts/zz-secret-subject-4/home_city"), 401, "unauthorized")
    problem(http.get("/v1/no-such-route/zz-secret-subject-5"), 404, "not_found")
    text = http.get("/metrics").text
    after = scrape(http)
    assert requests_total(after, path, 200) - requests_total(before, path, 200) == 1
    assert requests_total(after, path, 404) - requests_total(before, path, 404) == 2
    assert requests_total(after, path, 401) - requests_total(before, path, 401) == 1
    assert f'path="{path}"' in text
    assert "zz-secret-subject" not in text  # neither a matched nor an unmatched raw path


def test_metrics_publish_the_connection_pool(http: Client) -> None:
    samples = scrape(http)
    size = value(samples, "sgam_pool_size")
    available = value(samples, "sgam_pool_available")
    assert size >= 1
    assert 0 <= available <= size
    assert value(samples, "sgam_pool_waiting") == 0
    assert value(samples, "sgam_pool_max") >= 8  # at least this module's app's pool


def test_writes_conflicts_and_context_move_their_counters(
    http: Client, api_tenant: ApiTenant
) -> None:
    headers = api_tenant.headers
    declare(http, headers, "passport_deadline", "date")
    declare(http, headers, "home_city", "string")
    before = scrape(http)
    first = ok(
        http.post(
            "/v1/episodes",
            json=episode(
                "c1",
                text="Mira lives in Oslo; her deadline is 2026-07-15.",
                updates=[
                    candidate("mira", "passport_deadline", "2026-07-15"),
                    candidate("mira", "home_city", "Oslo"),
                    candidate("mira", "shoe_size", "38"),
                    candidate("mira", "home_city", None, change="no_change"),
                ],
            ),
            headers=headers,
        )
    )
    assert [r["status"] for r in first["results"]] == ["written", "written", "invalid", "ignored"]
    second = ok(
        http.post(
            "/v1/episodes/c1/updates",
            json={
                "candidates": [
                    candidate("mira", "passport_deadline", "2026-08-01"),
                    candidate("mira", "home_city", "Oslo", valid_from="2026-04-02T00:00:00Z"),
                ]
            },
            headers=headers,
        )
    )
    assert [r["status"] for r in second["results"]] == ["conflict", "unchanged"]
    question = {"question": "When is Mira's passport deadline?", "subject": "mira"}
    fits = ok(http.post("/v1/context", json=question, headers=headers))
    tight = ok(http.post("/v1/context", json={**question, "token_budget": 16}, headers=headers))
    assert (fits["over_budget"], tight["over_budget"]) == (False, True)
    ok(http.post("/v1/evidence/search", json={"query": "passport", "k": 2}, headers=headers))
    after = scrape(http)

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("sgam_facts_written_total") == 2
    assert delta("sgam_conflicts_total") == 1
    assert {
        status: delta("sgam_candidates_total", status=status)
        for status in ("written", "unchanged", "ignored", "conflict", "invalid")
    } == {"written": 2, "unchanged": 1, "ignored": 1, "conflict": 1, "invalid": 1}
    assert delta("sgam_context_assemblies_total", over_budget="false") == 1
    assert delta("sgam_context_assemblies_total", over_budget="true") == 1
    assert delta("sgam_evidence_searches_total") == 1
    # The episode's text, each context's question (and routing text), the search's query: at
    # least one text a call, four calls each waiting for its own run of the encoder.
    assert delta("sgam_encoder_texts_total") >= delta("sgam_encoder_batches_total") >= 4
    assert delta("sgam_encoder_seconds_total") > 0
    assert delta("sgam_encoder_refused_total") == 0
    assert value(after, "sgam_encoder_waiting") == 0


def test_two_apps_in_one_process_publish_their_pools_together(
    http: Client, defaults: Client
) -> None:
    # Both apps' pools are open: one collector adds them up, whichever app is scraped.
    pools = [resources_of(client.app).pool for client in (http, defaults)]
    for client in (http, defaults):
        samples = scrape(client)
        assert value(samples, "sgam_pool_max") == sum(pool.max_size for pool in pools)
        assert value(samples, "sgam_pool_size") >= len(pools)


# -- the OpenAPI document -------------------------------------------------------------------


def test_the_openapi_document_is_served(http: Client) -> None:
    response = http.get("/schema/openapi.json")
    assert response.status_code == 200, response.text
    document = response.json()
    assert document["info"]["title"] == "SGAM"
    assert document["openapi"].startswith("3.")
    assert {
        "/v1/admin/tenants",
        "/v1/attributes",
        "/v1/episodes",
        "/v1/episodes/batch",
        "/v1/memory-update-schema",
        "/v1/subjects",
        "/v1/conflicts",
        "/v1/evidence/search",
        "/v1/context",
        "/healthz",
        "/readyz",
    } <= document["paths"].keys()


def test_the_openapi_document_lists_no_dependency_as_a_parameter(http: Client) -> None:
    assert dependency_names(http.app) == DEPENDENCIES
    document = http.get("/schema/openapi.json").json()
    documented = {
        (parameter["in"], parameter["name"])
        for item in document["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict)
        for parameter in operation.get("parameters", [])
    }
    assert not {name for _, name in documented} & DEPENDENCIES
    time_parameters = {
        (method, path): sorted(p["name"] for p in operation["parameters"] if p["in"] == "query")
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if any(p["name"] == "valid_at" for p in operation.get("parameters", []))
    }
    assert time_parameters == {
        ("get", "/v1/facts/{subject}/{attribute}"): ["at", "known_at", "valid_at"],
        ("get", "/v1/subjects/{subject}/profile"): ["at", "known_at", "valid_at"],
    }


# -- the clock header -----------------------------------------------------------------------


def test_the_clock_header_sets_system_time_when_allowed(
    http: Client, api_tenant: ApiTenant
) -> None:
    headers = {**api_tenant.headers, CLOCK: "2026-05-05T10:00:00+02:00"}
    declare(http, headers, "home_city", "string")
    recorded = ok(
        http.post(
            "/v1/episodes",
            json=episode("clocked", updates=[candidate("ada", "home_city", "Oslo")]),
            headers=headers,
        )
    )
    assert recorded["recorded_at"] == "2026-05-05T08:00:00Z"
    [result] = recorded["results"]
    assert result["fact"]["recorded_at"] == "2026-05-05T08:00:00Z"
    attributes = ok(http.get("/v1/attributes", headers=api_tenant.headers))["attributes"]
    assert [(a["created_at"], a["updated_at"]) for a in attributes] == [
        ("2026-05-05T08:00:00Z", "2026-05-05T08:00:00Z")
    ]
    # Reads take it as now: before the value was recorded, nothing was known.
    earlier = {**api_tenant.headers, CLOCK: "2026-05-05T07:59:59Z"}
    problem(http.get("/v1/facts/ada/home_city", headers=earlier), 404, "not_found")


@pytest.mark.parametrize("header", ["2026-05-05T10:00:00", "tomorrow", ""])
def test_a_clock_header_without_an_offset_is_invalid_and_writes_nothing(
    http: Client, api_tenant: ApiTenant, header: str
) -> None:
    headers = {**api_tenant.headers, CLOCK: header}
    refused = http.post("/v1/episodes", json=episode("naive"), headers=headers)
    problem(refused, 422, "invalid", field=CLOCK)
    problem(http.get("/v1/episodes/naive", headers=api_tenant.headers), 404, "not_found")


def test_the_clock_header_is_forbidden_by_default_and_writes_nothing(
    http: Client, defaults: Client, api_tenant: ApiTenant
) -> None:
    headers = {**api_tenant.headers, CLOCK: "2026-05-05T10:00:00Z"}
    for response in (
        defaults.post("/v1/episodes", json=episode("forbidden"), headers=headers),
        defaults.put(
            "/v1/attributes/home_city",
            json={"value_type": "string", "description": "City"},
            headers=headers,
        ),
        defaults.get("/v1/attributes", headers=headers),
    ):
        problem(response, 403, "forbidden", field=CLOCK)
    problem(defaults.get("/v1/episodes/forbidden", headers=api_tenant.headers), 404, "not_found")
    assert ok(defaults.get("/v1/attributes", headers=api_tenant.headers)) == {"attributes": []}
    # Without the header the wall clock stamps the write.
    start = datetime.now(UTC)
    recorded = ok(defaults.post("/v1/episodes", json=episode("walled"), headers=api_tenant.headers))
    end = datetime.now(UTC)
    assert start <= parse_timestamp(recorded["recorded_at"]) <= end, (start, recorded, end)


# -- the admin switch -----------------------------------------------------------------------


def test_the_admin_api_is_forbidden_without_an_admin_token(
    http: Client, defaults: Client, api_tenant: ApiTenant
) -> None:
    name = f"never-made-{next(_numbers)}"
    for headers in (ADMIN, {}):
        problem(
            defaults.post("/v1/admin/tenants", json={"tenant_id": name}, headers=headers),
            403,
            "forbidden",
            field="Authorization",
        )
        problem(
            defaults.post(f"/v1/admin/tenants/{api_tenant.name}/keys", headers=headers),
            403,
            "forbidden",
            field="Authorization",
        )
        problem(
            defaults.delete(f"/v1/admin/keys/{api_tenant.key_id}", headers=headers),
            403,
            "forbidden",
            field="Authorization",
        )
    # Nothing happened: the key still works and the tenant can still be made.
    assert ok(defaults.get("/v1/attributes", headers=api_tenant.headers)) == {"attributes": []}
    assert ok(http.post("/v1/admin/tenants", json={"tenant_id": name}, headers=ADMIN), 201) == {
        "tenant_id": name,
        "on_unverified_evidence": "accept",
    }


# -- the problem table ----------------------------------------------------------------------


STORE_ERRORS: tuple[type[StoreError], ...] = (
    InvalidInput,
    NotFound,
    Conflict,
    LegalHold,
    SchemaChangeRequiresMigration,
    DatabaseUnavailable,
)
"""The store's errors that reach a client with their own code."""


def test_the_problem_tables_are_pinned() -> None:
    assert {code.value: kind.status for code, kind in ERRORS.items()} == {
        "invalid": 422,
        "not_found": 404,
        "conflict": 409,
        "legal_hold": 409,
        "schema_change_requires_migration": 409,
        "unauthorized": 401,
        "forbidden": 403,
        "too_large": 413,
        "unsupported_media_type": 415,
        "unavailable": 503,
        "internal": 500,
    }
    assert HTTP_STATUS_CODE == {
        400: "invalid",
        401: "unauthorized",
        403: "forbidden",
        404: "not_found",
        405: "invalid",
        409: "conflict",
        413: "too_large",
        415: "unsupported_media_type",
        422: "invalid",
        500: "internal",
        503: "unavailable",
    }
    assert {kind: status_of(kind("x")) for kind in STORE_ERRORS} == {
        InvalidInput: 422,
        NotFound: 404,
        Conflict: 409,
        LegalHold: 409,
        SchemaChangeRequiresMigration: 409,
        DatabaseUnavailable: 503,
    }


def test_store_errors_reach_the_client_as_problems_with_their_status_and_code(
    http: Client, api_tenant: ApiTenant
) -> None:
    headers = api_tenant.headers
    # invalid: the store cannot read the instant
    invalid = http.get("/v1/facts/ada/home_city", params={"valid_at": "yesterday"}, headers=headers)
    problem(invalid, ERRORS[ErrorCode(InvalidInput.code)].status, "invalid", field="valid_at")
    # not_found: nothing known
    missing = http.get("/v1/episodes/nowhere", headers=headers)
    problem(missing, ERRORS[ErrorCode(NotFound.code)].status, "not_found", field="episode_id")
    # conflict: an episode id reused with other content
    ok(http.post("/v1/episodes", json=episode("once", text="First."), headers=headers))
    reused = http.post("/v1/episodes", json=episode("once", text="Second."), headers=headers)
    problem(reused, ERRORS[ErrorCode(Conflict.code)].status, "conflict", field="id")


def test_an_unreachable_database_is_503_unavailable(
    http: Client, api_tenant: ApiTenant, conninfo: str, embedder: Embedder
) -> None:
    closed = make_pool(conninfo)  # never opened: every checkout fails
    with swapped(http.app, store=MemoryStore(closed, embedder=embedder)):
        down = http.get("/v1/attributes", headers=api_tenant.headers)
    problem(down, ERRORS[ErrorCode(DatabaseUnavailable.code)].status, "unavailable")


def test_the_store_error_handler_maps_each_kind_and_hides_unmapped_ones(http: Client) -> None:
    request: Any = None  # the handler reads nothing from the request
    for kind in STORE_ERRORS:
        status = ERRORS[ErrorCode(kind.code)].status
        response = store_error_handler(request, kind("what went wrong", field="somewhere"))
        assert (response.status_code, response.media_type) == (status, "application/problem+json")
        assert response.content == {
            "type": f"urn:sgam:problem:{kind.code}",
            "title": response.content["title"],
            "status": status,
            "detail": "what went wrong",
            "code": kind.code,
            "field": "somewhere",
        }
    unmapped = store_error_handler(request, StoreError("secret internals"))
    assert unmapped.status_code == 500
    assert unmapped.content["code"] == "internal"
    assert "secret" not in unmapped.content["detail"]


def test_handlers_run_on_the_servers_threads_one_per_pooled_connection(
    http: Client, api_tenant: ApiTenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The loop's default executor is sized to the pool (min(32, CPUs + 4) threads otherwise,
    # 6 on 2 cores), so requests do not queue for a thread while connections sit idle.
    store = resources_of(http.app).store
    seen: list[str] = []
    real = store.subjects.list

    def noting(*args: Any, **kwargs: Any) -> Any:
        seen.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(store.subjects, "list", noting)
    assert http.get("/v1/subjects", headers=api_tenant.headers).status_code == 200
    assert len(seen) == 1
    assert seen[0].startswith("sgam-handler")
