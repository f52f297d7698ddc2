"""Episodic memory through the HTTP API: experience search, and outcomes as HTTP answers them.

Recording, superseding, refusing and erasing outcomes are scenarios of
tests/conformance/test_episodic_memory.py, run over HTTP too.

An episode counts as experience only with an observed outcome (design, section 6): one without
an outcome, or whose outcome is ``unknown``, is found by similarity but flagged, never counted.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from litestar import Litestar
from litestar.testing import TestClient
from psycopg_pool import ConnectionPool

from store.service import MemoryStore
from tests.conformance.test_episodic_memory import FAILED, FIRST_AT, SUCCEEDED
from tests.conftest import ApiTenant
from tests.helpers import owner_connection
from tests.http_helpers import assert_problem, make_tenant, record

Client = TestClient[Litestar]


def _at(tenant: ApiTenant, now: str) -> dict[str, str]:
    return {**tenant.headers, "X-SGAM-Now": now}


def _outcome(
    http: Client, tenant: ApiTenant, episode_id: str, body: dict[str, Any], *, now: str = FIRST_AT
) -> Any:
    return http.post(f"/v1/episodes/{episode_id}/outcome", json=body, headers=_at(tenant, now))


def _stored_outcomes(pool: ConnectionPool, tenant: ApiTenant) -> list[tuple[Any, ...]]:
    with owner_connection(pool) as conn:
        return conn.execute(
            "SELECT episode_id, revision, status, superseded_at IS NULL FROM episode_outcomes"
            " WHERE tenant_id = %s ORDER BY episode_id, revision",
            (tenant.name,),
        ).fetchall()


def _search(http: Client, tenant: ApiTenant, query: str, **extra: Any) -> dict[str, Any]:
    response = http.post(
        "/v1/experiences/search", json={"query": query, **extra}, headers=tenant.headers
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _current(http: Client, api_tenant: ApiTenant, episode_id: str) -> Any:
    """The episode's current outcome as ``GET .../outcome`` answers it; None for a 404."""
    response = http.get(f"/v1/episodes/{episode_id}/outcome", headers=api_tenant.headers)
    if response.status_code == 404:
        assert_problem(response, 404, "not_found", field="episode_id")
        return None
    assert response.status_code == 200, response.text
    return response.json()


def test_an_outcome_is_its_own_resource_and_refusals_are_problems(
    http: Client, api_tenant: ApiTenant
) -> None:
    record(http, api_tenant.headers, "deploy-1", "Deployed the billing service to production.")
    assert _current(http, api_tenant, "deploy-1") is None
    answered = _outcome(http, api_tenant, "deploy-1", FAILED)
    assert answered.status_code == 200, answered.text
    assert _current(http, api_tenant, "deploy-1") == answered.json()
    episode = http.get("/v1/episodes/deploy-1", headers=api_tenant.headers).json()
    assert "outcome" not in episode  # one shape of an episode, wherever it is answered
    bad = _outcome(http, api_tenant, "deploy-1", {**FAILED, "status": "great"})
    assert_problem(bad, 422, "invalid", field="status")
    missing = _outcome(http, api_tenant, "never-recorded", FAILED)
    assert_problem(missing, 404, "not_found", field="episode_id")


