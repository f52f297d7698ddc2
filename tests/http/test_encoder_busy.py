"""Exact reads never wait behind the encoder, and a call that needs it is refused at once, with
503 ``unavailable`` and Retry-After, when its queue is full.

The encoder is held busy deterministically: the test takes the model's lock, so the encoder's
thread stops inside its batch, and every later call that needs text embedded queues.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from retrieval.search.embeddings import Embedder, Vectors
from tests.conftest import ApiTenant
from tests.encoder_helpers import batch_started, gold_member
from tests.http_helpers import assert_problem

Client = TestClient[Litestar]
WAIT_S = 30


@pytest.fixture
def busy(embedder: Embedder) -> Iterator[Future[Vectors]]:
    """The encoder inside a batch it cannot finish until the test ends (the model's lock is
    held), with nothing else queued."""
    with embedder._lock:
        with batch_started(embedder) as started:
            held = embedder.embed_later(["the batch that holds the encoder"])
            assert started.wait(WAIT_S)
        yield held
        assert not held.done()  # still held when the test's calls were answered
    assert held.result(WAIT_S).shape == (1, 384)


@pytest.fixture
def ada(http: Client, api_tenant: ApiTenant) -> dict[str, str]:
    return gold_member(http, api_tenant.headers)


def test_exact_reads_are_answered_while_the_encoder_is_busy(
    http: Client, ada: dict[str, str], busy: Future[Vectors]
) -> None:
    fact = http.get("/v1/facts/ada/loyalty_tier", headers=ada)
    assert (fact.status_code, fact.json()["value"]) == (200, "gold")
    profile = http.get("/v1/subjects/ada/profile", headers=ada)
    assert profile.status_code == 200, profile.text
    named = http.post(
        "/v1/context",
        json={"question": "Which tier?", "subject": "ada", "attributes": ["loyalty_tier"]}
        | {"evidence_k": 0},
        headers=ada,
    )
    assert named.status_code == 200, named.text
    assert "loyalty_tier: gold" in named.json()["block"]
    assert not busy.done()


def test_a_call_needing_the_encoder_is_refused_at_once_when_its_queue_is_full(
    http: Client, ada: dict[str, str], embedder: Embedder, busy: Future[Vectors]
) -> None:
    queued = [embedder.embed_later([f"queued {n}"]) for n in range(embedder.encoder.max_waiting)]
    body = {"question": "Which loyalty tier is Ada in?", "subject": "ada"}
    refused = http.post("/v1/context", json=body, headers=ada)
    assert_problem(refused, 503, "unavailable")
    assert refused.headers["Retry-After"] == "1"
    assert "encoder" in refused.json()["detail"]
    search = http.post("/v1/evidence/search", json={"query": "loyalty"}, headers=ada)
    assert_problem(search, 503, "unavailable")
    # Nothing was written or left queued by the refused calls.
    assert embedder.encoder.waiting == len(queued)
    assert all(not future.done() for future in queued)
