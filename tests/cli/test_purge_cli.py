"""``sgam purge`` on a real database: a dry run counts and keeps, a run deletes, one at a time."""

from __future__ import annotations

import re

import pytest
from psycopg_pool import ConnectionPool
from typer.testing import CliRunner

from server.cli import app
from store.api.retention import PURGE_LOCK
from store.db.clock import ManualClock
from store.errors import NotFound
from store.service import MemoryStore
from tests.helpers import owner_connection
from tests.retention_helpers import LengthModel, build_world, snapshot

runner = CliRunner()


@pytest.fixture
def database(conninfo: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The CLI pointed at the module's migrated database."""
    monkeypatch.setenv("DATABASE_URL", conninfo)
    return conninfo


def test_purge_dry_run_counts_without_deleting_and_purge_deletes(
    database: str, pool: ConnectionPool, clock: ManualClock, tenant: str
) -> None:
    store = MemoryStore(pool, clock=clock, embedder=LengthModel())
    build_world(store, clock, tenant)  # months before the wall clock the command reads
    before = snapshot(pool)
    dry = runner.invoke(app, ["purge", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert re.search(rf"^would delete {tenant}: \d+ episodes", dry.output, flags=re.MULTILINE)
    assert dry.output.endswith("dry run: nothing was deleted\n")
    assert snapshot(pool) == before

    done = runner.invoke(app, ["purge"])
    assert done.exit_code == 0, done.output
    [line] = [line for line in done.output.splitlines() if line.startswith(f"deleted {tenant}:")]
    assert line == re.sub(r"^would delete", "deleted", _line_of(dry.output, tenant))
    with pytest.raises(NotFound):
        store.episodes.get(tenant, "e2")


def _line_of(output: str, tenant: str) -> str:
    [line] = [line for line in output.splitlines() if line.startswith(f"would delete {tenant}:")]
    return line


def test_purge_exits_3_while_another_purge_holds_the_lock(
    database: str, pool: ConnectionPool
) -> None:
    with owner_connection(pool) as other:
        other.autocommit = True
        other.execute("SELECT pg_advisory_lock(%s, %s)", PURGE_LOCK)
        try:
            busy = runner.invoke(app, ["purge"])
        finally:
            other.execute("SELECT pg_advisory_unlock(%s, %s)", PURGE_LOCK)
    assert busy.exit_code == 3
    assert "another purge is running" in busy.output


def test_receipts_purge_still_runs_on_its_own(database: str) -> None:
    result = runner.invoke(app, ["receipts", "purge", "--days", "30"])
    assert result.exit_code == 0, result.output
    assert re.fullmatch(r"deleted \d+ receipts older than 30 days\n", result.output)
