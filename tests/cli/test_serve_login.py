"""``sgam serve`` refuses, before any worker starts, a pool login that could leave row-level
security: one superuser ``DATABASE_URL`` without SGAM_APP_DATABASE_URL, unless a setting says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from typer.testing import CliRunner

from server.cli import app
from store.db.database import temporary_database
from store.db.migrate import migrate_database
from tests.conftest import app_url

runner = CliRunner()


@dataclass
class Served:
    """The database DATABASE_URL names (as the cluster's superuser), and the workers' starts."""

    conninfo: str
    started: list[str] = field(default_factory=list)


@pytest.fixture
def served(server_conninfo: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    """A migrated database as DATABASE_URL; ``uvicorn.run`` only counts the workers' starts."""
    with temporary_database(server_conninfo) as conninfo:
        migrate_database(conninfo)
        monkeypatch.setenv("DATABASE_URL", conninfo)
        served = Served(conninfo)
        monkeypatch.setattr("uvicorn.run", lambda *_, **__: served.started.append("workers"))
        yield served


def test_one_superuser_url_is_refused_in_one_line_before_any_worker(served: Served) -> None:
    refused = runner.invoke(app, ["serve", "--port", "1"], terminal_width=400)
    assert refused.exit_code == 1, refused.output
    [line] = refused.output.splitlines()
    assert line.startswith("error: DATABASE_URL logs in as the superuser postgres")
    assert "SGAM_ALLOW_SUPERUSER_DATABASE_URL=true" in line
    assert served.started == []


def test_the_setting_or_an_app_url_lets_it_serve(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SGAM_ALLOW_SUPERUSER_DATABASE_URL", "true")
    allowed = runner.invoke(app, ["serve", "--port", "1"])
    assert allowed.exit_code == 0, allowed.output
    monkeypatch.delenv("SGAM_ALLOW_SUPERUSER_DATABASE_URL")
    monkeypatch.setenv("SGAM_APP_DATABASE_URL", app_url(served.conninfo))
    walled = runner.invoke(app, ["serve", "--port", "1"])
    assert walled.exit_code == 0, walled.output
    assert served.started == ["workers", "workers"]
