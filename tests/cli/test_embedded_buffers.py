"""The embedded PostgreSQL's shared buffers: set at once when no other process uses the
database, else at its next start; never a size it could not start with."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
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


def test_the_size_applies_at_once_unless_another_process_uses_the_database(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data_dir = tmp_path / "pg"
    with embedded_database(data_dir, shared_buffers="144MB") as conninfo:
        assert _shared_buffers(conninfo) == "144MB"
        with psycopg.connect(conninfo) as conn:  # the roles were made after the restart
            assert conn.execute("SELECT current_user").fetchone() == ("sgam_owner",)

    with embedded_database(data_dir, shared_buffers="160MB") as conninfo:
        assert _shared_buffers(conninfo) == "160MB"  # its only user: restarted at once

    with _another_process_using(data_dir) as other:
        with (
            caplog.at_level(logging.INFO, logger="sgam.database"),
            embedded_database(data_dir, shared_buffers="176MB") as conninfo,
        ):
            # Not restarted under the other process: the size waits for the next start.
            assert _shared_buffers(conninfo) == "160MB"
            assert other.poll() is None
            _leave(other)  # this process is the last user now: it stops the server
        assert f"processes {other.pid} use it now" in caplog.text

    with embedded_database(data_dir, shared_buffers="176MB") as conninfo:
        assert _shared_buffers(conninfo) == "176MB"


@contextmanager
def _another_process_using(data_dir: Path) -> Iterator[subprocess.Popen[str]]:
    """A process attached to the data directory's database (as ``sgam tenant`` and the other
    commands attach) until the block ends."""
    code = (
        "import sys; from pathlib import Path; from store.db.database import start_embedded;"
        f" start_embedded(Path({str(data_dir)!r}), shared_buffers=None); print('up', flush=True);"
        " sys.stdin.read()"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "up"
        yield process
    finally:
        _leave(process)


def _leave(process: subprocess.Popen[str]) -> None:
    """Let the process end (it detaches from the database as it exits) and wait for it."""
    for stream in (process.stdin, process.stdout):
        if stream is not None and not stream.closed:
            stream.close()
    assert process.wait(60) == 0


@pytest.mark.parametrize(
    "size",
    ["512", "0MB", "1TB", "512 MB", "big", "5MB; DROP TABLE x", "512MB\n", "64kB", "9999GB"],
)
def test_a_size_postgresql_would_not_read_is_refused(
    size: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ValueError, match=r"is not a size|is less than|is more than half"):
        check_size(size)
    monkeypatch.setenv("SGAM_EMBEDDED_SHARED_BUFFERS", size)
    with pytest.raises(ValidationError, match="embedded_shared_buffers"):
        Settings()


def test_the_default_is_a_size_the_settings_take(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SGAM_EMBEDDED_SHARED_BUFFERS", raising=False)
    assert Settings().embedded_shared_buffers == EMBEDDED_SHARED_BUFFERS == check_size("512MB")
