"""API keys on the real database: issued per tenant, stored hashed, checked, revoked for good."""

from __future__ import annotations

import hashlib
import re
from uuid import UUID, uuid4

import psycopg
import pytest
from psycopg import sql
from psycopg_pool import ConnectionPool

from store.contract.results import ApiKey, ApiKeyRevoked
from store.db.clock import ManualClock
from store.errors import InvalidInput, NotFound
from store.governance.keys import KEY_CHANGED_CHANNEL
from store.service import MemoryStore
from tests.conftest import ts
from tests.helpers import owner_connection

TOKEN = re.compile(r"sgam_([0-9a-f]{32})_([A-Za-z0-9_-]{43})")


def _secret(api_key: str) -> str:
    match = TOKEN.fullmatch(api_key)
    assert match is not None, api_key
    return match[2]


def test_a_new_key_names_its_id_and_authenticates_as_its_tenant(
    store: MemoryStore, tenant: str
) -> None:
    issued = store.admin.create_api_key(tenant)
    match = TOKEN.fullmatch(issued.api_key)
    assert match is not None, issued.api_key
    assert UUID(hex=match[1]) == issued.key_id
    assert (issued.tenant_id, issued.created_at, issued.revoked_at) == (
        tenant,
        ts("2026-06-01T00:00:00Z"),
        None,
    )
    assert store.admin.authenticate(issued.api_key) == tenant


def test_two_keys_of_a_tenant_differ_and_each_tenant_gets_its_own(
    store: MemoryStore, tenant: str
) -> None:
    store.admin.create_tenant(f"{tenant}-other")
    first, second = store.admin.create_api_key(tenant), store.admin.create_api_key(tenant)
    other = store.admin.create_api_key(f"{tenant}-other")
    assert len({first.key_id, second.key_id, other.key_id}) == 3
    assert len({_secret(k.api_key) for k in (first, second, other)}) == 3
    assert [store.admin.authenticate(k.api_key) for k in (first, second, other)] == [
        tenant,
        tenant,
        f"{tenant}-other",
    ]


def test_the_table_keeps_a_sha256_of_the_secret_and_never_the_secret(
    store: MemoryStore, tenant: str, pool: ConnectionPool
) -> None:
    issued = store.admin.create_api_key(tenant)
    secret = _secret(issued.api_key)
    with owner_connection(pool) as conn:
        row = conn.execute(
            "SELECT secret_hash, api_keys::text FROM api_keys WHERE key_id = %(key_id)s",
            {"key_id": issued.key_id},
        ).fetchone()
    assert row is not None
    stored, whole_row = row
    assert bytes(stored) == hashlib.sha256(secret.encode()).digest()
    assert secret not in whole_row
    assert secret.encode().hex() not in whole_row


def test_malformed_unknown_and_altered_tokens_authenticate_nobody(
    store: MemoryStore, tenant: str
) -> None:
    issued = store.admin.create_api_key(tenant)
    secret = _secret(issued.api_key)
    flipped = ("A" if secret[0] != "A" else "B") + secret[1:]
    refused = [
        "",
        "sgam_",
        "not-a-key",
        issued.api_key + "x",
        issued.api_key[:-1],
        issued.api_key.replace("sgam_", "sgem_", 1),
        f"sgam_{issued.key_id.hex.upper()}_{secret}",
        f"sgam_{issued.key_id}_{secret}",  # the dashed UUID form is not the token's
        f"sgam_{issued.key_id.hex}_{flipped}",  # right id, wrong secret
        f"sgam_{uuid4().hex}_{secret}",  # right secret, unknown id
        f" {issued.api_key}",
        f"{issued.api_key}\n",
    ]
    assert [store.admin.authenticate(token) for token in refused] == [None] * len(refused)
    assert store.admin.authenticate(issued.api_key) == tenant


def test_a_key_for_an_unknown_tenant_is_refused_as_not_found(store: MemoryStore) -> None:
    with pytest.raises(NotFound) as raised:
        store.admin.create_api_key("no-such-tenant")
    assert raised.value.field == "tenant_id"
    with pytest.raises(InvalidInput) as invalid:
        store.admin.create_api_key("not a tenant id")
    assert invalid.value.field == "tenant_id"


