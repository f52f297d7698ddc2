"""The database runtime: the embedded server keeps its data, external servers are checked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from store.db.database import check_server, server_problems
from store.db.migrate import available_migrations
from store.errors import DatabaseUnavailable


def _sgam(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env["SGAM_DATA_DIR"] = str(data_dir)
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_the_embedded_database_survives_a_restart(tmp_path: Path) -> None:
    """Two processes on one data folder: the second finds the first one's migrations."""
    data_dir = tmp_path / "data" / "postgres"
    first = _sgam("migrate", data_dir=data_dir)
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines() == [
        f"applied {m.version:04d}_{m.name}" for m in available_migrations()
    ]
    assert (data_dir / "PG_VERSION").read_text().strip() == "18"
    second = _sgam("migrate", data_dir=data_dir)
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines() == ["no pending migrations"]


def test_the_session_server_passes_the_external_server_check(server_conninfo: str) -> None:
    check_server(server_conninfo)


def test_an_unreachable_server_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DatabaseUnavailable, match="cannot connect to the database"):
        check_server(f"postgresql://nobody@/postgres?host={tmp_path}&connect_timeout=2")


def test_a_server_without_the_extensions_is_refused_saying_which() -> None:
    every = {"vector": "0.8.6", "btree_gist": "1.8", "btree_gin": "1.3"}
    assert server_problems(180006, every) == []
    assert server_problems(150004, {"vector": "0.7.4"}) == [
        "PostgreSQL 16 or newer is required (server is 15)",
        "pgvector 0.8 or newer is required (server has 0.7.4)",
        "the btree_gist extension is not installed on the server",
        "the btree_gin extension is not installed on the server",
    ]
    assert server_problems(170000, {"btree_gist": "1.7", "btree_gin": "1.3"}) == [
        "the pgvector extension ('vector') is not installed on the server"
    ]
    assert server_problems(170000, {"vector": "0.8.1", "btree_gist": "1.7"}) == [
        "the btree_gin extension is not installed on the server"
    ]
