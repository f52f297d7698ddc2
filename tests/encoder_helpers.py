"""Helpers for tests of the encoder: its process's pid, waiting for a process to end, a signal
when a batch starts, and a fact to read while the encoder is held."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from litestar import Litestar
from litestar.testing import TestClient

from retrieval.search.embeddings import Embedder, Vectors
from tests.http_helpers import candidate, declare, record

WAIT_S = 120


def child_pid(embedder: Embedder) -> int:
    """The pid of the embedder's running encoder process."""
    assert embedder.process is not None
    pid = embedder.process.pid
    assert pid is not None
    return pid


def wait_until_gone(pid: int) -> str:
    """Wait for ``pid`` to end: 'gone' once reaped, 'zombie' when ended and not yet reaped (a
    container's first process may not reap), 'running' if it had not ended after WAIT_S."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return "gone"
        if state == "Z":
            return "zombie"
        time.sleep(0.05)
    return "running"


@contextmanager
def batch_started(embedder: Embedder) -> Iterator[threading.Event]:
    """An event set when the embedder's encoder starts its next batch (until the block ends)."""
    started = threading.Event()
    encode = embedder.encoder._encode

    def signalling(texts: list[str]) -> Vectors:
        started.set()
        return encode(texts)

    embedder.encoder._encode = signalling
    try:
        yield started
    finally:
        embedder.encoder._encode = encode


def gold_member(http: TestClient[Litestar], headers: dict[str, str]) -> dict[str, str]:
    """Ada's loyalty tier, gold, recorded under the tenant of ``headers``; the headers."""
    declare(http, headers, "loyalty_tier", "string", description="Loyalty programme tier")
    record(
        http,
        headers,
        "t1",
        "Ada is a gold member.",
        updates=[candidate("ada", "loyalty_tier", "gold")],
    )
    return headers
