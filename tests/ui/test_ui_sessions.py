"""Sessions of the timeline pages in the store: found by digest until they expire, their key is
revoked or they are closed; behind the tenant wall like every tenant table."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from uuid import UUID

import pytest
from psycopg_pool import ConnectionPool

from store.db.clock import ManualClock
from store.errors import NotFound
from store.governance.ui_sessions import UiSession
from store.service import MemoryStore
from tests.helpers import owner_connection

HOUR = timedelta(hours=1)


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def _open(store: MemoryStore, tenant: str, name: str) -> tuple[UUID, bytes]:
    key_id = store.admin.create_api_key(tenant).key_id
    store.ui_sessions.open(
        tenant, key_id, session_hash=_digest(name), csrf_hash=_digest(f"csrf {name}"), lifetime=HOUR
    )
    return key_id, _digest(name)


def test_a_session_is_found_by_its_digest_until_it_expires(
    store: MemoryStore, tenant: str, clock: ManualClock
) -> None:
    start = clock()
    key_id, session = _open(store, tenant, "s1")
    assert store.ui_sessions.find(session) == UiSession(
        tenant_id=tenant, key_id=key_id, csrf_hash=_digest("csrf s1"), expires_at=start + HOUR
    )
    assert store.ui_sessions.find(_digest("s2")) is None
    clock.set(start + HOUR - timedelta(microseconds=1))
    assert store.ui_sessions.find(session) is not None
    clock.set(start + HOUR)
    assert store.ui_sessions.find(session) is None


def test_revoking_the_key_ends_its_sessions_and_closing_ends_one(
    store: MemoryStore, tenant: str
) -> None:
    key_id, first = _open(store, tenant, "r1")
    _, second = _open(store, tenant, "r2")
    store.admin.revoke_api_key(key_id)
    assert store.ui_sessions.find(first) is None
    assert store.ui_sessions.find(second) is not None
    assert store.ui_sessions.close("someone-else", second) is False
    assert store.ui_sessions.find(second) is not None
    assert store.ui_sessions.close(tenant, second) is True
    assert store.ui_sessions.find(second) is None


def test_signing_in_drops_the_tenants_expired_sessions(
    store: MemoryStore, tenant: str, clock: ManualClock, pool: ConnectionPool
) -> None:
    _open(store, tenant, "old")
    clock.set(clock() + 2 * HOUR)
    _open(store, tenant, "new")
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT session_hash FROM ui_sessions WHERE tenant_id = %(tenant)s",
            {"tenant": tenant},
        ).fetchall()
    assert rows == []  # the pooled role names no tenant here: the wall shows nothing
    with owner_connection(pool) as conn:
        kept = conn.execute(
            "SELECT session_hash FROM ui_sessions WHERE tenant_id = %(tenant)s",
            {"tenant": tenant},
        ).fetchall()
    assert kept == [(_digest("new"),)]


def test_a_session_names_a_key_of_its_own_tenant_only(store: MemoryStore, tenant: str) -> None:
    store.admin.create_tenant(f"{tenant}-b")
    foreign = store.admin.create_api_key(f"{tenant}-b").key_id
    with pytest.raises(NotFound) as refused:
        store.ui_sessions.open(
            tenant, foreign, session_hash=_digest("x"), csrf_hash=_digest("y"), lifetime=HOUR
        )
    assert refused.value.refusal is not None
    assert refused.value.refusal.constraint == "ui_sessions_tenant_id_key_id_fkey"
