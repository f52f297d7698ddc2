"""Memory health end to end through HTTP: each memory type read for a decision, healthy and
broken, judged by ``POST /v1/health/classify`` from the receipts the reads left.

The verdict is the first failing layer's (design, section 6): a scope mismatch is reported
before activation, a missing read is READ_MISSING (never NOT_ACTIVATED), and evidence that
cannot be read is UNKNOWN, never green.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import uuid4

import pytest
from litestar import Litestar
from litestar.testing import TestClient
from psycopg_pool import ConnectionPool

from retrieval.memory_health.classifier import classify_all
from retrieval.search.embeddings import Embedder
from server.app import create_app
from server.settings import Settings
from store.contract.health import Evidence, Expectation
from store.contract.receipts import Receipt, memory_key
from store.db.database import make_pool
from store.service import MemoryStore
from tests.conftest import ApiTenant
from tests.helpers import receipt_secret
from tests.http.test_http_ops import swapped
from tests.http_helpers import candidate, declare, make_tenant, record

Client = TestClient[Litestar]
Json = dict[str, Any]

WRITTEN = "2026-05-01T10:00:00Z"
CORRECTED = "2026-05-10T10:00:00Z"
BETWEEN = "2026-05-05T00:00:00Z"
DECIDED = "2026-05-20T10:00:00Z"


def _headers(tenant: ApiTenant, *, now: str = DECIDED, decision: str | None = None) -> Json:
    headers = {**tenant.headers, "X-SGAM-Now": now}
    if decision is not None:
        headers["X-SGAM-Decision"] = decision
    return headers


def _classify(http: Client, tenant: ApiTenant, *expectations: Json) -> list[Json]:
    response = http.post(
        "/v1/health/classify", json={"expectations": list(expectations)}, headers=tenant.headers
    )
    assert response.status_code == 200, response.text
    verdicts: list[Json] = response.json()["verdicts"]
    return verdicts


def _verdict(http: Client, tenant: ApiTenant, expectation: Json) -> tuple[str, str]:
    [verdict] = _classify(http, tenant, expectation)
    return verdict["verdict"], verdict["operating_state"]


def _semantic(decision: str, subject: str = "mira", attribute: str = "passport_deadline") -> Json:
    return {
        "decision_id": decision,
        "memory": {"type": "semantic", "subject": subject, "attribute": attribute},
    }


@pytest.fixture(scope="module")
def facts(http: Client) -> ApiTenant:
    """A tenant where mira's passport deadline was corrected, and miro has one too."""
    tenant = make_tenant(http, "health")
    declare(http, tenant.headers, "passport_deadline", "date")
    declare(http, tenant.headers, "home_city", "string")
    record(
        http,
        _headers(tenant, now=WRITTEN),
        "ep-first",
        "Mira's passport must be renewed by July 15.",
        updates=[
            candidate("mira", "passport_deadline", "2026-07-15"),
            candidate("mira", "home_city", "Milan"),
            candidate("miro", "passport_deadline", "2026-09-01"),
        ],
    )
    record(
        http,
        _headers(tenant, now=CORRECTED),
        "ep-correction",
        "Correction: the deadline is June 30.",
        occurred_at=CORRECTED,
        updates=[candidate("mira", "passport_deadline", "2026-06-30")],
    )
    return tenant


def _read_fact(http: Client, tenant: ApiTenant, path: str, decision: str, **query: str) -> Json:
    response = http.get(path, params=query, headers=_headers(tenant, decision=decision))
    assert response.status_code == 200, response.text
    found: Json = response.json()
    return found


def test_a_current_fact_read_for_a_decision_is_healthy(http: Client, facts: ApiTenant) -> None:
    decision = str(uuid4())
    read = _read_fact(http, facts, "/v1/facts/mira/passport_deadline", decision)
    assert read["value"] == "2026-06-30"
    assert _verdict(http, facts, {**_semantic(decision), "task_outcome": "verified"}) == (
        "HEALTHY",
        "healthy",
    )
    assert _verdict(http, facts, _semantic(decision)) == ("HEALTHY", "investigate_execution")


