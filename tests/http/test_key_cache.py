"""The key cache: a known key costs no database round trip, a revoked one fails its next call.

"Another process" is played by a second pool or a plain connection on the same database: the
app's cache hears of their changes only through PostgreSQL, as another worker's would.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any
from uuid import UUID, uuid4

import anyio
import psycopg
import pytest
from litestar.testing import TestClient
from psycopg_pool import ConnectionPool

from retrieval.search.embeddings import Embedder
from server.app import create_app
from server.auth.keycache import KeyCache, authenticate
from server.auth.keylistener import APPLICATION_NAME, KeyChangeListener
from server.runtime.resources import resources_of
from server.settings import Settings
from store.governance.keys import KEY_CHANGED_CHANNEL, ActiveKey
from store.service import MemoryStore
from tests.conftest import ADMIN_TOKEN, ApiTenant, app_url
from tests.http_helpers import ADMIN, Client, make_tenant

GUARD_ONLY = {"X-SGAM-Now": "2026-06-01T00:00:00Z"}
"""This module's server refuses the clock header right after the key check (403), so a request
carrying it does nothing in the database but check the key."""


@contextmanager
def guarded_app(conninfo: str, embedder: Embedder) -> Iterator[Client]:
    """An app (a server process of its own) on the database that refuses ``X-SGAM-Now``."""
    settings = Settings(
        database_url=conninfo,
        app_database_url=app_url(conninfo),
        admin_token=ADMIN_TOKEN,
        allow_clock_header=False,
    )
    with TestClient(create_app(settings, embedder=embedder)) as opened:
        yield opened


@pytest.fixture(scope="module")
def client(conninfo: str, embedder: Embedder) -> Iterator[Client]:
    """An app on the module's database that refuses ``X-SGAM-Now``."""
    with guarded_app(conninfo, embedder) as opened:
        yield opened


