"""GET fact is served on the event loop: it never waits for a worker thread.

A read of a declared name for no decision is one statement sent from the event loop on the
server's asyncio pool (``FactCalls.aat``). These tests hold every thread the app may lend to
sync handlers and show that such a read still answers, that the answers are the thread path's
(a merged id, a point in time, a decision's receipt, a miss), and that the asyncio pool's
sessions are set as the thread pool's are (role, time zone and every other session setting).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from server.runtime.resources import resources_of
from tests.conftest import ApiTenant
from tests.http_helpers import READ_AT, SEEDED_AT, candidate, declare, make_tenant

pytestmark = pytest.mark.http

HANG_GUARD_S = 60.0
"""Only so that a read stuck behind the held threads fails instead of hanging the run."""


@pytest.fixture
def seeded(http: TestClient[Litestar]) -> ApiTenant:
    """A tenant whose ``mira.home_city`` was Lisbon from March 1 and is Porto from April 1
    (both recorded at ``SEEDED_AT``); ``ada.home_city`` is Oslo."""
    tenant = make_tenant(http, "loop")
    headers = {**tenant.headers, **SEEDED_AT}
    declare(http, headers, "home_city", "string")
    batch = [
        {
            "id": "ep-1",
            "occurred_at": "2026-03-01T09:00:00Z",
            "text": "Mira moved to Lisbon. Ada lives in Oslo.",
            "subjects": ["mira", "ada"],
            "updates": [
                candidate("mira", "home_city", "Lisbon"),
                candidate("ada", "home_city", "Oslo"),
            ],
        },
        {
            "id": "ep-2",
            "occurred_at": "2026-04-01T09:00:00Z",
            "text": "Mira moved to Porto.",
            "subjects": ["mira"],
            "updates": [candidate("mira", "home_city", "Porto")],
        },
    ]
    response = http.post("/v1/episodes/batch", json={"episodes": batch}, headers=headers)
    assert response.status_code == 200, response.text
    return tenant


@pytest.fixture
def threads_held(http: TestClient[Litestar]) -> Iterator[threading.Event]:
    """Every thread of the executor the app runs sync handlers on (the loop's default, one
    per pooled connection), held by sync work until the test ends: a handler that needs one
    waits until then."""
    portal = http.blocking_portal
    assert portal is not None
    threads = resources_of(http.app).settings.pool_max_size
    release = threading.Event()
    started = threading.Semaphore(0)

    def hold() -> None:
        started.release()
        release.wait()

    async def hold_a_thread() -> None:
        await asyncio.get_running_loop().run_in_executor(None, hold)

    for _ in range(threads):
        portal.start_task_soon(hold_a_thread)
    for _ in range(threads):
        started.acquire()
    try:
        yield release
    finally:
        release.set()


def _get_beside(http: TestClient[Litestar], path: str, headers: dict[str, str]) -> Any:
    """GET ``path`` from another thread; its response, or None if it did not answer while
    the threads were held (then the held threads are let go so that it can end)."""
    found: list[Any] = []
    caller = threading.Thread(target=lambda: found.append(http.get(path, headers=headers)))
    caller.start()
    caller.join(HANG_GUARD_S)
    return found[0] if found else None


def test_a_fact_read_answers_while_every_worker_thread_is_busy(
    http: TestClient[Litestar], seeded: ApiTenant, threads_held: threading.Event
) -> None:
    headers = {**seeded.headers, **READ_AT}
    response = _get_beside(http, "/v1/facts/mira/home_city", headers)
    answered_while_held = response is not None
    threads_held.set()
    assert answered_while_held, "the read waited for a worker thread"
    assert response.status_code == 200, response.text
    assert response.json()["value"] == "Porto"


def test_loop_and_thread_reads_answer_alike(http: TestClient[Litestar], seeded: ApiTenant) -> None:
    """The loop's answers (current, at a past valid time, known earlier) against the thread
    path's: a read for a decision goes through it and leaves its receipt."""
    for query in ("", "?valid_at=2026-03-15T00:00:00Z", "?known_at=2026-03-20T00:00:00Z"):
        path = f"/v1/facts/mira/home_city{query}"
        on_loop = http.get(path, headers={**seeded.headers, **READ_AT})
        decision = "00000000-0000-4000-8000-00000000a11c"
        on_thread = http.get(
            path, headers={**seeded.headers, **READ_AT, "X-SGAM-Decision": decision}
        )
        assert on_loop.status_code == on_thread.status_code == 200, on_loop.text
        assert on_loop.json() == on_thread.json()
    receipts = http.get(f"/v1/decisions/{decision}/receipts", headers=seeded.headers)
    assert receipts.status_code == 200, receipts.text
    assert len(receipts.json()["receipts"]) == 3


def test_misses_answer_as_the_thread_path_does(
    http: TestClient[Litestar], seeded: ApiTenant
) -> None:
    """A subject without the fact, an undeclared name, and another tenant's key: the same
    problem as a read for a decision (which the thread path serves) answers."""
    other = make_tenant(http, "loop-other")
    decision = {"X-SGAM-Decision": "00000000-0000-4000-8000-00000000b0b0"}
    for path, key in (
        ("/v1/facts/nobody/home_city", seeded.headers),
        ("/v1/facts/mira/shoe_size", seeded.headers),
        ("/v1/facts/mira/home_city", other.headers),
    ):
        on_loop = http.get(path, headers={**key, **READ_AT})
        on_thread = http.get(path, headers={**key, **READ_AT, **decision})
        assert on_loop.status_code == on_thread.status_code == 404, on_loop.text
        assert _problem(on_loop) == _problem(on_thread)


def _problem(response: Any) -> tuple[Any, ...]:
    body = response.json()
    return body["code"], body.get("field"), body["detail"], response.headers["content-type"]


def test_the_loop_pool_sessions_are_the_thread_pool_sessions(http: TestClient[Litestar]) -> None:
    resources = resources_of(http.app)
    pool, async_pool = resources.pool, resources.store.async_pool
    assert async_pool is not None
    # Every setting the session changed, and the Citus settings, which a server without Citus
    # keeps as placeholders that pg_settings does not list.
    query = (
        "SELECT current_user, current_setting('TimeZone'),"
        " current_setting('citus.propagate_set_commands', true),"
        " current_setting('citus.enable_fast_path_router_planner', true),"
        " (SELECT json_object_agg(name, setting) FROM pg_settings"
        "  WHERE source = 'session' AND name <> 'transaction_isolation')"
    )
    with pool.connection() as conn:
        on_thread = conn.execute(query).fetchone()

    async def read() -> Any:
        async with async_pool.connection() as conn:
            return await (await conn.execute(query)).fetchone()

    portal = http.blocking_portal
    assert portal is not None
    assert portal.call(read) == on_thread
