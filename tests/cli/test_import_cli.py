"""``sgam import``: the command reports counts and refusals by line, and writes all or nothing."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from typer.testing import CliRunner

from server.cli import app
from store.db.clock import ManualClock
from store.db.database import make_pool, temporary_database
from store.db.migrate import migrate_database
from store.service import MemoryStore
from tests.conftest import ts
from tests.store.test_import import HISTORY, import_text, new_tenant


@pytest.fixture
def clock() -> ManualClock:
    """One system time for the import."""
    return ManualClock(ts("2026-06-10T00:00:00Z"))


def test_sgam_import_reports_counts_and_refusals_by_line(
    store: MemoryStore, conninfo: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_URL", conninfo)
    tenant = new_tenant(store, "cli")
    good = tmp_path / "history.jsonl"
    good.write_text("\n".join(import_text(tenant, HISTORY[:3])) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["import", str(good), "--no-embed"])
    assert result.exit_code == 0, result.output
    assert "imported 3 lines in" in result.output
    assert "3 new episodes; candidates: 1 ignored, 3 invalid, 2 unchanged, 6 written" in (
        result.output
    )
    assert "line 3, candidate 1: invalid (attribute): attribute 'nope' is not declared" in (
        result.output
    )
    bad = tmp_path / "bad.jsonl"
    bad.write_text(import_text(tenant, HISTORY[3:4])[0] + "\n{oops\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["import", str(bad), "--no-embed"])
    assert result.exit_code == 1
    assert "error: line 2: not JSON" in result.output
    with psycopg.connect(conninfo) as conn:
        found = conn.execute(
            "SELECT count(*) FROM episodes WHERE tenant_id = %s AND id = 'e3'", [tenant]
        ).fetchone()
    assert found == (0,)


def test_sgam_import_analyzes_the_tables_it_filled(
    server_conninfo: str, clock: ManualClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The planner knows at once what arrived: each table the import filled has statistics,
    where autovacuum would have analyzed them a minute later, or never."""
    filled = ["episodes", "episode_subjects", "fact_versions", "subject_names"]
    analyzed = "SELECT relname FROM pg_class WHERE relname = ANY(%s) AND reltuples >= 0"
    with temporary_database(server_conninfo) as conninfo:
        migrate_database(conninfo)
        with psycopg.connect(conninfo, autocommit=True) as conn:
            for table in filled:
                conn.execute(f"ALTER TABLE {table} SET (autovacuum_enabled = false)")
            assert conn.execute(analyzed, [filled]).fetchall() == []  # never analyzed
        with make_pool(conninfo, max_size=2) as pool:
            tenant = new_tenant(MemoryStore(pool, clock=clock), "analyzed")
        history = tmp_path / "history.jsonl"
        history.write_text("\n".join(import_text(tenant, HISTORY)) + "\n", encoding="utf-8")
        monkeypatch.setenv("DATABASE_URL", conninfo)
        result = CliRunner().invoke(app, ["import", str(history), "--no-embed"])
        assert result.exit_code == 0, result.output
        with psycopg.connect(conninfo) as conn:
            assert sorted(row[0] for row in conn.execute(analyzed, [filled])) == sorted(filled)