def test_a_fact_read_as_believed_before_its_correction_is_superseded(
    http: Client, facts: ApiTenant
) -> None:
    decision = str(uuid4())
    read = _read_fact(http, facts, "/v1/facts/mira/passport_deadline", decision, known_at=BETWEEN)
    assert read["value"] == "2026-07-15"  # what was believed then, read after the correction
    [verdict] = _classify(http, facts, _semantic(decision))
    assert (verdict["verdict"], verdict["layer"]) == ("SUPERSEDED", "invariant")
    assert verdict["operating_state"] == "fix_memory_first"


def test_a_read_of_another_subject_is_a_scope_mismatch_before_activation(
    http: Client, facts: ApiTenant
) -> None:
    decision = str(uuid4())
    _read_fact(http, facts, "/v1/facts/miro/passport_deadline", decision)
    [verdict] = _classify(http, facts, _semantic(decision, "mira"))
    assert (verdict["verdict"], verdict["layer"]) == ("SCOPE_MISMATCH", "scope")
    # The caller's scope string is part of the scope too.
    scoped = str(uuid4())
    response = http.get(
        "/v1/facts/mira/passport_deadline",
        headers={**_headers(facts, decision=scoped), "X-SGAM-Scope": "project:acme"},
    )
    assert response.status_code == 200, response.text
    assert _verdict(http, facts, _semantic(scoped))[0] == "SCOPE_MISMATCH"
    assert _verdict(http, facts, {**_semantic(scoped), "scope": "project:acme"})[0] == "HEALTHY"


def test_a_key_the_decision_never_read_is_read_missing_not_not_activated(
    http: Client, facts: ApiTenant
) -> None:
    decision = str(uuid4())
    _read_fact(http, facts, "/v1/facts/mira/passport_deadline", decision)
    [verdict] = _classify(http, facts, _semantic(decision, attribute="home_city"))
    assert (verdict["verdict"], verdict["layer"]) == ("READ_MISSING", "read")
    # A key never written for the subject, read for the decision: the write is what is missing.
    response = http.get("/v1/facts/mira/nickname", headers=_headers(facts, decision=decision))
    assert response.status_code == 404
    assert _verdict(http, facts, _semantic(decision, attribute="nickname"))[0] == "WRITE_MISSING"


def test_a_value_older_than_its_budget_is_stale(http: Client, facts: ApiTenant) -> None:
    decision = str(uuid4())
    response = http.get(
        "/v1/facts/mira/home_city",
        headers={**_headers(facts, decision=decision), "X-SGAM-Freshness-Budget": "86400"},
    )
    assert response.status_code == 200, response.text
    # Written on May 1, read on May 20: older than the day the read allowed.
    assert _verdict(http, facts, _semantic(decision, attribute="home_city"))[0] == "STALE"
    # The expectation's own budget wins over the read's.
    week = 30 * 86400
    expectation = {**_semantic(decision, attribute="home_city"), "freshness_budget_s": week}
    assert _verdict(http, facts, expectation)[0] == "HEALTHY"


def test_unknown_decisions_and_an_unreachable_database_are_unknown_never_green(
    http: Client, facts: ApiTenant, conninfo: str, embedder: Embedder
) -> None:
    unknown = _semantic(str(uuid4()))
    for outcome in ("verified", "missing"):
        verdict, state = _verdict(http, facts, {**unknown, "task_outcome": outcome})
        assert (verdict, state) == ("UNKNOWN", "uncertain")
    decision = str(uuid4())
    _read_fact(http, facts, "/v1/facts/mira/passport_deadline", decision)
    closed = make_pool(conninfo)  # never opened: every checkout fails
    with swapped(http.app, store=MemoryStore(closed, embedder=embedder)):
        response = http.post(
            "/v1/health/classify",
            json={"expectations": [{**_semantic(decision), "task_outcome": "verified"}]},
            headers=facts.headers,
        )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["evidence_available"] is False
    assert [(v["verdict"], v["operating_state"]) for v in body["verdicts"]] == [
        ("UNKNOWN", "uncertain")
    ]
    # Back up, the same decision reads healthy: the verdict was about the evidence.
    assert _verdict(http, facts, _semantic(decision))[0] == "HEALTHY"


