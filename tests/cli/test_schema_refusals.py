"""Only ``sgam migrate`` and ``sgam serve``'s start change the schema.

Every other command refuses a database whose schema is behind (pending migrations) or ahead
(versions this code does not know), names the versions and what to run, and changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from litestar.testing import TestClient
from typer.testing import CliRunner

from retrieval.search.embeddings import Embedder
from server.app import create_app
from server.cli import app
from server.settings import Settings
from store.db.database import temporary_database
from store.db.migrate import applied_versions, available_migrations, migrate_database
from tests.conftest import app_url

runner = CliRunner()
LATEST = available_migrations()[-1]
BEHIND = f"migrations {LATEST.version:04d}_{LATEST.name} are pending; run `sgam migrate`"


@pytest.fixture
def behind(server_conninfo: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A database one migration behind this code, with the CLI pointed at it."""
    with temporary_database(server_conninfo) as info:
        migrate_database(info, target=LATEST.version - 1)
        monkeypatch.setenv("DATABASE_URL", info)
        yield info


def _state(conninfo: str) -> tuple[set[int], list[Any]]:
    """The versions recorded and the tenants: what a refused command must leave as it was."""
    with psycopg.connect(conninfo) as conn:
        return applied_versions(conn), conn.execute("SELECT * FROM tenants").fetchall()


def test_admin_import_and_reembed_refuse_a_schema_behind_and_change_nothing(
    behind: str, tmp_path: Path
) -> None:
    before = _state(behind)
    episodes = tmp_path / "episodes.jsonl"
    episodes.write_text('{"tenant": "acme", "id": "e1", "text": "hi", "updates": []}\n')
    for command in (
        ["tenant", "create", "acme"],
        ["key", "create", "acme"],
        ["import", str(episodes), "--no-embed"],
        ["reembed"],
    ):
        refused = runner.invoke(app, command, terminal_width=400)
        assert refused.exit_code == 1, (command, refused.output)
        assert "error: the database schema is behind this version of sgam" in refused.output
        assert BEHIND in refused.output, command
    assert _state(behind) == before

    migrated = runner.invoke(app, ["migrate"])
    assert migrated.output == f"applied {LATEST.version:04d}_{LATEST.name}\n"
    created = runner.invoke(app, ["tenant", "create", "acme"])
    assert created.exit_code == 0, created.output


def test_a_blank_database_is_refused_with_every_migration_named(
    server_conninfo: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with temporary_database(server_conninfo) as blank:
        monkeypatch.setenv("DATABASE_URL", blank)
        refused = runner.invoke(app, ["tenant", "create", "acme"], terminal_width=400)
        with psycopg.connect(blank) as conn:
            tables = conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
            assert tables.fetchone() == (0,)
    assert refused.exit_code == 1
    names = ", ".join(f"{m.version:04d}_{m.name}" for m in available_migrations())
    assert f"migrations {names} are pending" in refused.output


def test_a_schema_ahead_is_refused_by_every_command_and_by_migrate(
    behind: str,
) -> None:
    migrate_database(behind)
    with psycopg.connect(behind) as conn:
        conn.execute(
            "INSERT INTO schema_migrations (version, name) VALUES (%(v)s, 'from_a_newer_release')",
            {"v": LATEST.version + 1},
        )
    before = _state(behind)
    for command in (["tenant", "create", "acme"], ["migrate"], ["reembed"]):
        refused = runner.invoke(app, command, terminal_width=400)
        assert refused.exit_code == 1, (command, refused.output)
        assert (
            "error: the database schema is ahead of this version of sgam: it records migrations"
            f" {LATEST.version + 1:04d}, which this version does not know"
        ) in refused.output
    assert _state(behind) == before


@pytest.mark.parametrize("migrate_on_start", [False, True])
def test_serve_migrates_before_its_workers_only_when_allowed(
    behind: str, monkeypatch: pytest.MonkeyPatch, migrate_on_start: bool
) -> None:
    monkeypatch.setenv("SGAM_MIGRATE_ON_START", str(migrate_on_start).lower())
    monkeypatch.setenv("SGAM_APP_DATABASE_URL", app_url(behind))
    seen: list[set[int]] = []

    def run(*_: object, **__: object) -> None:  # uvicorn.run: the workers would start here
        seen.append(_state(behind)[0])

    monkeypatch.setattr("uvicorn.run", run)
    served = runner.invoke(app, ["serve", "--port", "1"])
    assert served.exit_code == 0, served.output
    expected = {m.version for m in available_migrations()}
    assert seen == [expected if migrate_on_start else expected - {LATEST.version}]


def test_the_app_itself_never_migrates(behind: str, embedder: Embedder) -> None:
    """A worker started by a process manager, migrate_on_start left on: /readyz says 503."""
    before = _state(behind)
    settings = Settings(
        database_url=behind, app_database_url=app_url(behind), migrate_on_start=True
    )
    with TestClient(create_app(settings, embedder=embedder)) as client:
        ready = client.get("/readyz")
    assert (ready.status_code, ready.json()["migrations_pending"]) == (503, 1)
    assert _state(behind) == before
