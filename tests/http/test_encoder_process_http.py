"""A server whose encoder runs in its own process (``encoder = process``, what ``sgam serve``
does): exact reads are answered while that process is stopped; a context call it held when it
died answers 503 ``unavailable``, and the next one is served by a new child; the child stops
with the server."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from retrieval.search.embeddings import Embedder
from server.app import create_app
from server.runtime.resources import resources_of
from server.settings import Settings
from tests.conftest import ApiTenant
from tests.encoder_helpers import (
    WAIT_S,
    batch_started,
    child_pid,
    gold_member,
    wait_until_gone,
)
from tests.http_helpers import assert_problem

Client = TestClient[Litestar]
QUESTION = {"question": "Which loyalty tier is Ada in?", "subject": "ada"}


@pytest.fixture(scope="module")
def served_settings(api_settings: Settings) -> Settings:
    return api_settings.model_copy(update={"encoder": "process", "torch_threads": 1})


@pytest.fixture(scope="module")
def http(served_settings: Settings) -> Iterator[Client]:
    """The app as ``sgam serve`` builds it: its own embedder, in its own process."""
    with TestClient(create_app(served_settings), raise_server_exceptions=False) as client:
        yield client


def served_embedder(http: Client) -> Embedder:
    return resources_of(http.app).embedder


@pytest.fixture
def ada(http: Client, api_tenant: ApiTenant) -> dict[str, str]:
    return gold_member(http, api_tenant.headers)


def test_exact_reads_are_answered_while_the_encoders_process_is_stopped(
    http: Client, ada: dict[str, str]
) -> None:
    embedder = served_embedder(http)
    assert embedder.process is not None
    child = child_pid(embedder)
    os.kill(child, signal.SIGSTOP)
    try:
        held = embedder.embed_later(["a batch the stopped child holds"])
        fact = http.get("/v1/facts/ada/loyalty_tier", headers=ada)
        named = http.post(
            "/v1/context",
            json=QUESTION | {"attributes": ["loyalty_tier"], "evidence_k": 0},
            headers=ada,
        )
        assert not held.done()
    finally:
        os.kill(child, signal.SIGCONT)
    assert (fact.status_code, fact.json()["value"]) == (200, "gold")
    assert named.status_code == 200, named.text
    assert "loyalty_tier: gold" in named.json()["block"]
    assert held.result(WAIT_S).shape == (1, 384)


def test_a_context_call_held_by_a_dying_child_answers_unavailable_and_the_next_is_served(
    http: Client, ada: dict[str, str]
) -> None:
    embedder = served_embedder(http)
    child = child_pid(embedder)
    os.kill(child, signal.SIGSTOP)
    with batch_started(embedder) as started, ThreadPoolExecutor(1) as caller:
        asking = caller.submit(http.post, "/v1/context", json=QUESTION, headers=ada)
        assert started.wait(WAIT_S)
        os.kill(child, signal.SIGKILL)
        refused = asking.result(WAIT_S)
    assert_problem(refused, 503, "unavailable")
    assert refused.headers["Retry-After"] == "1"
    assert "encoder" in refused.json()["detail"]
    served = http.post("/v1/context", json=QUESTION, headers=ada)
    assert served.status_code == 200, served.text
    assert "loyalty_tier: gold" in served.json()["block"]
    assert child_pid(embedder) != child


def test_the_encoders_process_stops_with_the_server(served_settings: Settings) -> None:
    with TestClient(create_app(served_settings)) as client:
        assert client.get("/readyz").status_code == 200
        child = child_pid(served_embedder(client))
    assert wait_until_gone(child) == "gone"
