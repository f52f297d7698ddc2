"""Fixtures: one embedded PostgreSQL per test session, a fresh migrated database per module.

The tests live in rooms that mirror the product's: ``unit`` (no database), ``store``, ``http``,
``conformance`` (each scenario once, run on the store, over HTTP and through MCP), ``cli``, ``ui``,
``evals`` and ``docs``. Each test carries its room as a marker
(``pytest -m unit``, ``pytest -m "not evals and not cli"``); ``slow`` marks the rooms that start
processes, browsers or whole evaluations (cli, ui, evals).
"""

from __future__ import annotations

import itertools
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

import psycopg
import pytest
from litestar import Litestar
from litestar.testing import TestClient
from psycopg_pool import ConnectionPool

from retrieval.search.embeddings import Embedder
from server.app import create_app
from server.settings import Settings
from store.contract.times import parse_timestamp
from store.db.clock import ManualClock
from store.db.database import make_pool, scratch_database, temporary_database
from store.db.migrate import migrate_database
from store.db.roles import APP_ROLE, login_as
from store.service import MemoryStore
from tests.receipt_audit import audit_receipts

_tenant_numbers = itertools.count(1)
ROOMS = ("unit", "store", "http", "conformance", "cli", "ui", "evals", "docs")
SLOW_ROOMS = frozenset({"cli", "ui", "evals"})


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--citus``: run the tests of tests/citus on a Citus cluster (tests/citus/conftest.py)."""
    parser.addoption(
        "--citus",
        action="store_true",
        default=False,
        help="run the Citus tests (tests/citus) on a cluster of ../shared/citus",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test with its room (the folder under tests/), and the slow rooms ``slow``."""
    for item in items:
        room = item.path.parent.name
        if room in ROOMS:
            item.add_marker(getattr(pytest.mark, room))
            if room in SLOW_ROOMS:
                item.add_marker(pytest.mark.slow)


@dataclass(frozen=True)
class ApiTenant:
    """A tenant made through the admin API, with the headers of its API key."""

    name: str
    key_id: str
    headers: dict[str, str]


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
        migrate_database(info)
        yield info
        # Every receipt the module's tests left is content-free (issue: receipts).
        with psycopg.connect(info) as conn:
            audit_receipts(conn)


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
    store.admin.create_tenant(name)
    return name


# -- the HTTP API ---------------------------------------------------------------------------

ADMIN_TOKEN = "admin-token-for-tests-0123456789"


def app_url(conninfo: str) -> str:
    """``conninfo``'s database as the API's pool logs in to it: as ``sgam_app``, which the
    embedded cluster's bootstrap made a login role (SGAM_APP_DATABASE_URL)."""
    return login_as(conninfo, APP_ROLE)


@pytest.fixture(scope="module")
def api_settings(conninfo: str) -> Settings:
    """Server settings on the module's database, admin API and clock header on."""
    return Settings(
        database_url=conninfo,
        app_database_url=app_url(conninfo),
        admin_token=ADMIN_TOKEN,
        allow_clock_header=True,
        max_body_bytes=256 * 1024,
        pool_max_size=8,
    )


@pytest.fixture(scope="module")
def http(api_settings: Settings, embedder: Embedder) -> Iterator[TestClient[Litestar]]:
    """The real app (lifespan run) on the module's database, through Litestar's test client."""
    app = create_app(api_settings, embedder=embedder)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


@pytest.fixture
def admin() -> dict[str, str]:
    """Headers carrying the admin token."""
    return {"Authorization": f"Bearer {ADMIN_TOKEN}"}


@pytest.fixture
def api_tenant(http: TestClient[Litestar], admin: dict[str, str]) -> ApiTenant:
    """A fresh tenant with an API key, made through the admin API."""
    name = f"api-tenant-{next(_tenant_numbers)}"
    created = http.post("/v1/admin/tenants", json={"tenant_id": name}, headers=admin)
    assert created.status_code == 201, created.text
    issued = http.post(f"/v1/admin/tenants/{name}/keys", headers=admin)
    assert issued.status_code == 201, issued.text
    body = issued.json()
    return ApiTenant(name, body["key_id"], {"Authorization": f"Bearer {body['api_key']}"})


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def listening_port() -> Iterator[int]:
    """A loopback port that is taken: it accepts connections into its backlog and never
    answers them."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield sock.getsockname()[1]
