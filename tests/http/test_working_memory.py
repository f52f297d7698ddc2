"""Working memory over HTTP: concurrent writers, refusals as problems, and a checkpoint read
back by a fresh server (continuity). Versions, compare-and-set, tenants and invalid writes are
scenarios of tests/conformance/test_working_memory.py, run over HTTP too."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from threading import Barrier
from typing import Any

import httpx
from litestar import Litestar
from litestar.testing import TestClient

from retrieval.search.embeddings import Embedder
from server.app import create_app
from server.settings import Settings
from tests.http_helpers import assert_problem, make_tenant

Client = TestClient[Litestar]
Json = dict[str, Any]

WRITTEN_AT = "2026-06-01T10:00:00Z"
WRITERS = 8


def _path(thread_id: str) -> str:
    return f"/v1/threads/{thread_id}/checkpoint"


def _write(http: Client, headers: dict[str, str], thread_id: str, body: Json) -> httpx.Response:
    return http.put(_path(thread_id), json=body, headers={**headers, "X-SGAM-Now": WRITTEN_AT})


def _written(http: Client, headers: dict[str, str], thread_id: str, body: Json) -> Json:
    response = _write(http, headers, thread_id, body)
    assert response.status_code == 200, response.text
    written: Json = response.json()
    return written


def _read(http: Client, headers: dict[str, str], thread_id: str, **query: Any) -> Json:
    response = http.get(_path(thread_id), headers=headers, params=query)
    assert response.status_code == 200, response.text
    found: Json = response.json()
    return found


def test_concurrent_writers_expecting_the_same_version_one_wins(http: Client) -> None:
    key = make_tenant(http, "wm").headers
    _written(http, key, "t-1", {"active_goal_id": "start"})
    barrier = Barrier(WRITERS)

    def write(n: int) -> httpx.Response:
        barrier.wait()
        body = {"active_goal_id": f"goal-{n}", "expected_version": 1}
        return _write(http, key, "t-1", body)

    with ThreadPoolExecutor(WRITERS) as executor:
        responses = list(executor.map(write, range(WRITERS)))
    statuses = sorted(response.status_code for response in responses)
    assert statuses == [200] + [409] * (WRITERS - 1), [r.text for r in responses]
    [winner] = [r.json() for r in responses if r.status_code == 200]
    for response in responses:
        if response.status_code == 409:
            assert_problem(response, 409, "conflict", field="expected_version")
    assert winner["version"] == 2
    assert _read(http, key, "t-1") == winner


def test_writers_without_an_expected_version_each_write_their_own_version(http: Client) -> None:
    key = make_tenant(http, "wm").headers
    barrier = Barrier(WRITERS)

    def write(n: int) -> httpx.Response:
        barrier.wait()
        return _write(http, key, "t-1", {"state": {"writer": n}})

    with ThreadPoolExecutor(WRITERS) as executor:
        responses = list(executor.map(write, range(WRITERS)))
    assert [r.status_code for r in responses] == [200] * WRITERS, [r.text for r in responses]
    assert sorted(r.json()["version"] for r in responses) == list(range(1, WRITERS + 1))


def test_refusals_are_problems_and_a_version_that_is_no_number_is_refused(http: Client) -> None:
    key = make_tenant(http, "wm").headers
    assert_problem(http.get(_path("t-1"), headers=key), 404, "not_found", field="thread_id")
    assert_problem(_write(http, key, "t-1", {"state": [1]}), 422, "invalid", field="state")
    _written(http, key, "t-1", {})
    stale = _write(http, key, "t-1", {"expected_version": 0})
    assert_problem(stale, 409, "conflict", field="expected_version")
    for version in ("x", "1.5"):
        refused = http.get(_path("t-1"), headers=key, params={"version": version})
        assert_problem(refused, 422, "invalid", field="version")


def test_a_checkpoint_reads_back_from_a_fresh_server_on_the_same_database(
    api_settings: Settings, embedder: Embedder
) -> None:
    """Continuity: the goal and dependency written before a restart are what it reads after."""
    with TestClient(create_app(api_settings, embedder=embedder)) as before:
        key = make_tenant(before, "wm").headers
        written = _written(
            before,
            key,
            "t-1",
            {"active_goal_id": "g1", "pending_dependency": "ep-9", "state": {"step": 3}},
        )
    with TestClient(create_app(api_settings, embedder=embedder)) as after:
        assert _read(after, key, "t-1") == written
        assert _written(after, key, "t-1", {"expected_version": 1})["version"] == 2
