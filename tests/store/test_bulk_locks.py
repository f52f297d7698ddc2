"""Bulk operations on a big tenant: their size is not bounded by PostgreSQL's lock table.

One tenant holds 50,000 keys (loaded by bulk import); a migration of the attribute they share and
a purge of the versions it retired, with their dry runs, succeed while another tenant keeps
writing, and none of that tenant's writes fails. Each key's lock, taken one by one in one
transaction, would pass the lock table's roughly ten thousand entries ("out of shared memory"),
and the other tenant's writes would fail with it.
"""

from __future__ import annotations

import json
import threading
from datetime import timedelta

from psycopg_pool import ConnectionPool

from store.db.clock import ManualClock
from store.service import MemoryStore
from tests.conftest import ts
from tests.helpers import assert_value, declare, owner_connection, record

KEYS = 50_000
PER_LINE = 500
T0 = ts("2026-06-01T00:00:00Z")


def _lines(tenant: str) -> list[str]:
    """Episodes of 500 subjects each: every subject's level is 1 from T0."""
    lines = []
    for first in range(0, KEYS, PER_LINE):
        updates = [
            {
                "evidence": "",
                "subject": f"s{n}",
                "attribute": "level",
                "change": "new",
                "value": "1",
                "valid_from": "2026-06-01T00:00:00Z",
            }
            for n in range(first, first + PER_LINE)
        ]
        episode = {
            "tenant": tenant,
            "id": f"e{first}",
            "occurred_at": "2026-06-01T00:00:00Z",
            "text": "levels",
            "updates": updates,
        }
        lines.append(json.dumps(episode))
    return lines


class _Writer(threading.Thread):
    """Another tenant's writes, one after another, until told to stop; the errors they met."""

    def __init__(self, store: MemoryStore, tenant: str) -> None:
        super().__init__()
        self.store, self.tenant = store, tenant
        self.stop, self.written, self.errors = threading.Event(), 0, list[BaseException]()

    def run(self) -> None:
        while not self.stop.is_set():
            episode = f"w{self.written}"
            try:
                record(self.store, self.tenant, episode, "2026-06-04T00:00:00Z")
                result = assert_value(self.store, self.tenant, episode, str(self.written),
                                      subject=f"w{self.written}", attribute="level")  # fmt: skip
                assert result.status == "written", result
            except BaseException as error:  # noqa: BLE001 - counted and reported by the test
                self.errors.append(error)
            self.written += 1


def test_a_big_tenants_purge_and_migration_fit_beside_another_tenants_writes(
    pool: ConnectionPool, clock: ManualClock
) -> None:
    store = MemoryStore(pool, clock=clock)
    big, other = "big-tenant", "busy-tenant"
    for tenant in (big, other):
        store.admin.create_tenant(tenant)
        declare(store, tenant, "level", "integer", retention_class="ephemeral")
    imported = store.episodes.import_lines(_lines(big))
    assert imported.candidates == {"written": KEYS}

    # The migration retires every key's version an hour in; two days later the purge (its
    # class keeps a day) deletes what it retired: 50,000 keys each time.
    writer = _Writer(store, other)
    writer.start()
    try:
        clock.set(T0 + timedelta(hours=1))
        change = {
            "value_type": "number",
            "description": "the level",
            "retention_class": "ephemeral",
        }
        planned = store.admin.migrate_attribute(big, "level", change, dry_run=True)
        migrated = store.admin.migrate_attribute(big, "level", change)
        clock.set(T0 + timedelta(days=3))
        keep = timedelta(days=90)
        would = store.retention.purge_tenant(big, receipt_retention=keep, dry_run=True)
        purged = store.retention.purge_tenant(big, receipt_retention=keep)
    finally:
        writer.stop.set()
        writer.join(timeout=60)

    assert (len(planned.converted), len(migrated.converted)) == (KEYS, KEYS)
    assert (planned.unconvertible, migrated.unconvertible) == ([], [])
    assert (would.fact_versions_deleted, purged.fact_versions_deleted) == (KEYS, KEYS)
    assert purged.model_dump(exclude={"tombstone_id"}) == would.model_dump(exclude={"tombstone_id"})
    assert writer.errors == []
    assert writer.written > 0
    with owner_connection(pool) as conn:
        left = conn.execute(
            "SELECT count(*), count(DISTINCT value), min(schema_version) FROM fact_versions"
            " WHERE tenant_id = %s AND retired_at IS NULL",
            (big,),
        ).fetchone()
    assert left == (KEYS, 1, 2)
