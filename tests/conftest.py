"""Fixtures: one embedded PostgreSQL per test session, a fresh migrated database per module."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import datetime

import psycopg
import pytest
from psycopg_pool import ConnectionPool

from retrieval.embeddings import Embedder
from store.clock import ManualClock
from store.database import make_pool, scratch_database, temporary_database
from store.migrate import migrate
from store.service import MemoryStore
from store.times import parse_timestamp

_tenant_numbers = itertools.count(1)


def ts(text: str) -> datetime:
    """A UTC instant from RFC 3339 text (test shorthand)."""
    return parse_timestamp(text)


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The real embedding model (all-MiniLM-L6-v2 from its package), loaded once."""
    return Embedder().load()


@pytest.fixture(scope="session")
def server_conninfo() -> Iterator[str]:
    """The embedded server, started once for the whole session."""
    with scratch_database(None) as conninfo:
        yield conninfo


@pytest.fixture(scope="module")
def conninfo(server_conninfo: str) -> Iterator[str]:
    """A fresh database for this module, built by the real migrations."""
    with temporary_database(server_conninfo) as info:
        with psycopg.connect(info) as conn:
            migrate(conn)
        yield info


@pytest.fixture(scope="module")
def pool(conninfo: str) -> Iterator[ConnectionPool]:
    """A pool on the module's database."""
    with make_pool(conninfo, max_size=12) as opened:
        opened.wait()
        yield opened


@pytest.fixture
def clock() -> ManualClock:
    """System time under the test's control, starting 2026-06-01T00:00:00Z."""
    return ManualClock(ts("2026-06-01T00:00:00Z"))


@pytest.fixture
def store(pool: ConnectionPool, clock: ManualClock) -> MemoryStore:
    """The store on the module's database with the test's clock."""
    return MemoryStore(pool, clock=clock)


@pytest.fixture
def tenant(store: MemoryStore) -> str:
    """A tenant of its own for each test."""
    name = f"tenant-{next(_tenant_numbers)}"
    store.create_tenant(name)
    return name
