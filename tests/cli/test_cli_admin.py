"""``sgam tenant`` and ``sgam key`` on a real database, and the help a newcomer reads."""

from __future__ import annotations

import re

import psycopg
import pytest
from typer.testing import CliRunner

from server.cli import app
from server.runtime.bootstrap import prepare_database
from store.db.database import temporary_database
from store.db.migrate import available_migrations, pending_migrations
from store.service import MemoryStore

runner = CliRunner()


@pytest.fixture
def database(conninfo: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The CLI pointed at the module's migrated database."""
    monkeypatch.setenv("DATABASE_URL", conninfo)
    return conninfo


def test_top_level_help_names_every_command() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ("serve", "migrate", "tenant", "key", "replay", "reembed"):
        assert re.search(rf"^\W*{command}\b", result.output, flags=re.MULTILINE), command


def test_serve_help_documents_host_port_workers_and_the_embedded_default() -> None:
    result = runner.invoke(app, ["serve", "--help"], terminal_width=200)
    assert result.exit_code == 0
    for option, variable in (
        ("--host", "SGAM_HOST"),
        ("--port", "SGAM_PORT"),
        ("--workers", "SGAM_WORKERS"),
    ):
        assert option in result.output
        assert f"(env {variable}, default" in result.output
    assert "embedded PostgreSQL" in result.output
    assert "default tenant" in result.output


def test_tenant_create_prints_a_working_key_once(database: str, store: MemoryStore) -> None:
    result = runner.invoke(app, ["tenant", "create", "cli-acme"])
    assert result.exit_code == 0, result.output
    [key_id] = re.findall(r"^key_id:\s+(\S+)$", result.output, flags=re.MULTILINE)
    [api_key] = re.findall(r"^api_key:\s+(\S+)", result.output, flags=re.MULTILINE)
    assert store.admin.authenticate(api_key) == "cli-acme"
    assert api_key.startswith(f"sgam_{key_id.replace('-', '')}_")


def test_key_create_and_revoke(database: str, store: MemoryStore) -> None:
    store.admin.create_tenant("cli-beta")
    created = runner.invoke(app, ["key", "create", "cli-beta"])
    assert created.exit_code == 0, created.output
    [key_id] = re.findall(r"^key_id:\s+(\S+)$", created.output, flags=re.MULTILINE)
    [api_key] = re.findall(r"^api_key:\s+(\S+)", created.output, flags=re.MULTILINE)
    assert store.admin.authenticate(api_key) == "cli-beta"

    revoked = runner.invoke(app, ["key", "revoke", key_id])
    assert revoked.exit_code == 0, revoked.output
    assert f"key {key_id} of tenant cli-beta revoked" in revoked.output
    assert store.admin.authenticate(api_key) is None


def test_admin_commands_fail_clearly_and_change_nothing(database: str, store: MemoryStore) -> None:
    store.admin.create_tenant("cli-gamma")
    again = runner.invoke(app, ["tenant", "create", "cli-gamma"])
    assert again.exit_code == 1
    assert "error:" in again.output
    assert store.admin.list_api_keys("cli-gamma") == []

    unknown = runner.invoke(app, ["key", "create", "no-such-tenant"])
    assert unknown.exit_code == 1
    assert "error:" in unknown.output

    bad = runner.invoke(app, ["key", "revoke", "not-a-uuid"])
    assert bad.exit_code == 1
    assert "key_id" in bad.output


def test_tenant_settings_are_shown_set_and_refused_clearly(
    database: str, store: MemoryStore
) -> None:
    created = runner.invoke(
        app,
        ["tenant", "create", "cli-delta", "--no-with-key", "--on-unverified-evidence", "refuse"],
    )
    assert created.exit_code == 0, created.output
    assert store.admin.unverified_evidence("cli-delta") == "refuse"

    shown = runner.invoke(app, ["tenant", "show", "cli-delta"])
    assert (shown.exit_code, shown.output) == (
        0,
        "tenant cli-delta\non_unverified_evidence: refuse\n",
    )
    changed = runner.invoke(
        app, ["tenant", "set", "cli-delta", "--on-unverified-evidence", "accept"]
    )
    assert (changed.exit_code, changed.output) == (
        0,
        "tenant cli-delta\non_unverified_evidence: accept\n",
    )
    assert store.admin.unverified_evidence("cli-delta") == "accept"

    # A value typer does not know is its usage error; a missing tenant is one line, exit 1.
    wrong = runner.invoke(app, ["tenant", "set", "cli-delta", "--on-unverified-evidence", "maybe"])
    assert wrong.exit_code == 2
    assert store.admin.unverified_evidence("cli-delta") == "accept"
    for command in ("show", "set"):
        args = ["tenant", command, "no-such-tenant"]
        if command == "set":
            args += ["--on-unverified-evidence", "refuse"]
        missing = runner.invoke(app, args)
        assert missing.exit_code == 1, missing.output
        assert missing.output.splitlines() == [
            "error: tenant 'no-such-tenant' does not exist (field tenant_id)"
        ]


def test_serve_preparation_respects_migrate_on_start(server_conninfo: str) -> None:
    with temporary_database(server_conninfo) as blank:
        held_back = prepare_database(blank, apply_migrations=False, create_default_tenant=True)
        assert (held_back.migrations_applied, held_back.first_key) == (0, None)
        with psycopg.connect(blank) as conn:
            assert len(pending_migrations(conn)) == len(available_migrations())

        first = prepare_database(blank, apply_migrations=True, create_default_tenant=True)
        assert first.migrations_applied == len(available_migrations())
        assert first.first_key is not None
        assert first.first_key.tenant_id == "default"
        again = prepare_database(blank, apply_migrations=True, create_default_tenant=True)
        assert (again.migrations_applied, again.first_key) == (0, None)