class Checkouts:
    """Counts the connections the app's pool hands out: its every use of the database."""

    def __init__(self, pool: ConnectionPool, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = pool.connection

        @contextmanager
        def connection(timeout: float | None = None) -> Iterator[psycopg.Connection[Any]]:
            self.count += 1
            with real(timeout) as conn:
                yield conn

        monkeypatch.setattr(pool, "connection", connection)

    def call(self, client: Client, headers: dict[str, str]) -> tuple[int, int]:
        """A guard-only request's status and the checkouts it made."""
        self.count = 0
        status = client.get("/v1/attributes", headers=headers | GUARD_ONLY).status_code
        return status, self.count


@pytest.fixture
def checkouts(client: Client, monkeypatch: pytest.MonkeyPatch) -> Checkouts:
    """Checkouts of the app's pool, counted for this test."""
    return Checkouts(resources_of(client.app).pool, monkeypatch)


@pytest.fixture
def cache(client: Client) -> KeyCache:
    """The app's key cache, caught up with the database."""
    keys = resources_of(client.app).keys
    wait_for(lambda: keys.fresh)
    return keys


@pytest.fixture
def late_notifications(cache: KeyCache, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The app's listener stalls on the first key change it hears of, for up to 30 seconds."""
    released = threading.Event()
    drop = cache.drop

    def stalled(key_id: UUID | None) -> None:
        released.wait(30)
        drop(key_id)

    monkeypatch.setattr(cache, "drop", stalled)
    try:
        yield
    finally:
        released.set()


def wait_for(condition: Callable[[], bool], *, timeout: float = 20) -> None:
    """Return once ``condition()`` holds; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.01)


def key_of(tenant: ApiTenant) -> UUID:
    """The key_id of a tenant's key."""
    return UUID(tenant.key_id)


def with_wrong_secret(tenant: ApiTenant) -> dict[str, str]:
    """The tenant's headers with the key's secret altered."""
    header = tenant.headers["Authorization"]
    return {"Authorization": header[:-1] + ("A" if header[-1] != "A" else "B")}


def listeners_on(conninfo: str, application_name: str) -> list[int]:
    """Backend pids of the database's connections with this application_name."""
    with psycopg.connect(conninfo) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity"
            " WHERE datname = current_database() AND application_name = %(name)s",
            {"name": application_name},
        ).fetchall()
    return [row[0] for row in rows]


def terminate(conninfo: str, application_name: str) -> None:
    """End the one connection with this application_name, as a network failure would."""
    [pid] = listeners_on(conninfo, application_name)
    with psycopg.connect(conninfo) as conn:
        # The pid's type named: Citus adds pg_terminate_backend(bigint) for its global pids.
        conn.execute("SELECT pg_terminate_backend(%(pid)s::integer)", {"pid": pid})


def revoke_in_sql(conninfo: str, key_id: UUID) -> None:
    """Revoke a key with a plain UPDATE on a connection of its own (no wait afterwards)."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(
            "UPDATE api_keys SET revoked_at = now() WHERE key_id = %(key_id)s", {"key_id": key_id}
        )


# -- the cache alone ------------------------------------------------------------------------


def _active_key() -> ActiveKey:
    return ActiveKey(key_id=uuid4(), tenant_id="acme", secret_hash=bytes(32))


def test_the_cache_answers_only_within_its_lease_of_the_last_catch_up() -> None:
    now = [100.0]
    cache = KeyCache(lease=0.5, clock=lambda: now[0])
    key = _active_key()
    cache.remember(key, generation=cache.generation)
    assert (cache.fresh, cache.lookup(key.key_id)) == (False, None)  # never caught up

    cache.caught_up(since=100.0)
    now[0] = 100.49
    assert cache.lookup(key.key_id) == key
    now[0] = 100.5
    assert (cache.fresh, cache.lookup(key.key_id), cache.holds(key.key_id)) == (False, None, True)

    cache.caught_up(since=100.4)
    cache.caught_up(since=100.3)  # an older catch-up does not shorten the lease
    assert cache.lookup(key.key_id) == key
    cache.lapse()
    assert (cache.fresh, cache.holds(key.key_id)) == (False, False)


def test_a_read_that_raced_a_change_does_not_refill_the_cache() -> None:
    cache = KeyCache(clock=lambda: 0.0)
    cache.caught_up(since=0.0)
    key, other = _active_key(), _active_key()
    began = cache.generation
    cache.drop(key.key_id)  # announced while the read was under way
    cache.remember(key, generation=began)
    assert cache.lookup(key.key_id) is None

    cache.remember(key, generation=cache.generation)
    cache.remember(other, generation=cache.generation)
    cache.drop(other.key_id)
    assert (cache.lookup(key.key_id), cache.lookup(other.key_id)) == (key, None)
    cache.drop(None)  # every key
    assert cache.lookup(key.key_id) is None


# -- through the HTTP API -------------------------------------------------------------------


def test_a_known_key_is_checked_without_a_database_round_trip(
    client: Client, cache: KeyCache, checkouts: Checkouts, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant = make_tenant(client, "cache-known")
    monkeypatch.setattr(cache, "lease", 60.0)  # no lapse between the calls below

    assert checkouts.call(client, tenant.headers) == (403, 1)  # first sight: one read
    assert checkouts.call(client, tenant.headers) == (403, 0)  # then from the cache
    assert checkouts.call(client, with_wrong_secret(tenant)) == (401, 0)  # secret still checked
    cache.drop(key_of(tenant))
    assert checkouts.call(client, tenant.headers) == (403, 1)


@pytest.mark.usefixtures("late_notifications")
def test_a_key_revoked_through_the_admin_api_fails_its_very_next_call(
    client: Client, cache: KeyCache, checkouts: Checkouts
) -> None:
    tenant = make_tenant(client, "cache-admin")
    assert checkouts.call(client, tenant.headers)[0] == 403
    assert cache.holds(key_of(tenant))

    revoked = client.delete(f"/v1/admin/keys/{tenant.key_id}", headers=ADMIN)

    assert revoked.json()["status"] == "revoked", revoked.text
    assert cache.holds(key_of(tenant))  # the notification has not been applied
    assert checkouts.call(client, tenant.headers) == (401, 1)


@pytest.mark.usefixtures("late_notifications")
def test_a_key_revoked_by_another_process_fails_its_very_next_call(
    client: Client, cache: KeyCache, checkouts: Checkouts, pool: ConnectionPool
) -> None:
    tenant = make_tenant(client, "cache-other")
    assert checkouts.call(client, tenant.headers)[0] == 403
    assert cache.holds(key_of(tenant))

    MemoryStore(pool).admin.revoke_api_key(key_of(tenant))  # as `sgam key revoke` does

    # The notification has not been applied (the listener is stalled), and yet:
    assert cache.holds(key_of(tenant))
    assert checkouts.call(client, tenant.headers) == (401, 1)


def test_a_key_revoked_in_sql_leaves_every_cache_when_the_notification_arrives(
    client: Client, cache: KeyCache, checkouts: Checkouts, conninfo: str
) -> None:
    tenant, spare = make_tenant(client, "cache-sql"), make_tenant(client, "cache-sql")
    for held in (tenant, spare):
        assert checkouts.call(client, held.headers)[0] == 403

    revoke_in_sql(conninfo, key_of(tenant))

    wait_for(lambda: not cache.holds(key_of(tenant)))
    assert cache.holds(key_of(spare))
    assert checkouts.call(client, tenant.headers) == (401, 1)  # read again, refused


def test_a_lost_listener_connection_empties_the_cache_until_it_is_back(
    client: Client,
    cache: KeyCache,
    checkouts: Checkouts,
    conninfo: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tenant = make_tenant(client, "cache-lost")
    monkeypatch.setattr(cache, "lease", 60.0)  # only the lost connection can end it
    assert checkouts.call(client, tenant.headers) == (403, 1)
    assert checkouts.call(client, tenant.headers) == (403, 0)

    terminate(conninfo, APPLICATION_NAME)

    wait_for(lambda: not cache.holds(key_of(tenant)))
    wait_for(lambda: cache.fresh)  # reconnected and caught up
    assert checkouts.call(client, tenant.headers) == (403, 1)
    assert checkouts.call(client, tenant.headers) == (403, 0)


def test_without_its_listener_the_cache_is_not_used_and_keys_are_checked_in_the_database(
    conninfo: str, pool: ConnectionPool
) -> None:
    store = MemoryStore(pool)
    store.admin.ensure_tenant("cache-gated")
    revoked = store.admin.create_api_key("cache-gated")
    kept = store.admin.create_api_key("cache-gated")
    cache = KeyCache()
    check = partial(authenticate, cache=cache, admin=store.admin)
    name = "sgam key listener under test"
    admitted = threading.Event()
    admitted.set()

    def connect(info: str) -> psycopg.Connection[Any]:
        if not admitted.is_set():
            raise psycopg.OperationalError("the database cannot be reached")
        return psycopg.connect(info, autocommit=True, application_name=name)

    listener = KeyChangeListener(conninfo, cache, connect=connect)
    listener.start()
    try:
        wait_for(lambda: cache.fresh)
        for issued in (revoked, kept):
            assert anyio.run(check, issued.api_key) == "cache-gated"
            assert cache.holds(issued.key_id)

        admitted.clear()
        terminate(conninfo, name)
        wait_for(lambda: not cache.holds(kept.key_id))
        revoke_in_sql(conninfo, revoked.key_id)  # announced to nobody: the listener is out

        assert [anyio.run(check, issued.api_key) for issued in (revoked, kept)] == [
            None,
            "cache-gated",
        ]
        assert cache.holds(kept.key_id)  # remembered from the database, but not used:
        assert (cache.fresh, cache.lookup(kept.key_id)) == (False, None)

        admitted.set()
        wait_for(lambda: cache.fresh)
        assert (cache.holds(kept.key_id), anyio.run(check, revoked.api_key)) == (False, None)
        assert anyio.run(check, kept.api_key) == "cache-gated"
        assert cache.lookup(kept.key_id) == store.admin.find_active_key(kept.key_id)
    finally:
        listener.stop()
    assert not cache.fresh
    wait_for(lambda: listeners_on(conninfo, name) == [])


def test_the_lifespan_starts_one_listener_and_stops_it(conninfo: str, embedder: Embedder) -> None:
    before = len(listeners_on(conninfo, APPLICATION_NAME))
    settings = Settings(
        database_url=conninfo, app_database_url=app_url(conninfo), admin_token=ADMIN_TOKEN
    )
    with TestClient(create_app(settings, embedder=embedder)) as opened:
        wait_for(lambda: resources_of(opened.app).keys.fresh)
        assert len(listeners_on(conninfo, APPLICATION_NAME)) == before + 1
        keys = resources_of(opened.app).keys
    assert not keys.fresh
    wait_for(lambda: len(listeners_on(conninfo, APPLICATION_NAME)) == before)


def test_an_empty_or_unreadable_announcement_empties_the_cache(
    client: Client, cache: KeyCache, checkouts: Checkouts, conninfo: str
) -> None:
    tenant = make_tenant(client, "cache-all")
    for payload in ("", "not a key id"):
        assert checkouts.call(client, tenant.headers)[0] == 403
        assert cache.holds(key_of(tenant))
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_notify(%(channel)s, %(payload)s)",
                {"channel": KEY_CHANGED_CHANNEL, "payload": payload},
            )
        wait_for(lambda: not cache.holds(key_of(tenant)))