def test_a_revoked_key_stops_authenticating_and_a_second_revocation_keeps_the_first_time(
    store: MemoryStore, tenant: str, clock: ManualClock
) -> None:
    revoked, kept = store.admin.create_api_key(tenant), store.admin.create_api_key(tenant)
    clock.set(ts("2026-06-02T00:00:00Z"))
    first = store.admin.revoke_api_key(revoked.key_id)
    assert first == ApiKeyRevoked(
        status="revoked",
        key_id=revoked.key_id,
        tenant_id=tenant,
        created_at=ts("2026-06-01T00:00:00Z"),
        revoked_at=ts("2026-06-02T00:00:00Z"),
    )
    assert store.admin.authenticate(revoked.api_key) is None
    assert store.admin.authenticate(kept.api_key) == tenant

    clock.set(ts("2026-06-03T00:00:00Z"))
    again = store.admin.revoke_api_key(str(revoked.key_id))
    assert again == first.model_copy(update={"status": "unchanged"})
    # A clock set back before the revocation (X-SGAM-Now) does not bring the key back.
    clock.set(ts("2026-06-01T12:00:00Z"))
    assert store.admin.authenticate(revoked.api_key) is None


def test_revoking_an_unknown_or_malformed_key_id_is_refused(store: MemoryStore) -> None:
    with pytest.raises(NotFound) as missing:
        store.admin.revoke_api_key(uuid4())
    assert missing.value.field == "key_id"
    with pytest.raises(InvalidInput) as malformed:
        store.admin.revoke_api_key("sgam_not_a_uuid")
    assert malformed.value.field == "key_id"


def test_a_revocation_before_the_keys_creation_is_refused_and_the_database_agrees(
    store: MemoryStore, tenant: str, clock: ManualClock, pool: ConnectionPool
) -> None:
    issued = store.admin.create_api_key(tenant)
    clock.set(ts("2026-05-31T00:00:00Z"))
    with pytest.raises(InvalidInput) as raised:
        store.admin.revoke_api_key(issued.key_id)
    assert raised.value.field == "now"
    assert store.admin.authenticate(issued.api_key) == tenant
    with owner_connection(pool) as conn, pytest.raises(psycopg.errors.CheckViolation):
        conn.execute(
            "UPDATE api_keys SET revoked_at = created_at - interval '1 second'"
            " WHERE key_id = %(key_id)s",
            {"key_id": issued.key_id},
        )


def test_listing_a_tenants_keys_shows_ids_and_times_but_no_secrets(
    store: MemoryStore, tenant: str, clock: ManualClock
) -> None:
    first = store.admin.create_api_key(tenant)
    clock.set(ts("2026-06-02T00:00:00Z"))
    second = store.admin.create_api_key(tenant)
    store.admin.revoke_api_key(first.key_id)
    store.admin.create_tenant(f"{tenant}-other")
    store.admin.create_api_key(f"{tenant}-other")
    listed = store.admin.list_api_keys(tenant)
    assert listed == [
        ApiKey(
            key_id=first.key_id,
            tenant_id=tenant,
            created_at=ts("2026-06-01T00:00:00Z"),
            revoked_at=ts("2026-06-02T00:00:00Z"),
        ),
        ApiKey(
            key_id=second.key_id,
            tenant_id=tenant,
            created_at=ts("2026-06-02T00:00:00Z"),
            revoked_at=None,
        ),
    ]
    assert all(type(key) is ApiKey for key in listed)
    dumped = str([key.model_dump(mode="json") for key in listed])
    assert _secret(first.api_key) not in dumped
    assert _secret(second.api_key) not in dumped
    with pytest.raises(NotFound):
        store.admin.list_api_keys("no-such-tenant")


def test_each_committed_change_to_a_key_row_is_announced_with_its_key_id(
    store: MemoryStore, tenant: str, clock: ManualClock, conninfo: str
) -> None:
    revoked, deleted = store.admin.create_api_key(tenant), store.admin.create_api_key(tenant)
    with psycopg.connect(conninfo, autocommit=True) as listener:
        listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(KEY_CHANGED_CHANNEL)))
        clock.set(ts("2026-06-02T00:00:00Z"))
        store.admin.revoke_api_key(revoked.key_id)
        store.admin.revoke_api_key(revoked.key_id)  # unchanged: nothing to announce
        with psycopg.connect(conninfo) as other:
            other.execute(
                "UPDATE api_keys SET revoked_at = created_at WHERE key_id = %(key_id)s",
                {"key_id": deleted.key_id},
            )
            other.rollback()  # never committed: never announced
            other.execute(
                "DELETE FROM api_keys WHERE key_id = %(key_id)s", {"key_id": deleted.key_id}
            )
            other.commit()
        heard = list(listener.notifies(timeout=10, stop_after=2))
    assert [(note.channel, note.payload) for note in heard] == [
        (KEY_CHANGED_CHANNEL, str(revoked.key_id)),
        (KEY_CHANGED_CHANNEL, str(deleted.key_id)),
    ]
