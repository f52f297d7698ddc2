"""A failing command says so in one line, ``error: ...``, with exit code 2 for usage and 1 for
failure; ``--debug`` shows the traceback. ``sgam serve`` checks its port before the database."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from server.commands.failures import split_debug

pytestmark = [pytest.mark.cli, pytest.mark.slow]


def _sgam(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--bogus"], "error: No such option: --bogus (see 'sgam --help')"),
        (
            ["tenant", "create"],
            "error: Missing argument 'tenant_id'. (see 'sgam tenant create --help')",
        ),
        (["tenant"], "error: Missing command. (see 'sgam tenant --help')"),
    ],
)
def test_a_usage_error_is_one_line_and_exit_code_2(args: list[str], line: str) -> None:
    done = _sgam(*args)
    assert (done.returncode, done.stderr.splitlines()) == (2, [line])


def test_a_database_that_cannot_be_reached_is_one_line_and_exit_code_1(closed_port: int) -> None:
    url = f"postgresql://nobody@127.0.0.1:{closed_port}/sgam"
    done = _sgam("migrate", DATABASE_URL=url)
    [line] = done.stderr.splitlines()
    assert done.returncode == 1
    assert line.startswith("error: cannot connect to the database: ")
    assert line.endswith(" (--debug shows the traceback)")
    debugged = _sgam("migrate", "--debug", DATABASE_URL=url)
    assert debugged.returncode == 1
    assert "Traceback" in debugged.stderr
    assert "DatabaseUnavailable" in debugged.stderr


def test_serve_on_a_listening_port_fails_before_the_database_and_prints_no_key(
    listening_port: int, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    done = _sgam("serve", "--port", str(listening_port), SGAM_DATA_DIR=str(data_dir))
    assert done.returncode == 1
    refused = f"port {listening_port} on 127.0.0.1 is in use (another server?); choose another"
    assert done.stderr.splitlines() == [f"error: {refused} with --port or SGAM_PORT"]
    assert done.stdout == ""
    assert not data_dir.exists()  # no database started, no tenant, no key


@pytest.mark.parametrize(
    ("args", "kept", "debug"),
    [
        (["migrate", "--debug"], ["migrate"], True),
        (["--debug", "tenant", "list"], ["tenant", "list"], True),
        (["replay", "--", "--debug"], ["replay", "--", "--debug"], False),
        (["migrate"], ["migrate"], False),
    ],
)
def test_debug_is_taken_from_anywhere_before_a_double_dash(
    args: list[str], kept: list[str], debug: bool
) -> None:
    assert split_debug(args) == (kept, debug)
