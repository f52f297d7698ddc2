"""Receipts are hashed with a per-tenant secret, which rotates without breaking comparisons.

Holding receipts is not enough to confirm a guessed subject: their hashes are HMACs under the
tenant's secret, not plain SHA-256 of the names. Each receipt names its secret's version, so the
classifier still judges receipts made before a rotation, and erasure still finds them.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta
from uuid import UUID, uuid4

import pytest
from psycopg_pool import ConnectionPool
from typer.testing import CliRunner

from retrieval.memory_health.classifier import classify_all
from server.cli import app
from store.contract.health import Expectation, SemanticMemory
from store.contract.receipts import memory_key, owner_key, scope_hash
from store.db.clock import ManualClock
from store.governance.receipts import Trace
from store.service import MemoryStore
from tests.conftest import ts
from tests.helpers import assert_value, declare, owner_connection, receipt_secret, record

T0 = ts("2026-06-01T00:00:00Z")
CITY = SemanticMemory(type="semantic", subject="mira", attribute="city")


def _plain(*parts: str) -> str:
    """A hash as receipts made one before secrets: anyone can compute it from a guess."""
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]


def _receipts(pool: ConnectionPool, tenant: str) -> list[tuple[str, str, str, str, int]]:
    with owner_connection(pool) as conn:
        return conn.execute(
            "SELECT action, memory_key, owner_key, observed_scope_hash, secret_version"
            " FROM receipts WHERE tenant_id = %s AND memory_type = 'semantic'"
            " ORDER BY recorded_at, action",
            (tenant,),
        ).fetchall()


def _read(store: MemoryStore, tenant: str) -> UUID:
    """A read of mira's city for a new decision; the decision."""
    decision = uuid4()
    store.facts.at(tenant, "mira", "city", trace=Trace(decision_id=decision))
    return decision


@pytest.fixture
def lived(store: MemoryStore, clock: ManualClock, tenant: str) -> str:
    """Mira's city written once, in a tenant of its own."""
    clock.set(T0)
    declare(store, tenant, "city", "string")
    record(store, tenant, "e1", "2026-06-01T00:00:00Z", text="Mira lives in Oslo.")
    assert assert_value(store, tenant, "e1", "Oslo", attribute="city").status == "written"
    return tenant


def test_a_receipts_hashes_cannot_be_confirmed_without_the_tenants_secret(
    pool: ConnectionPool, lived: str
) -> None:
    [(action, key, owner, scope, version)] = _receipts(pool, lived)
    assert (action, version) == ("write", 1)
    guessed = (
        _plain("sgam-memory/1", "semantic", "city"),
        _plain("sgam-owner/1", lived, "subject", "mira"),
        _plain("sgam-scope/1", lived, "subject", "mira", ""),
    )
    assert not {key, owner, scope} & set(guessed)
    secret = receipt_secret(pool, lived)
    assert len(secret) == 32
    assert (key, owner, scope) == (
        memory_key("semantic", "city", secret=secret),
        owner_key(lived, "subject", "mira", secret=secret),
        scope_hash(lived, "subject", "mira", None, secret=secret),
    )


def test_receipts_made_before_a_rotation_still_compare(
    pool: ConnectionPool, store: MemoryStore, clock: ManualClock, lived: str
) -> None:
    before = _read(store, lived)
    first = receipt_secret(pool, lived)
    clock.set(T0 + timedelta(hours=1))
    rotated = store.receipts.rotate_secret(lived)
    assert (rotated.tenant_id, rotated.secret_version, rotated.created_at) == (lived, 2, clock())
    assert receipt_secret(pool, lived) != first
    after = _read(store, lived)
    assert [row[-1] for row in _receipts(pool, lived)] == [1, 1, 2]  # write, read, read

    expectations = [Expectation(decision_id=d, memory=CITY) for d in (before, after)]
    evidence = store.receipts.evidence(lived, decision_ids=[before, after], memories=[CITY])
    assert sorted(evidence.keyring) == [0, 1, 2]
    verdicts = classify_all(expectations, evidence, tenant_id=lived)
    assert [(v.verdict, v.layer) for v in verdicts] == [("HEALTHY", "healthy")] * 2

    # Erasing mira finds her receipts whichever secret made them.
    store.erasure.erase_subject(lived, "mira")
    assert _receipts(pool, lived) == []


def test_sgam_receipts_rotate_secret_names_the_new_version(
    conninfo: str, monkeypatch: pytest.MonkeyPatch, pool: ConnectionPool, lived: str
) -> None:
    monkeypatch.setenv("DATABASE_URL", conninfo)
    first = receipt_secret(pool, lived)
    result = CliRunner().invoke(app, ["receipts", "rotate-secret", lived])
    assert result.exit_code == 0, result.output
    assert result.output == f"receipt secret of tenant {lived} is now version 2\n"
    assert receipt_secret(pool, lived) != first
    unknown = CliRunner().invoke(app, ["receipts", "rotate-secret", "no-such-tenant"])
    assert unknown.exit_code == 1, unknown.output