def test_experience_search_ranks_similar_situations_first_and_counts_only_observed_outcomes(
    http: Client, api_tenant: ApiTenant
) -> None:
    headers = api_tenant.headers
    record(http, headers, "migrate-failed", "Ran the database schema migration on production;")
    record(http, headers, "migrate-ok", "Applied the database schema migration to production.")
    record(http, headers, "migrate-unknown", "Started a database migration on the prod cluster.")
    record(http, headers, "migrate-none", "Planned the production database schema migration.")
    record(http, headers, "lunch", "Ordered pizza for the team lunch on Friday.")
    _outcome(http, api_tenant, "migrate-failed", FAILED)
    _outcome(http, api_tenant, "migrate-ok", SUCCEEDED)
    _outcome(http, api_tenant, "migrate-unknown", {**SUCCEEDED, "status": "unknown"})
    _outcome(http, api_tenant, "lunch", SUCCEEDED)

    found = _search(http, api_tenant, "migrating the production database schema", k=5)

    ranked = [item["episode_id"] for item in found["results"]]
    assert ranked[-1] == "lunch"
    assert set(ranked[:4]) == {"migrate-failed", "migrate-ok", "migrate-unknown", "migrate-none"}
    scores = [item["score"] for item in found["results"]]
    assert scores == sorted(scores, reverse=True)
    by_id = {item["episode_id"]: item for item in found["results"]}
    assert by_id["migrate-none"]["outcome"] is None
    assert by_id["migrate-none"]["experience"] is False
    assert by_id["migrate-unknown"]["outcome"]["status"] == "unknown"
    assert by_id["migrate-unknown"]["experience"] is False
    assert by_id["migrate-failed"]["outcome"]["status"] == "failed"
    assert by_id["migrate-failed"]["experience"] is True
    assert by_id["migrate-ok"]["experience"] is True
    assert found["experience_count"] == 3  # migrate-failed, migrate-ok, lunch
    assert sum(item["experience"] for item in found["results"]) == found["experience_count"]
    for item in found["results"]:
        assert item["experience"] == (
            item["outcome"] is not None and item["outcome"]["status"] != "unknown"
        )
    assert found["search"] == {
        "method": "exact",
        "scope_size": 5,
        "scope_size_capped": False,
        "mode": "vector",  # experiences are found by similarity
    }


def test_experience_search_honours_the_scope_like_evidence_search(
    http: Client, api_tenant: ApiTenant
) -> None:
    headers = api_tenant.headers
    record(http, headers, "s1-deploy", "Rolled out the new release.", session_id="s1")
    record(http, headers, "s2-deploy", "Rolled out the new release again.", session_id="s2")

    found = _search(http, api_tenant, "rolling out a release", session_id="s2", k=3)

    assert [item["episode_id"] for item in found["results"]] == ["s2-deploy"]
    assert found["experience_count"] == 0


def test_another_tenants_episode_is_not_found_and_never_found_by_search(
    http: Client, api_tenant: ApiTenant, pool: ConnectionPool
) -> None:
    other = make_tenant(http, "episodic")
    record(http, api_tenant.headers, "shared-id", "Restarted the payment gateway after an outage.")
    _outcome(http, api_tenant, "shared-id", SUCCEEDED)

    refused = _outcome(http, other, "shared-id", FAILED)

    assert_problem(refused, 404, "not_found", field="episode_id")
    assert_problem(http.get("/v1/episodes/shared-id", headers=other.headers), 404, "not_found")
    assert _search(http, other, "restarting the payment gateway")["results"] == []
    record(http, other.headers, "own", "Restarted the payment gateway once more.")
    found = _search(http, other, "restarting the payment gateway")
    assert [item["episode_id"] for item in found["results"]] == ["own"]
    assert found["results"][0]["outcome"] is None
    assert _stored_outcomes(pool, other) == []
    assert _stored_outcomes(pool, api_tenant) == [("shared-id", 1, "succeeded", True)]


def test_concurrent_outcomes_of_one_episode_are_recorded_one_at_a_time(
    store: MemoryStore, tenant: str, pool: ConnectionPool
) -> None:
    store.episodes.record(
        tenant, {"id": "busy", "occurred_at": FIRST_AT, "text": "Retried the nightly export."}
    )
    statuses = ["succeeded", "failed", "partial", "unknown"] * 2
    receipts = [f"run-{n}" for n in range(len(statuses))]

    with ThreadPoolExecutor(max_workers=len(statuses)) as workers:
        recorded = list(
            workers.map(
                lambda pair: store.outcomes.record(
                    tenant, "busy", {"status": pair[0], "outcome_receipt_id": pair[1]}
                ),
                zip(statuses, receipts, strict=True),
            )
        )

    assert sorted(outcome.revision for outcome in recorded) == list(range(1, 9))
    last = max(recorded, key=lambda outcome: outcome.revision)
    assert store.outcomes.current(tenant, "busy") == last
    with owner_connection(pool) as conn:
        current = conn.execute(
            "SELECT revision FROM episode_outcomes WHERE tenant_id = %s AND superseded_at IS NULL",
            (tenant,),
        ).fetchall()
    assert current == [(last.revision,)]
