"""Retention over HTTP: refusals as problems, a purged episode's answer, a fact purged whole.

Classes, undeclared classes and legal holds are scenarios of tests/conformance/test_retention.py,
run over HTTP too."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
from litestar import Litestar
from litestar.testing import TestClient

from store.db.clock import ManualClock
from store.episodes.record import content_hash
from store.service import MemoryStore
from tests.conftest import ApiTenant, ts

NOW = "2026-06-01T00:00:00Z"


def _problem(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = response.json()
    assert body["code"] == code, body
    return body


def test_refusals_of_retention_are_problems_with_their_status(
    http: TestClient[Litestar], api_tenant: ApiTenant
) -> None:
    key = {**api_tenant.headers, "X-SGAM-Now": NOW}
    episode = {"id": "h1", "occurred_at": NOW, "text": "About Hal.", "subjects": ["hal"]}
    undeclared = http.post("/v1/episodes", json={**episode, "retention_class": "x"}, headers=key)
    assert _problem(undeclared, 422, "invalid")["field"] == "retention_class"
    assert http.post("/v1/episodes", json=episode, headers=key).is_success
    assert http.post("/v1/subjects/hal/legal-hold", headers=key).is_success
    refused = _problem(http.delete("/v1/subjects/hal", headers=key), 409, "legal_hold")
    assert (refused["field"], refused["status"]) == ("subject", 409)
    _problem(http.delete("/v1/episodes/h1", headers=key), 409, "legal_hold")
    assert http.delete("/v1/subjects/hal/legal-hold", headers=key).is_success
    _problem(http.delete("/v1/subjects/hal/legal-hold", headers=key), 404, "not_found")


def test_a_purged_episode_answers_with_purged_at_and_no_text_and_its_fact_still_cites_it(
    http: TestClient[Litestar],
    api_tenant: ApiTenant,
    pool: Any,
    clock: ManualClock,
) -> None:
    key, name = api_tenant.headers, api_tenant.name
    then = {**key, "X-SGAM-Now": NOW}
    assert http.put("/v1/attributes/city", json={"value_type": "string"}, headers=then).is_success
    candidate = {"subject": "mira", "attribute": "city", "change": "new", "value": "Oslo",
                 "evidence": "Oslo", "valid_from": NOW}  # fmt: skip
    episode = {"id": "p1", "occurred_at": NOW, "text": "Mira lives in Oslo.",
               "retention_class": "ephemeral", "updates": [candidate]}  # fmt: skip
    written = http.post("/v1/episodes", json=episode, headers=then)
    assert written.status_code == 200, written.text
    clock.set(ts(NOW) + timedelta(days=2))
    store = MemoryStore(pool, clock=clock)
    counts = store.retention.purge_tenant(name, receipt_retention=timedelta(days=90))
    assert (counts.episodes_stubbed, counts.vectors_deleted) == (1, 1)

    stub = http.get("/v1/episodes/p1", headers=key)
    assert stub.status_code == 200, stub.text
    body = stub.json()
    assert (body["text"], body["purged_at"], body["erased_at"], body["content_hash"]) == (
        None,
        "2026-06-03T00:00:00Z",
        None,
        content_hash("Mira lives in Oslo."),
    )
    fact = http.get("/v1/facts/mira/city", headers=key)
    assert (fact.json()["value"], fact.json()["source_episode_id"]) == ("Oslo", "p1")
    _problem(http.get(f"/v1/purged-facts/{fact.json()['fact_id']}", headers=key), 404, "not_found")
    assert http.post("/v1/evidence/search", json={"query": "Oslo"}, headers=key).is_success


def test_a_fact_purged_whole_resolves_as_purged(
    http: TestClient[Litestar], api_tenant: ApiTenant, pool: Any, clock: ManualClock
) -> None:
    key, name = api_tenant.headers, api_tenant.name
    then = {**key, "X-SGAM-Now": NOW}
    mood = {"value_type": "string", "retention_class": "ephemeral"}
    assert http.put("/v1/attributes/mood", json=mood, headers=then).is_success

    def said(episode_id: str, value: str, valid_from: str) -> None:
        candidate = {"subject": "mira", "attribute": "mood", "change": "new", "value": value,
                     "evidence": "", "valid_from": valid_from}  # fmt: skip
        episode = {"id": episode_id, "occurred_at": valid_from, "text": value,
                   "updates": [candidate]}  # fmt: skip
        assert http.post("/v1/episodes", json=episode, headers=then).is_success

    said("m1", "happy", NOW)
    said("m2", "sad", "2026-06-01T01:00:00Z")
    sad = http.get("/v1/facts/mira/mood", headers=key).json()
    clock.set(ts(NOW) + timedelta(days=2))
    MemoryStore(pool, clock=clock).retention.purge_tenant(name, receipt_retention=timedelta(1))
    assert http.get("/v1/facts/mira/mood", headers=key).json()["supersedes"] == sad["supersedes"]
    resolved = http.get(f"/v1/purged-facts/{sad['supersedes']}", headers=key)
    assert resolved.json() == {
        "fact_id": sad["supersedes"],
        "status": "purged",
        "purged_at": "2026-06-03T00:00:00Z",
    }
