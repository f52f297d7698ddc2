"""The key cache's listener: one autocommit connection per server process, in its own thread.

It LISTENs on the key-change channel and drops each announced key from the cache. Every
``heartbeat`` it also catches up: it notes the time, sends a notification on a channel only its
own connection listens on, and when that comes back (sent by its own backend, so no other
session can forge one) every change committed before the noted time has been applied, because
PostgreSQL delivers notifications in commit order. That time renews the cache's lease.

A failed connection empties the cache and voids its lease; the thread reconnects with
randomized exponential backoff and empties the cache once more after its LISTEN is in place,
since changes made while it was away were never announced to it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any
from uuid import UUID

import psycopg
from psycopg import sql
from tenacity import (
    Retrying,
    before_sleep_log,
    retry_if_exception_type,
    stop_when_event_set,
    wait_random_exponential,
)

from server.auth.keycache import KeyCache
from store.governance.keys import KEY_CHANGED_CHANNEL

log = logging.getLogger(__name__)

APPLICATION_NAME = "sgam key listener"
"""The listener connection's ``application_name`` (it shows in ``pg_stat_activity``)."""


class KeyChangeListener:
    """Keeps one ``KeyCache`` in step with the database's key changes while it runs."""

    def __init__(
        self,
        conninfo: str,
        cache: KeyCache,
        *,
        connect: Callable[[str], psycopg.Connection[Any]] | None = None,
    ) -> None:
        self._conninfo = conninfo
        self._cache = cache
        self._connect = connect or _connect
        self.heartbeat = cache.lease / 5
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name=APPLICATION_NAME, daemon=True)

    def start(self) -> None:
        """Start listening in the background (the cache stays unused until it catches up)."""
        self._thread.start()

    def stop(self, timeout: float = 10) -> None:
        """Stop listening and close the connection; the cache is left empty and unused."""
        self._stopped.set()
        self._thread.join(timeout)
        if self._thread.is_alive():
            log.warning("the key listener did not stop within %s seconds", timeout)

    def _run(self) -> None:
        reconnect = Retrying(
            retry=retry_if_exception_type(psycopg.Error),
            wait=wait_random_exponential(multiplier=0.1, max=5),
            stop=stop_when_event_set(self._stopped),
            sleep=self._pause,
            before_sleep=before_sleep_log(log, logging.WARNING),
            reraise=True,
        )
        try:
            while not self._stopped.is_set():
                with reconnect(self._open) as conn:
                    try:
                        self._follow(conn)
                    except psycopg.Error as error:
                        log.warning("the key listener lost its connection: %s", error)
                    finally:
                        self._cache.lapse()
        except psycopg.Error:
            pass  # stopped while the database could not be reached
        finally:
            self._cache.lapse()

    def _pause(self, seconds: float) -> None:
        self._stopped.wait(seconds)  # a stop ends the backoff at once

    def _open(self) -> psycopg.Connection[Any]:
        conn = self._connect(self._conninfo)
        try:
            # A catch-up commits every heartbeat; none of them needs to wait for the disk.
            conn.execute("SET synchronous_commit = off")
            conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(KEY_CHANGED_CHANNEL)))
            conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(_own_channel(conn))))
        except psycopg.Error:
            conn.close()
            raise
        self._cache.lapse()  # what changed before the LISTEN was never announced here
        return conn

    def _follow(self, conn: psycopg.Connection[Any]) -> None:
        own_channel, own_pid = _own_channel(conn), conn.info.backend_pid
        while not self._stopped.is_set():
            since = self._cache.clock()
            conn.execute(
                "SELECT pg_notify(%(channel)s, %(since)s)",
                {"channel": own_channel, "since": repr(since)},
            )
            for note in conn.notifies(timeout=self.heartbeat):
                if note.channel == KEY_CHANGED_CHANNEL:
                    self._cache.drop(_changed_key(note.payload))
                elif note.channel == own_channel and note.pid == own_pid:
                    self._cache.caught_up(since=float(note.payload))


def _connect(conninfo: str) -> psycopg.Connection[Any]:
    return psycopg.connect(conninfo, autocommit=True, application_name=APPLICATION_NAME)


def _own_channel(conn: psycopg.Connection[Any]) -> str:
    return f"sgam_api_key_sync_{conn.info.backend_pid}"


def _changed_key(payload: str) -> UUID | None:
    """The announced key; None (every key) for an empty or unreadable payload."""
    try:
        return UUID(payload)
    except ValueError:
        return None
