"""Extraction over HTTP: ``extract`` on an episode body, the episode's ``extraction`` state,
the dead-letter retry route, and the worker running inside the server process.

The app is configured with a stand-in OpenAI-compatible endpoint on localhost whose script
each test sets.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from httpx import Response
from litestar import Litestar
from litestar.testing import TestClient

from retrieval.search.embeddings import Embedder
from server.app import create_app
from server.extraction.standin import Reply, StandIn, stand_in, updates
from server.settings import Settings
from tests.conftest import ADMIN_TOKEN, ApiTenant, app_url

TEXT = "Mira said she moved to Tromsø last week."
CITY = {
    "evidence": "moved to Tromsø",
    "subject": "mira",
    "attribute": "city",
    "change": "new",
    "value": "Tromsø",
}


@pytest.fixture(scope="module")
def endpoint() -> Iterator[StandIn]:
    """The stand-in endpoint (its script set per test)."""
    with stand_in(lambda _: updates(CITY)) as running:
        yield running


@pytest.fixture(scope="module")
def served(conninfo: str, embedder: Embedder, endpoint: StandIn) -> Iterator[TestClient[Litestar]]:
    """The app with an extractor configured and its worker thread polling quickly."""
    settings = Settings(
        database_url=conninfo,
        app_database_url=app_url(conninfo),
        admin_token=ADMIN_TOKEN,
        pool_max_size=6,
        extractor_url=endpoint.base_url,
        extractor_model="stand-in",
        extractor_timeout_s=5,
        extractor_max_attempts=2,
        extractor_backoff_s=0.3,
        extractor_poll_s=0.05,
    )
    with TestClient(create_app(settings, embedder=embedder), raise_server_exceptions=False) as c:
        yield c


@pytest.fixture
def client(served: TestClient[Litestar], endpoint: StandIn) -> TestClient[Litestar]:
    """The served app, its endpoint answering with the city candidate unless a test says."""
    endpoint.script = lambda _: updates(CITY)
    return served


@pytest.fixture
def tenant(client: TestClient[Litestar]) -> ApiTenant:
    """A tenant of the served app with ``city`` declared."""
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    name = f"x-tenant-{time.monotonic_ns()}"
    assert client.post("/v1/admin/tenants", json={"tenant_id": name}, headers=admin).is_success
    key = client.post(f"/v1/admin/tenants/{name}/keys", headers=admin).json()
    headers = {"Authorization": f"Bearer {key['api_key']}"}
    declared = client.put(
        "/v1/attributes/city",
        json={"value_type": "string", "description": "the city a person lives in"},
        headers=headers,
    )
    assert declared.is_success, declared.text
    return ApiTenant(name, key["key_id"], headers)


def _ok(response: Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def _episode(episode_id: str, extract: str, text: str = TEXT) -> dict[str, Any]:
    return {
        "id": episode_id,
        "occurred_at": "2026-05-28T09:00:00Z",
        "text": text,
        "subjects": ["mira"],
        "extract": extract,
    }


def _until(read: Callable[[], Any], done: Callable[[Any], bool], timeout_s: float = 10) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        value = read()
        if done(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def test_without_an_extractor_extract_is_refused_naming_it(
    http: TestClient[Litestar], api_tenant: ApiTenant
) -> None:
    for mode in ("now", "background"):
        refused = http.post("/v1/episodes", json=_episode("e1", mode), headers=api_tenant.headers)
        assert refused.status_code == 409, refused.text
        assert (refused.json()["code"], refused.json()["field"]) == ("conflict", "extract")
    batch = {"episodes": [_episode("e1", "none"), _episode("e2", "background")]}
    refused = http.post("/v1/episodes/batch", json=batch, headers=api_tenant.headers)
    assert refused.status_code == 409
    assert refused.json()["field"] == "episodes.1.extract"
    assert http.get("/v1/episodes/e1", headers=api_tenant.headers).status_code == 404  # nothing
    recorded = _ok(http.post("/v1/episodes", json=_episode("e1", "none"),
                             headers=api_tenant.headers))  # fmt: skip
    assert (recorded["extraction"], recorded["extracted"]) == (None, [])
    assert _ok(http.get("/v1/episodes/e1", headers=api_tenant.headers))["extraction"] is None


def test_extract_now_answers_with_the_results_and_the_next_read_sees_the_fact(
    client: TestClient[Litestar], tenant: ApiTenant
) -> None:
    recorded = _ok(client.post("/v1/episodes", json=_episode("e1", "now"),
                               headers=tenant.headers))  # fmt: skip
    [result] = recorded["extracted"]
    assert (result["status"], result["fact"]["value"]) == ("written", "Tromsø")
    assert recorded["extraction"]["status"] == "done"
    assert recorded["extraction"]["candidates"] == [{"index": 0, "status": "written",
                                                     "reason": None}]  # fmt: skip
    question = {"question": "Where does Mira live?", "subject": "mira"}
    context = _ok(client.post("/v1/context", json=question, headers=tenant.headers))
    assert "Tromsø" in context["block"]
    assert "e1" in context["block"]  # cited
    fact = _ok(client.get("/v1/facts/mira/city", headers=tenant.headers))
    assert fact["source_episode_id"] == "e1"


def test_extract_now_answers_with_the_subjects_its_candidates_added(
    client: TestClient[Litestar], endpoint: StandIn, tenant: ApiTenant
) -> None:
    # The text is about Ola too; the episode names only Mira.
    endpoint.script = lambda _: updates(CITY, {**CITY, "subject": "ola", "value": "Bodø"})
    text = "Mira said she moved to Tromsø last week; Ola moved to Bodø."
    body = _episode("e-ola", "now", text)
    recorded = _ok(client.post("/v1/episodes", json=body, headers=tenant.headers))
    assert [result["status"] for result in recorded["extracted"]] == ["written", "written"]
    read = _ok(client.get("/v1/episodes/e-ola", headers=tenant.headers))
    assert recorded["subjects"] == read["subjects"] == ["mira", "ola"]


def test_background_extraction_is_done_by_the_servers_worker(
    client: TestClient[Litestar], tenant: ApiTenant
) -> None:
    recorded = _ok(client.post("/v1/episodes", json=_episode("e1", "background"),
                               headers=tenant.headers))  # fmt: skip
    assert recorded["extracted"] == []
    assert recorded["extraction"]["status"] in {"queued", "done"}
    episode = _until(
        lambda: _ok(client.get("/v1/episodes/e1", headers=tenant.headers)),
        lambda e: e["extraction"]["status"] == "done",
    )
    assert episode["extraction"]["status"] == "done"
    assert _ok(client.get("/v1/facts/mira/city", headers=tenant.headers))["value"] == "Tromsø"


def test_a_dead_extraction_shows_over_http_and_is_requeued_by_retry(
    client: TestClient[Litestar], tenant: ApiTenant, endpoint: StandIn
) -> None:
    endpoint.script = lambda _: Reply(status=500)
    _ok(client.post("/v1/episodes", json=_episode("e1", "background"), headers=tenant.headers))
    episode = _until(
        lambda: _ok(client.get("/v1/episodes/e1", headers=tenant.headers)),
        lambda e: e["extraction"]["status"] == "dead",
    )
    state = episode["extraction"]
    assert (state["status"], state["attempts"]) == ("dead", 2)
    assert state["last_error"] == "endpoint answered 500"
    endpoint.script = lambda _: updates(CITY)
    requeued = _ok(client.post("/v1/episodes/e1/extraction/retry", headers=tenant.headers))
    assert (requeued["status"], requeued["attempts"]) == ("queued", 0)
    _until(
        lambda: _ok(client.get("/v1/episodes/e1", headers=tenant.headers)),
        lambda e: e["extraction"]["status"] == "done",
    )
    again = client.post("/v1/episodes/e1/extraction/retry", headers=tenant.headers)
    assert (again.status_code, again.json()["code"]) == (409, "conflict")
    missing = client.post("/v1/episodes/nope/extraction/retry", headers=tenant.headers)
    assert (missing.status_code, missing.json()["code"]) == (404, "not_found")
    _ok(client.post("/v1/episodes", json=_episode("plain", "none"), headers=tenant.headers))
    never = client.post("/v1/episodes/plain/extraction/retry", headers=tenant.headers)
    assert never.status_code == 409


def test_a_failed_now_attempt_is_left_to_the_worker(
    client: TestClient[Litestar], tenant: ApiTenant, endpoint: StandIn
) -> None:
    answers = iter([Reply("not json")])
    endpoint.script = lambda _: next(answers, updates(CITY))
    recorded = _ok(client.post("/v1/episodes", json=_episode("e1", "now"),
                               headers=tenant.headers))  # fmt: skip
    assert recorded["extracted"] == []
    assert recorded["extraction"]["last_error"] == "malformed answer: not JSON"
    assert TEXT not in str(recorded["extraction"])
    _until(
        lambda: _ok(client.get("/v1/episodes/e1", headers=tenant.headers)),
        lambda e: e["extraction"]["status"] == "done",
    )
    assert _ok(client.get("/v1/facts/mira/city", headers=tenant.headers))["value"] == "Tromsø"


def test_another_tenant_sees_no_job(client: TestClient[Litestar], tenant: ApiTenant) -> None:
    _ok(client.post("/v1/episodes", json=_episode("e1", "now"), headers=tenant.headers))
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    other = f"{tenant.name}-other"
    client.post("/v1/admin/tenants", json={"tenant_id": other}, headers=admin)
    key = client.post(f"/v1/admin/tenants/{other}/keys", headers=admin).json()
    headers = {"Authorization": f"Bearer {key['api_key']}"}
    assert client.get("/v1/episodes/e1", headers=headers).status_code == 404
    assert client.post("/v1/episodes/e1/extraction/retry", headers=headers).status_code == 404
