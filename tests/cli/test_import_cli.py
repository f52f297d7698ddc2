"""``sgam import``: the command reports counts and refusals by line, and writes all or nothing."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from typer.testing import CliRunner

from server.cli import app
from store.db.clock import ManualClock
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
