"""The embedded PostgreSQL's shared buffers: set at once on a new cluster, at the next start on
an existing one, never a bad size."""

from __future__ import annotations

import logging
from pathlib import Path

import psycopg
import pytest
from pydantic import ValidationError

from server.settings import Settings
from store.db.database import embedded_database
from store.db.tuning import EMBEDDED_SHARED_BUFFERS, check_size


def _shared_buffers(conninfo: str) -> str:
    with psycopg.connect(conninfo) as conn:
        row = conn.execute("SHOW shared_buffers").fetchone()
    assert row is not None
    return str(row[0])


def test_a_new_cluster_has_its_buffers_at_once_and_an_existing_one_at_its_next_start(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data_dir = tmp_path / "pg"
    with embedded_database(data_dir, shared_buffers="144MB") as conninfo:
        assert _shared_buffers(conninfo) == "144MB"
        with psycopg.connect(conninfo) as conn:  # the roles were made after the restart
            assert conn.execute("SELECT current_user").fetchone() == ("sgam_owner",)

    with (
        caplog.at_level(logging.INFO, logger="sgam.database"),
        embedded_database(data_dir, shared_buffers="160MB") as conninfo,
    ):
        # Not restarted under whoever else may use it: the new size waits for the next start.
        assert _shared_buffers(conninfo) == "144MB"
    assert "shared buffers become 160MB at its next start" in caplog.text

    with embedded_database(data_dir, shared_buffers="160MB") as conninfo:
        assert _shared_buffers(conninfo) == "160MB"


@pytest.mark.parametrize("size", ["512", "0MB", "1TB", "512 MB", "big", "5MB; DROP TABLE x"])
def test_a_size_postgresql_would_not_read_is_refused(
    size: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ValueError, match="is not a size"):
        check_size(size)
    monkeypatch.setenv("SGAM_EMBEDDED_SHARED_BUFFERS", size)
    with pytest.raises(ValidationError, match="embedded_shared_buffers"):
        Settings()


def test_the_default_is_a_size_the_settings_take(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SGAM_EMBEDDED_SHARED_BUFFERS", raising=False)
    assert Settings().embedded_shared_buffers == EMBEDDED_SHARED_BUFFERS == check_size("512MB")