def _checkpoint(http: Client, tenant: ApiTenant, thread: str, goal: str) -> Json:
    response = http.put(
        f"/v1/threads/{thread}/checkpoint",
        json={"active_goal_id": goal, "pending_dependency": "approval-1", "state": {}},
        headers=_headers(tenant, now=WRITTEN),
    )
    assert response.status_code == 200, response.text
    written: Json = response.json()
    return written


@pytest.fixture
def restarted(api_settings: Settings, embedder: Embedder) -> Iterator[Client]:
    """A second server process on the same database: nothing in memory carries over."""
    with TestClient(create_app(api_settings, embedder=embedder)) as client:
        yield client


def test_working_memory_keeps_continuity_across_a_restart_and_loses_it_to_an_old_version(
    http: Client, restarted: Client
) -> None:
    tenant = make_tenant(http, "working")
    _checkpoint(http, tenant, "t-1", "goal-1")
    decision = str(uuid4())
    after_restart = restarted.get(
        "/v1/threads/t-1/checkpoint", headers=_headers(tenant, decision=decision)
    )
    assert after_restart.status_code == 200, after_restart.text
    assert after_restart.json()["active_goal_id"] == "goal-1"
    working = {"type": "working", "thread": "t-1"}
    expectation = {"decision_id": decision, "memory": working}
    assert _verdict(restarted, tenant, expectation)[0] == "HEALTHY"
    assert (
        _verdict(restarted, tenant, {**expectation, "memory": {**working, "version": 1}})[0]
        == "HEALTHY"
    )
    # A later step writes version 2; a decision that reads version 1 has lost continuity.
    _checkpoint(http, tenant, "t-1", "goal-2")
    stale = str(uuid4())
    old = http.get(
        "/v1/threads/t-1/checkpoint",
        params={"version": 1},
        headers=_headers(tenant, decision=stale),
    )
    assert old.status_code == 200, old.text
    [verdict] = _classify(http, tenant, {"decision_id": stale, "memory": working})
    assert (verdict["verdict"], verdict["layer"]) == ("CONTINUITY_LOST", "invariant")


def _decision_receipts(http: Client, tenant: ApiTenant, decision: str) -> list[Receipt]:
    response = http.get(f"/v1/decisions/{decision}/receipts", headers=tenant.headers)
    assert response.status_code == 200, response.text
    return [Receipt.model_validate(item) for item in response.json()["receipts"]]


def test_procedures_read_for_a_decision_are_healthy_and_an_unapproved_one_never_serves(
    http: Client, pool: ConnectionPool
) -> None:
    tenant = make_tenant(http, "procedural")
    headers = _headers(tenant, now=WRITTEN)
    for body in (
        {"name": "refund", "steps": "Check the order."},
        {"name": "refund", "steps": "Skip."},
    ):
        assert http.post("/v1/procedures", json=body, headers=headers).status_code == 201
    approval = {"approver": "ops-lead", "policy": "two-person"}
    approved = http.post("/v1/procedures/refund/versions/1/approve", json=approval, headers=headers)
    assert approved.status_code == 200, approved.text
    activated = http.post("/v1/procedures/refund/versions/1/activate", json={}, headers=headers)
    assert activated.status_code == 200, activated.text
    # The API refuses to make the unapproved draft active: UNSAFE_PROCEDURE cannot arise here.
    refused = http.post("/v1/procedures/refund/versions/2/activate", json={}, headers=headers)
    assert refused.status_code == 409, refused.text
    decision = str(uuid4())
    active = http.get("/v1/procedures/refund/active", headers=_headers(tenant, decision=decision))
    assert active.json()["version"] == 1
    expectation = {"decision_id": decision, "memory": {"type": "procedural", "procedure": "refund"}}
    assert _verdict(http, tenant, expectation)[0] == "HEALTHY"
    # The same receipts with the served version unapproved: the offline classifier's verdict.
    receipts = [
        item.model_copy(update={"approved": False})
        for item in _decision_receipts(http, tenant, decision)
    ]
    [verdict] = classify_all(
        [Expectation.model_validate(expectation)],
        Evidence(available=True, receipts=receipts, keyring={1: receipt_secret(pool, tenant.name)}),
        tenant_id=tenant.name,
    )
    assert verdict.verdict == "UNSAFE_PROCEDURE"


