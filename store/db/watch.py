"""Whether the database answers, known without asking it on a request's path.

A ``DatabaseWatch`` thread keeps one connection of its own and sends it ``SELECT 1`` every
``interval_s``. A killed PostgreSQL ends every backend, so the next ping fails and the watch
says down at once; it then reconnects every ``interval_s`` until the database answers again,
and hands the recovery to ``on_recovery`` (the pool replaces its lost connections).

``GatedPool`` asks the watch before every checkout: while the database is down a call fails in
microseconds with ``DatabaseDown`` (translated to ``unavailable``, 503) instead of waiting out
the pool's timeout.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool, ConnectionPool, PoolTimeout

log = logging.getLogger("sgam.database")

PING_TIMEOUT_S = 2
WAIT_SLICE_S = 0.25


class DatabaseDown(psycopg.OperationalError):
    """The database is known to be down: refused without trying."""


class DatabaseWatch:
    """Pings the database from a thread of its own; ``up`` is the last answer."""

    def __init__(
        self,
        conninfo: str,
        *,
        interval_s: float = 0.25,
        connect: Callable[[str], psycopg.Connection[Any]] | None = None,
    ) -> None:
        self._conninfo = conninfo
        self._interval_s = interval_s
        self._connect = connect or _connect
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._on_recovery: Callable[[], None] = lambda: None
        self._down_since: float | None = None
        self.detail: str | None = None
        """Why the database is down (the last error), or None while it answers."""

    @property
    def up(self) -> bool:
        """Whether the database answered the last ping."""
        return self._down_since is None

    def start(self, *, on_recovery: Callable[[], None] | None = None) -> None:
        """Start watching; ``on_recovery`` runs on the watch's thread when the database is back."""
        if on_recovery is not None:
            self._on_recovery = on_recovery
        self._thread = threading.Thread(target=self._run, name="sgam-database-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop watching and close the watch's connection."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=PING_TIMEOUT_S + 5)

    def _run(self) -> None:
        conn: psycopg.Connection[Any] | None = None
        while not self._stop.is_set():
            try:
                if conn is None:
                    conn = self._connect(self._conninfo)
                conn.execute("SELECT 1")
            except psycopg.Error as error:
                if conn is not None:
                    conn.close()
                    conn = None
                self._went_down(error)
            else:
                self._answered()
            self._stop.wait(self._interval_s)
        if conn is not None:
            conn.close()

    def _went_down(self, error: psycopg.Error) -> None:
        self.detail = type(error).__name__
        if self._down_since is None:
            self._down_since = time.monotonic()
            log.warning("the database does not answer (%s); calls fail fast until it does", error)

    def _answered(self) -> None:
        if self._down_since is None:
            return
        down_s = time.monotonic() - self._down_since
        self._on_recovery()
        self._down_since = None
        self.detail = None
        log.warning("the database answers again after %.1f s", down_s)


def _connect(conninfo: str) -> psycopg.Connection[Any]:
    return psycopg.connect(
        conninfo,
        autocommit=True,
        connect_timeout=PING_TIMEOUT_S,
        options=f"-c statement_timeout={PING_TIMEOUT_S * 1000}",
        application_name="sgam-database-watch",
    )


class GatedPool(ConnectionPool):
    """A pool that refuses a checkout while its ``watch`` says the database is down.

    A caller already waiting for a connection when the database dies is refused too: it waits
    in slices of ``WAIT_SLICE_S`` and asks the watch between them (the pool's own wait cannot be
    woken early).
    """

    def __init__(self, *args: Any, watch: DatabaseWatch, **kwargs: Any) -> None:
        self.watch = watch
        super().__init__(*args, **kwargs)

    def getconn(self, timeout: float | None = None) -> psycopg.Connection[Any]:
        """A connection, as ``ConnectionPool.getconn``; ``DatabaseDown`` while it is down."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            remaining = _remaining(self.watch, deadline)
            try:
                return super().getconn(timeout=max(0.0, min(WAIT_SLICE_S, remaining)))
            except PoolTimeout:
                if remaining <= WAIT_SLICE_S:
                    raise


class GatedAsyncPool(AsyncConnectionPool):
    """``GatedPool`` for asyncio connections: the same refusal while the database is down."""

    def __init__(self, *args: Any, watch: DatabaseWatch, **kwargs: Any) -> None:
        self.watch = watch
        super().__init__(*args, **kwargs)

    async def getconn(self, timeout: float | None = None) -> psycopg.AsyncConnection[Any]:
        """A connection, as ``AsyncConnectionPool.getconn``; ``DatabaseDown`` while it is down."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            remaining = _remaining(self.watch, deadline)
            try:
                return await super().getconn(timeout=max(0.0, min(WAIT_SLICE_S, remaining)))
            except PoolTimeout:
                if remaining <= WAIT_SLICE_S:
                    raise


def _remaining(watch: DatabaseWatch, deadline: float) -> float:
    """Seconds left until ``deadline``; ``DatabaseDown`` while the watch says it is down."""
    if not watch.up:
        raise DatabaseDown("it is down; retry once it answers again (GET /readyz)")
    return deadline - time.monotonic()
