"""Working memory over HTTP: a thread's checkpoints are versioned, compared-and-set, walled by
tenant, refused whole when invalid, and read back by a fresh server (continuity)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from threading import Barrier
from typing import Any

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from retrieval.search.embeddings import Embedder
from server.app import create_app
from server.client import Conflict, NotFound, SGAMClient
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


def _checkpoint(version: int, goal: str | None, dependency: str | None, state: Json) -> Json:
    return {
        "thread_id": "t-1",
        "version": version,
        "active_goal_id": goal,
        "pending_dependency": dependency,
        "state": state,
        "written_at": WRITTEN_AT,
    }


def test_each_write_is_the_next_version_and_any_version_reads_back(http: Client) -> None:
    key = make_tenant(http, "wm").headers
    first = _written(
        http,
        key,
        "t-1",
        {"active_goal_id": "renew-passport", "pending_dependency": "ep-7", "state": {"step": 1}},
    )
    assert first == _checkpoint(1, "renew-passport", "ep-7", {"step": 1})
    second = _written(
        http, key, "t-1", {"active_goal_id": "book-flight", "state": {"step": 2, "seats": [1, 2]}}
    )
    assert second == _checkpoint(2, "book-flight", None, {"step": 2, "seats": [1, 2]})
    assert _read(http, key, "t-1") == second
    assert _read(http, key, "t-1", version=1) == first
    assert _read(http, key, "t-1", version=2) == second


def test_a_thread_without_checkpoints_or_that_version_is_not_found(http: Client) -> None:
    key = make_tenant(http, "wm").headers
    assert_problem(http.get(_path("t-none"), headers=key), 404, "not_found", field="thread_id")
    _written(http, key, "t-1", {})
    missing = http.get(_path("t-1"), headers=key, params={"version": 2})
    assert_problem(missing, 404, "not_found", field="version")


def test_compare_and_set_writes_over_the_expected_version_only(http: Client) -> None:
    key = make_tenant(http, "wm").headers
    first = _written(http, key, "t-1", {"active_goal_id": "g1", "expected_version": 0})
    second = _written(http, key, "t-1", {"active_goal_id": "g2", "expected_version": 1})
    assert (first["version"], second["version"]) == (1, 2)
    for stale in (0, 1, 3):
        refused = _write(http, key, "t-1", {"active_goal_id": "g-stale", "expected_version": stale})
        assert_problem(refused, 409, "conflict", field="expected_version")
    assert _read(http, key, "t-1") == _checkpoint(2, "g2", None, {})


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


def test_another_tenant_cannot_see_or_extend_the_thread(http: Client) -> None:
    owner, other = make_tenant(http, "wm").headers, make_tenant(http, "wm").headers
    mine = _written(http, owner, "t-1", {"active_goal_id": "private-goal"})
    assert_problem(http.get(_path("t-1"), headers=other), 404, "not_found", field="thread_id")
    found = http.get(_path("t-1"), headers=other, params={"version": 1})
    assert_problem(found, 404, "not_found")
    # The other tenant's thread of the same id is its own, starting at version 1.
    refused = _write(http, other, "t-1", {"expected_version": 1})
    assert_problem(refused, 409, "conflict", field="expected_version")
    assert _written(http, other, "t-1", {"expected_version": 0})["version"] == 1
    assert _read(http, owner, "t-1") == mine


@pytest.mark.parametrize(
    ("thread_id", "body", "field"),
    [
        ("bad id!", {}, "thread_id"),
        ("t-1", {"state": [1, 2]}, "state"),
        ("t-1", {"state": "text"}, "state"),
        ("t-1", {"goal": "g1"}, "goal"),
        ("t-1", {"active_goal_id": "not an id"}, "active_goal_id"),
        ("t-1", {"pending_dependency": ""}, "pending_dependency"),
        ("t-1", {"expected_version": -1}, "expected_version"),
        ("t-1", {"expected_version": "1"}, "expected_version"),
    ],
    ids=repr,
)
def test_an_invalid_write_is_refused_whole_naming_its_field(
    http: Client, thread_id: str, body: Json, field: str
) -> None:
    key = make_tenant(http, "wm").headers
    refused = _write(http, key, thread_id, body)
    assert_problem(refused, 422, "invalid", field=field)
    assert_problem(http.get(_path("t-1"), headers=key), 404, "not_found")


def test_state_nested_too_deep_or_too_large_is_refused(http: Client) -> None:
    key = make_tenant(http, "wm").headers
    deep: Json = {}
    inner = deep
    for _ in range(40):
        inner["next"] = {}
        inner = inner["next"]
    for state in (deep, {"text": "x" * (64 * 1024)}):
        refused = _write(http, key, "t-1", {"state": state})
        assert_problem(refused, 422, "invalid", field="state")
    assert_problem(http.get(_path("t-1"), headers=key), 404, "not_found")


def test_a_bad_version_to_read_is_refused_naming_it(http: Client) -> None:
    key = make_tenant(http, "wm").headers
    for version in ("0", "x", "-1"):
        refused = http.get(_path("t-1"), headers=key, params={"version": version})
        assert_problem(refused, 422, "invalid", field="version")
    assert_problem(http.get(_path("bad id!"), headers=key), 422, "invalid", field="thread_id")


def test_the_client_writes_and_reads_checkpoints(http: Client) -> None:
    api_key = make_tenant(http, "wm").headers["Authorization"].removeprefix("Bearer ")
    sgam = SGAMClient(str(http.base_url), api_key, http=http)
    with pytest.raises(NotFound):
        sgam.checkpoint("t-1")
    first = sgam.write_checkpoint("t-1", active_goal_id="g1", expected_version=0)
    second = sgam.write_checkpoint("t-1", pending_dependency="ep-1", state={"step": 2})
    with pytest.raises(Conflict) as refused:
        sgam.write_checkpoint("t-1", expected_version=1)
    assert refused.value.field == "expected_version"
    assert (first.version, second.version) == (1, 2)
    assert sgam.checkpoint("t-1") == second
    assert sgam.checkpoint("t-1", version=1) == first


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
