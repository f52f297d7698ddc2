"""Retention over HTTP: classes, an undeclared class refused, a purged episode's answer, holds."""

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


def test_the_four_default_classes_are_listed_and_a_declared_one_joins_them(
    http: TestClient[Litestar], api_tenant: ApiTenant
) -> None:
    key = api_tenant.headers
    listed = http.get("/v1/retention-classes", headers=key)
    assert listed.status_code == 200, listed.text
    assert listed.json() == {
        "classes": [
            {"name": "ephemeral", "keep_days": 1, "counts_from": "recorded",
             "declared_at": None, "updated_at": None},
            {"name": "permanent", "keep_days": None, "counts_from": "recorded",
             "declared_at": None, "updated_at": None},
            {"name": "session", "keep_days": 1, "counts_from": "session_end",
             "declared_at": None, "updated_at": None},
            {"name": "standard", "keep_days": 365, "counts_from": "recorded",
             "declared_at": None, "updated_at": None},
        ]
    }  # fmt: skip
    declared = http.put(
        "/v1/retention-classes/chat",
        json={"keep_days": 7, "counts_from": "session_end"},
        headers={**key, "X-SGAM-Now": NOW},
    )
    assert declared.status_code == 200, declared.text
    assert declared.json() == {
        "name": "chat",
        "keep_days": 7,
        "counts_from": "session_end",
        "declared_at": NOW,
        "updated_at": NOW,
    }
    names = [c["name"] for c in http.get("/v1/retention-classes", headers=key).json()["classes"]]
    assert names == ["chat", "ephemeral", "permanent", "session", "standard"]
    refused = http.put("/v1/retention-classes/chat", json={"keep_days": 7, "x": 1}, headers=key)
    assert _problem(refused, 422, "invalid")["field"] == "x"


def test_an_undeclared_class_is_422_naming_the_field_and_writes_nothing(
    http: TestClient[Litestar], api_tenant: ApiTenant
) -> None:
    key = api_tenant.headers
    episode = {"id": "u1", "occurred_at": NOW, "text": "x", "retention_class": "forever"}
    refused = http.post("/v1/episodes", json=episode, headers=key)
    assert _problem(refused, 422, "invalid")["field"] == "retention_class"
    batch = http.post("/v1/episodes/batch", json={"episodes": [episode]}, headers=key)
    assert _problem(batch, 422, "invalid")["field"] == "episodes.0.retention_class"
    _problem(http.get("/v1/episodes/u1", headers=key), 404, "not_found")
    declaration = {"value_type": "string", "retention_class": "forever"}
    attribute = http.put("/v1/attributes/city", json=declaration, headers=key)
    assert _problem(attribute, 422, "invalid")["field"] == "retention_class"
    assert http.get("/v1/attributes", headers=key).json() == {"attributes": []}


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


def test_a_held_subject_and_its_episodes_cannot_be_erased_until_released(
    http: TestClient[Litestar], api_tenant: ApiTenant
) -> None:
    key = {**api_tenant.headers, "X-SGAM-Now": NOW}
    episode = {"id": "h1", "occurred_at": NOW, "text": "About Hal.", "subjects": ["hal"]}
    assert http.post("/v1/episodes", json=episode, headers=key).is_success
    held = http.post("/v1/subjects/hal/legal-hold", headers=key)
    assert held.json() == {"subject": "hal", "status": "held", "placed_at": NOW}
    refused = _problem(http.delete("/v1/subjects/hal", headers=key), 409, "legal_hold")
    assert (refused["field"], refused["status"]) == ("subject", 409)
    episode_refused = _problem(http.delete("/v1/episodes/h1", headers=key), 409, "legal_hold")
    assert episode_refused["field"] == "episode_id"
    assert http.get("/v1/episodes/h1", headers=key).json()["text"] == "About Hal."
    released = http.delete("/v1/subjects/hal/legal-hold", headers=key)
    assert released.json() == {"subject": "hal", "status": "released", "placed_at": NOW}
    _problem(http.delete("/v1/subjects/hal/legal-hold", headers=key), 404, "not_found")
    erased = http.delete("/v1/subjects/hal", headers=key)
    assert erased.json()["status"] == "erased", erased.text


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
