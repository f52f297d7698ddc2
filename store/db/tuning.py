"""The embedded PostgreSQL's shared buffers, sized for an episode store rather than left at
PostgreSQL's default.

PostgreSQL starts with 128 MB of shared buffers. With 200,000 episodes the model's HNSW index
is 223 MB and the vectors' table 174 MB; storing one episode's vector (its entry in the index,
then the commit) took 3.1 ms with 128 MB and 2.0 ms with 512 MB
(``evals/results/vector_insert.json``). An episode written one call at a time waits for that
step after its encoder.

A new cluster gets the setting and is restarted at once: nothing else can be connected to it
yet. An existing cluster whose setting differs gets it by ``ALTER SYSTEM``, which PostgreSQL
applies at its next start (this process does not restart a server others may be using), and a
log line says so. An external database (``DATABASE_URL``) is its operator's to size.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import time
from typing import Any, Final

import psycopg
from psycopg import sql

from store.db.keeper import EmbeddedServer, running

log = logging.getLogger("sgam.database")

EMBEDDED_SHARED_BUFFERS: Final = "512MB"
"""The embedded server's shared buffers unless configured (``SGAM_EMBEDDED_SHARED_BUFFERS``)."""
SIZE_PATTERN: Final = r"^[1-9][0-9]{0,8}(kB|MB|GB)$"
"""A size as PostgreSQL writes one: digits and a unit (128MB, 1GB)."""
_SIZE: Final = re.compile(SIZE_PATTERN)
STOP_TIMEOUT_S: Final = 60.0


def check_size(size: str) -> str:
    """``size`` if PostgreSQL reads it as a memory size (``SIZE``), else ValueError."""
    if not _SIZE.match(size):
        raise ValueError(f"{size!r} is not a size such as 512MB or 1GB (kB, MB or GB)")
    return size


def set_shared_buffers(
    server: EmbeddedServer, superuser: str, size: str, *, new_cluster: bool
) -> None:
    """Give the embedded ``server`` ``size`` of shared buffers (see the module's docstring);
    ``superuser``: its connection string as a superuser."""
    check_size(size)
    with psycopg.connect(superuser, autocommit=True) as conn:
        if _holds(conn, size):
            return
        conn.execute(sql.SQL("ALTER SYSTEM SET shared_buffers = {}").format(sql.Literal(size)))
    if not new_cluster:
        log.info("the embedded PostgreSQL's shared buffers become %s at its next start", size)
        return
    _restart(server)


def _holds(conn: psycopg.Connection[Any], size: str) -> bool:
    row = conn.execute(
        "SELECT pg_size_bytes(current_setting('shared_buffers')) = pg_size_bytes(%s)", (size,)
    ).fetchone()
    return bool(row and row[0])


def _restart(server: EmbeddedServer) -> None:
    """Stop the postmaster (fast shutdown: its only client has left) and start it again."""
    pid = server.get_pid()
    if pid is not None and running(pid):
        os.kill(pid, signal.SIGINT)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while running(pid):
            if time.monotonic() > deadline:
                raise TimeoutError(f"the embedded PostgreSQL (pid {pid}) did not stop")
            time.sleep(0.05)
    with server._lock:
        server.ensure_postgres_running()
