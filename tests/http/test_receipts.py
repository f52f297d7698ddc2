"""Receipts: which calls leave them, what they say, that they follow erasure and retention,
stay within their tenant, and commit with the reads they describe or not at all."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from uuid import uuid4

import psycopg
import pytest
from litestar import Litestar
from litestar.testing import TestClient
from psycopg import sql
from psycopg_pool import ConnectionPool

from store.contract.receipts import memory_key, owner_key, scope_hash
from store.db import snapshot as snapshot_module
from store.db.clock import ManualClock
from store.errors import DatabaseUnavailable
from store.governance import receipts as receipts_module
from store.governance.receipts import Trace
from store.service import MemoryStore
from tests.conftest import ApiTenant, ts
from tests.helpers import owner_connection, receipt_secret
from tests.http_helpers import assert_problem, candidate, declare, make_tenant, record
from tests.receipt_audit import audit_receipts

Client = TestClient[Litestar]
Json = dict[str, Any]

NOW = "2026-05-20T10:00:00Z"


def _headers(tenant: ApiTenant, decision: str | None = None, **extra: str) -> Json:
    headers = {**tenant.headers, "X-SGAM-Now": NOW, **extra}
    if decision is not None:
        headers["X-SGAM-Decision"] = decision
    return headers


def _rows(pool: ConnectionPool, tenant: str) -> list[tuple[Any, ...]]:
    with owner_connection(pool) as conn:
        return conn.execute(
            "SELECT action, memory_type, memory_key, decision_id, activated FROM receipts"
            " WHERE tenant_id = %s ORDER BY recorded_at, action, memory_type, memory_key",
            (tenant,),
        ).fetchall()


@pytest.fixture
def seeded(http: Client) -> ApiTenant:
    tenant = make_tenant(http, "receipts")
    declare(http, tenant.headers, "home_city", "string")
    record(
        http,
        _headers(tenant),
        "ep-1",
        "Mira moved to Turin last spring.",
        subjects=["mira"],
        updates=[candidate("mira", "home_city", "Turin")],
    )
    return tenant


def test_writes_leave_receipts_and_reads_leave_them_only_for_a_decision(
    http: Client, pool: ConnectionPool, seeded: ApiTenant
) -> None:
    written = _rows(pool, seeded.name)
    assert [(action, kind) for action, kind, *_ in written] == [
        ("write", "episodic"),
        ("write", "semantic"),
    ]
    secret = receipt_secret(pool, seeded.name)
    assert {key for _, _, key, *_ in written} == {
        memory_key("episodic", "ep-1", secret=secret),
        memory_key("semantic", "home_city", secret=secret),
    }
    for path in ("/v1/facts/mira/home_city", "/v1/subjects/mira/profile"):
        assert http.get(path, headers=_headers(seeded)).status_code == 200
    assert _rows(pool, seeded.name) == written  # no decision named: nothing recorded
    decision = str(uuid4())
    for path in ("/v1/facts/mira/home_city", "/v1/subjects/mira/profile"):
        assert http.get(path, headers=_headers(seeded, decision)).status_code == 200
    reads = [row for row in _rows(pool, seeded.name) if row[0] == "read"]
    assert [(kind, str(opened), activated) for _, kind, _, opened, activated in reads] == [
        ("semantic", decision, True),
        ("semantic", decision, True),
    ]


def test_a_decision_reads_back_with_every_field_of_its_receipts(
    http: Client, pool: ConnectionPool, seeded: ApiTenant
) -> None:
    decision = str(uuid4())
    response = http.get(
        "/v1/facts/mira/home_city",
        headers=_headers(seeded, decision, **{"X-SGAM-Scope": "project:acme"}),
    )
    fact = response.json()
    body = http.get(f"/v1/decisions/{decision}/receipts", headers=seeded.headers).json()
    assert body["decision_id"] == decision
    assert body["opened_at"] == "2026-05-20T10:00:00Z"
    [receipt] = body["receipts"]
    secret = receipt_secret(pool, seeded.name)
    scope = scope_hash(seeded.name, "subject", "mira", "project:acme", secret=secret)
    assert receipt == {
        "receipt_id": receipt["receipt_id"],
        "decision_id": decision,
        "action": "read",
        "memory_type": "semantic",
        "memory_key": memory_key("semantic", "home_city", secret=secret),
        "version": fact["version_id"],
        "expected_scope_hash": scope,
        "observed_scope_hash": scope,
        "written_at": fact["recorded_at"],
        "read_at": "2026-05-20T10:00:00Z",
        "freshness_budget_s": None,
        "provenance": "ep-1",
        "activated": True,
        "invalidation": "current",
        "outcome": None,
        "approved": None,
        "recorded_at": "2026-05-20T10:00:00Z",
        "secret_version": 1,
    }


def test_a_context_call_opens_its_decision_with_a_receipt_per_key_and_episode(
    http: Client, pool: ConnectionPool, seeded: ApiTenant
) -> None:
    question = {"question": "Where does Mira live?", "subject": "mira", "evidence_k": 2}
    answer = http.post("/v1/context", json=question, headers=_headers(seeded)).json()
    assert "Turin" in answer["block"]
    body = http.get(f"/v1/decisions/{answer['decision_id']}/receipts", headers=seeded.headers)
    kinds = {(r["memory_type"], r["memory_key"], r["activated"]) for r in body.json()["receipts"]}
    secret = receipt_secret(pool, seeded.name)
    assert (("semantic", memory_key("semantic", "home_city", secret=secret), True)) in kinds
    assert {kind for kind, _, _ in kinds} == {"semantic", "episodic"}
    # A caller may name the decision a context call opens, and add reads to it afterwards.
    named = str(uuid4())
    joined = http.post("/v1/context", json=question, headers=_headers(seeded, named))
    assert joined.json()["decision_id"] == named
    http.get("/v1/subjects/mira/profile", headers=_headers(seeded, named))
    receipts = http.get(f"/v1/decisions/{named}/receipts", headers=seeded.headers).json()
    assert len(receipts["receipts"]) == len(body.json()["receipts"]) + 1


def test_receipts_stay_within_their_tenant(http: Client, seeded: ApiTenant) -> None:
    decision = str(uuid4())
    http.get("/v1/facts/mira/home_city", headers=_headers(seeded, decision))
    other = make_tenant(http, "receipts-other")
    missing = http.get(f"/v1/decisions/{decision}/receipts", headers=other.headers)
    assert_problem(missing, 404, "not_found", field="decision_id")
    expectation = {
        "decision_id": decision,
        "memory": {"type": "semantic", "subject": "mira", "attribute": "home_city"},
    }
    judged = http.post(
        "/v1/health/classify", json={"expectations": [expectation]}, headers=other.headers
    )
    assert judged.json()["verdicts"][0]["verdict"] == "UNKNOWN"


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("X-SGAM-Decision", "not-a-uuid"),
        ("X-SGAM-Scope", "two words"),
        ("X-SGAM-Freshness-Budget", "-1"),
        ("X-SGAM-Freshness-Budget", "1.5"),
    ],
)
def test_a_malformed_receipt_header_is_refused_naming_it_and_leaves_nothing(
    http: Client, pool: ConnectionPool, seeded: ApiTenant, header: str, value: str
) -> None:
    before = _rows(pool, seeded.name)
    response = http.get("/v1/facts/mira/home_city", headers={**_headers(seeded), header: value})
    assert_problem(response, 422, "invalid", field=header)
    assert _rows(pool, seeded.name) == before


def test_receipts_follow_the_erasure_of_their_subject_and_episode(
    http: Client, pool: ConnectionPool, seeded: ApiTenant
) -> None:
    decision = str(uuid4())
    question = {"question": "Where does Mira live?", "subject": "mira"}
    http.post("/v1/context", json=question, headers=_headers(seeded, decision))
    record(http, _headers(seeded), "ep-2", "A note about the weather.", subjects=["ugo"])
    assert {kind for _, kind, *_ in _rows(pool, seeded.name)} == {"semantic", "episodic"}
    erased = http.delete("/v1/subjects/mira", headers=seeded.headers)
    assert erased.status_code == 200, erased.text
    # Mira's facts and the episode naming her went, and every receipt of them with them.
    left = _rows(pool, seeded.name)
    assert {(action, key) for action, _, key, *_ in left} == {
        ("write", memory_key("episodic", "ep-2", secret=receipt_secret(pool, seeded.name)))
    }
    assert http.delete("/v1/episodes/ep-2", headers=seeded.headers).status_code == 200
    assert _rows(pool, seeded.name) == []


def test_a_read_and_its_receipts_commit_together_or_not_at_all(
    store: MemoryStore, tenant: str, pool: ConnectionPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.checkpoints.write_checkpoint(tenant, "t-1", {"active_goal_id": "g-1"})
    real = receipts_module.leave_receipts

    def fails_after(*args: Any, **kwargs: Any) -> None:
        real(*args, **kwargs)
        raise psycopg.OperationalError("the connection was lost before the commit")

    monkeypatch.setattr(receipts_module, "leave_receipts", fails_after)
    with pytest.raises(DatabaseUnavailable):
        store.checkpoints.read_checkpoint(tenant, "t-1", trace=Trace(decision_id=uuid4()))
    assert [row[0] for row in _rows(pool, tenant)] == ["write"]


def test_receipts_older_than_their_retention_are_purged(
    store: MemoryStore, tenant: str, clock: ManualClock, pool: ConnectionPool
) -> None:
    clock.set(ts("2026-01-01T00:00:00Z"))
    store.checkpoints.write_checkpoint(tenant, "t-1", {"active_goal_id": "g-1"})
    old = uuid4()
    store.checkpoints.read_checkpoint(tenant, "t-1", trace=Trace(decision_id=old))
    clock.set(ts("2026-03-15T00:00:00Z"))
    recent = uuid4()
    store.checkpoints.read_checkpoint(tenant, "t-1", trace=Trace(decision_id=recent))
    assert store.receipts.purge(tenant, retention=timedelta(days=30)) == 2  # the write, the read
    assert store.receipts.decision(tenant, recent).receipts
    with owner_connection(pool) as conn:
        decisions = conn.execute(
            "SELECT decision_id FROM decisions WHERE tenant_id = %s", (tenant,)
        ).fetchall()
    assert decisions == [(recent,)]


def test_the_audit_finds_content_in_a_receipt(pool: ConnectionPool, store: MemoryStore) -> None:
    tenant = "audit"
    store.admin.create_tenant(tenant)
    store.episodes.record(
        tenant,
        {"id": "ep-x", "occurred_at": "2026-01-01T00:00:00Z", "text": "the whole secret plan"},
    )
    with owner_connection(pool) as conn:
        assert audit_receipts(conn) > 0
        for column, value in (("provenance", "secret plan"), ("version", "secret plan")):
            conn.execute(
                sql.SQL("UPDATE receipts SET {} = %s WHERE tenant_id = %s").format(
                    sql.Identifier(column)
                ),
                (value, tenant),
            )
            with pytest.raises(AssertionError, match="secret plan"):
                audit_receipts(conn)
            conn.rollback()
    secret = receipt_secret(pool, tenant)
    assert owner_key(tenant, "subject", "Mira", secret=secret) == owner_key(
        tenant, "subject", "mira", secret=secret
    )


def test_a_context_call_and_its_receipts_commit_together_or_not_at_all(
    http: Client, pool: ConnectionPool, seeded: ApiTenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The receipts are written in the snapshot's transaction: a failure after them fails the
    # call, and no receipt of it (nor its decision) remains.
    leave = receipts_module.leave_receipts

    def then_fail(conn: psycopg.Connection[Any], *args: Any, **kwargs: Any) -> None:
        leave(conn, *args, **kwargs)
        conn.execute("SELECT 1 / 0")

    monkeypatch.setattr(snapshot_module, "leave_receipts", then_fail)
    decision = str(uuid4())
    question = {"question": "Where does Mira live?", "subject": "mira"}
    failed = http.post("/v1/context", json=question, headers=_headers(seeded, decision))
    assert failed.status_code >= 400, failed.text
    monkeypatch.setattr(snapshot_module, "leave_receipts", leave)
    assert [row for row in _rows(pool, seeded.name) if row[0] == "read"] == []
    missing = http.get(f"/v1/decisions/{decision}/receipts", headers=seeded.headers)
    assert_problem(missing, 404, "not_found", field="decision_id")
    answered = http.post("/v1/context", json=question, headers=_headers(seeded, decision))
    assert answered.status_code == 200, answered.text
    assert http.get(f"/v1/decisions/{decision}/receipts", headers=seeded.headers).json()["receipts"]


def test_erasing_a_thread_takes_its_checkpoints_and_receipts_and_leaves_a_tombstone(
    http: Client, pool: ConnectionPool, seeded: ApiTenant
) -> None:
    for goal in ("goal-1", "goal-2"):
        written = http.put(
            "/v1/threads/t-9/checkpoint", json={"active_goal_id": goal}, headers=_headers(seeded)
        )
        assert written.status_code == 200, written.text
    read = http.get("/v1/threads/t-9/checkpoint", headers=_headers(seeded, str(uuid4())))
    assert read.status_code == 200, read.text
    thread_key = memory_key("working", "t-9", secret=receipt_secret(pool, seeded.name))
    assert sum(key == thread_key for _, _, key, *_ in _rows(pool, seeded.name)) == 3
    other = make_tenant(http, "receipts-thread")
    assert_problem(
        http.delete("/v1/threads/t-9", headers=other.headers), 404, "not_found", field="thread_id"
    )
    erased = http.delete("/v1/threads/t-9", headers=seeded.headers)
    assert erased.status_code == 200, erased.text
    assert erased.json()["checkpoints_deleted"] == 2
    assert [key for _, _, key, *_ in _rows(pool, seeded.name) if key == thread_key] == []
    gone = http.get("/v1/threads/t-9/checkpoint", headers=seeded.headers)
    assert_problem(gone, 404, "not_found", field="thread_id")
    with owner_connection(pool) as conn:
        tombstone = conn.execute(
            "SELECT target, checkpoints_deleted, episodes_deleted FROM tombstones"
            " WHERE tenant_id = %s AND tombstone_id = %s",
            (seeded.name, erased.json()["tombstone_id"]),
        ).fetchone()
    assert tombstone == ("thread", 2, 0)
    assert_problem(
        http.delete("/v1/threads/t-9", headers=seeded.headers), 404, "not_found", field="thread_id"
    )