EPISODES = (
    ("trip-1", "Mira renewed her passport at the consulate in Milan in one visit."),
    ("trip-2", "Mira's passport renewal at the Milan consulate needed a second visit."),
    ("trip-3", "Mira booked the passport renewal appointment at the consulate online."),
    ("trip-4", "Mira paid the passport renewal fee at the consulate counter."),
)


def test_episodes_used_as_experience_need_an_outcome_and_retrieved_ones_need_activation(
    http: Client, pool: ConnectionPool
) -> None:
    tenant = make_tenant(http, "episodic")
    for episode_id, text in EPISODES:
        record(http, _headers(tenant, now=WRITTEN), episode_id, text, subjects=["mira"])
    question: Json = {"question": "How did Mira renew her passport?", "subject": "mira"}

    def answer(**asked: int) -> Json:
        response = http.post("/v1/context", json=question | asked, headers=_headers(tenant))
        assert response.status_code == 200, response.text
        body: Json = response.json()
        return body

    # Two hits asked for, and the smallest budget that still quotes one of them: the other is
    # retrieved for the decision but does not reach the block.
    budget = next(
        tokens
        for tokens in range(16, 512, 8)
        if len(answer(evidence_k=2, token_budget=tokens)["evidence"]) == 1
    )

    def context() -> tuple[str, str]:
        body = answer(evidence_k=2, token_budget=budget)
        [line] = body["evidence"]
        return body["decision_id"], line["episode_id"]

    decision, quoted = context()
    secret = receipt_secret(pool, tenant.name)
    keys = {memory_key("episodic", e, secret=secret): e for e, _ in EPISODES}
    retrieved = {
        keys[r.memory_key]: r.activated
        for r in _decision_receipts(http, tenant, decision)
        if r.memory_type == "episodic"
    }
    assert retrieved[quoted] is True
    passed_over = sorted(episode_id for episode_id, activated in retrieved.items() if not activated)
    assert passed_over, retrieved  # more were retrieved than the block quotes

    def episodic(episode_id: str, decision_id: str) -> Json:
        return {
            "decision_id": decision_id,
            "memory": {"type": "episodic", "episode_id": episode_id},
        }

    assert _verdict(http, tenant, episodic(quoted, decision))[0] == "OUTCOMELESS_EPISODE"
    [verdict] = _classify(http, tenant, episodic(passed_over[0], decision))
    assert (verdict["verdict"], verdict["layer"]) == ("NOT_ACTIVATED", "activated")
    outcome = {
        "status": "succeeded",
        "verified": True,
        "human_intervened": False,
        "budget_exhausted": False,
    }
    recorded = http.post(
        f"/v1/episodes/{quoted}/outcome", json=outcome, headers=_headers(tenant, now=WRITTEN)
    )
    assert recorded.status_code == 200, recorded.text
    again, quoted_again = context()
    assert quoted_again == quoted
    assert _verdict(http, tenant, episodic(quoted, again))[0] == "HEALTHY"
