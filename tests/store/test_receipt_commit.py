"""A read's receipts commit without waiting for the disk; a write's receipts wait.

A read's transaction writes nothing but its receipts, which it may lose in a crash (never half
of them), so leaving them sets ``synchronous_commit = off`` for that transaction alone; a write
keeps the server's setting.
"""

from __future__ import annotations

from uuid import uuid4

import pytest
from psycopg_pool import ConnectionPool

from store.contract.receipts import ReceiptAction
from store.db.clock import ManualClock
from store.db.tenants import enter_tenant
from store.governance.receipts import NO_TRACE, Touched, Trace, leave_receipts

_CITY = Touched("semantic", "mira.city", "mira", "1", None, None, activated=True)


@pytest.mark.parametrize(("action", "setting"), [("read", "off"), ("write", "on")])
def test_only_a_reads_receipts_commit_without_waiting_for_the_disk(
    pool: ConnectionPool, clock: ManualClock, tenant: str, action: ReceiptAction, setting: str
) -> None:
    trace = Trace(decision_id=uuid4()) if action == "read" else NO_TRACE
    with pool.connection() as conn, conn.transaction():
        enter_tenant(conn, tenant)
        leave_receipts(conn, tenant, [_CITY], action=action, trace=trace, now=clock())
        assert conn.execute("SHOW synchronous_commit").fetchone() == (setting,)
        left = conn.execute("SELECT action FROM receipts WHERE tenant_id = %s", (tenant,))
        assert left.fetchall() == [(action,)]
    with pool.connection() as conn:  # the transaction's setting only
        assert conn.execute("SHOW synchronous_commit").fetchone() == ("on",)
