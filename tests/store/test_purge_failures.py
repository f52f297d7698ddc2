"""A purge that fails for one tenant goes on with the others, and says so.

The failure is the database's own: a trigger (the test's, as the tables' owner) refuses to delete
one tenant's fact versions with the SQLSTATE of "out of shared memory", as a lock table filled by
that tenant's purge once did. That tenant's purge rolls back whole; every other tenant is purged;
the report lists the failure, the server's purger counts and logs it, and ``sgam purge`` exits 1.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta

import pytest
from prometheus_client import REGISTRY
from psycopg import sql
from psycopg_pool import ConnectionPool
from typer.testing import CliRunner

from server.cli import app
from server.runtime.purger import purge_once
from store.contract.governance import TenantPurgeFailure
from store.db.clock import ManualClock
from store.service import MemoryStore
from tests.conftest import ts
from tests.helpers import assert_value, declare, owner_connection, record

T0 = ts("2026-06-01T00:00:00Z")
KEEP_RECEIPTS = timedelta(days=90)

_REFUSE = """
CREATE FUNCTION refuse_purge() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'out of shared memory' USING ERRCODE = '53200';
END $$;
CREATE TRIGGER refuse_purge BEFORE DELETE ON fact_versions FOR EACH ROW
    WHEN (OLD.tenant_id = {tenant}) EXECUTE FUNCTION refuse_purge();
"""


def _ended_mood(store: MemoryStore, clock: ManualClock, tenant: str) -> None:
    """``mood`` (ephemeral): happy from T0, sad from an hour later; happy's versions can go
    (the one sad closed, and the open one it retired)."""
    clock.set(T0)
    declare(store, tenant, "mood", "string", retention_class="ephemeral")
    record(store, tenant, "e1", "2026-06-01T00:00:00Z")
    assert_value(store, tenant, "e1", "happy", "2026-06-01T00:00:00Z", attribute="mood")
    assert_value(store, tenant, "e1", "sad", "2026-06-01T01:00:00Z", attribute="mood")


def _versions(pool: ConnectionPool, tenant: str) -> int:
    with owner_connection(pool) as conn:
        row = conn.execute("SELECT count(*) FROM fact_versions WHERE tenant_id = %s", (tenant,))
        return int(row.fetchone()[0])  # type: ignore[index]


@pytest.fixture
def doomed(
    pool: ConnectionPool, clock: ManualClock, store: MemoryStore, tenant: str
) -> Iterator[str]:
    """A tenant with a version to purge whose purge the database refuses."""
    _ended_mood(store, clock, tenant)
    with owner_connection(pool) as conn:
        conn.execute(sql.SQL(_REFUSE).format(tenant=sql.Literal(tenant)))
        conn.commit()
    yield tenant
    with owner_connection(pool) as conn:
        conn.execute("DROP TRIGGER refuse_purge ON fact_versions; DROP FUNCTION refuse_purge()")
        conn.commit()


@pytest.fixture
def fine(clock: ManualClock, store: MemoryStore, doomed: str) -> str:
    """A tenant purged after the doomed one, with a version to purge."""
    name = f"zz-{doomed}"
    store.admin.create_tenant(name)
    _ended_mood(store, clock, name)
    return name


def test_a_tenant_whose_purge_fails_is_reported_and_the_others_are_purged(
    pool: ConnectionPool, clock: ManualClock, store: MemoryStore, doomed: str, fine: str
) -> None:
    clock.set(T0 + timedelta(days=3))
    before = _versions(pool, doomed)
    report = store.retention.purge(receipt_retention=KEEP_RECEIPTS)
    assert report is not None
    assert report.failed == [
        TenantPurgeFailure(
            tenant_id=doomed,
            code="unavailable",
            detail=report.failed[0].detail,
        )
    ]
    assert "out of shared memory" in report.failed[0].detail
    [purged] = [counts for counts in report.tenants if counts.tenant_id == fine]
    assert (purged.fact_versions_deleted, purged.facts_purged) == (2, 1)  # happy, whole
    assert doomed not in {counts.tenant_id for counts in report.tenants}
    assert _versions(pool, doomed) == before


def test_the_servers_purger_counts_a_failed_tenant(
    clock: ManualClock, store: MemoryStore, doomed: str, fine: str
) -> None:
    clock.set(T0 + timedelta(days=3))
    labels = {"code": "unavailable"}
    counted = REGISTRY.get_sample_value("sgam_purge_tenant_failures_total", labels) or 0.0
    report = purge_once(store, receipt_retention=KEEP_RECEIPTS)
    assert report is not None
    assert [failure.tenant_id for failure in report.failed] == [doomed]
    assert REGISTRY.get_sample_value("sgam_purge_tenant_failures_total", labels) == counted + 1


def test_sgam_purge_names_a_failed_tenant_and_exits_1(
    conninfo: str, monkeypatch: pytest.MonkeyPatch, pool: ConnectionPool, doomed: str, fine: str
) -> None:
    monkeypatch.setenv("DATABASE_URL", conninfo)
    result = CliRunner().invoke(app, ["purge"])  # the wall clock: months after T0
    assert result.exit_code == 1, result.output
    assert re.search(
        rf"^error: tenant {doomed} was not purged: .*out of shared memory",
        result.output,
        flags=re.MULTILINE,
    )
    assert re.search(rf"^deleted {fine}: ", result.output, flags=re.MULTILINE)
    assert _versions(pool, fine) == 1  # sad's
