"""API keys: issued per tenant, shown once, kept only as a hash, revoked for good.

A token reads ``sgam_<key_id as 32 hex digits>_<secret>``: the key_id finds the one row to
check by primary key, so authentication never scans, and the secret (32 random bytes,
URL-safe base64) is compared by its SHA-256 in constant time.

Server processes keep the keys they have verified (``server/auth/keycache.py``). Any change to
a key row is announced on ``KEY_CHANGED_CHANNEL`` by the code that changes it, in the same
transaction (``announce_key_change``), and on one node by the triggers of migration 0008 as
well, which also hear a change made in SQL by hand; Citus places no table with triggers, so
there they are dropped (``store.db.distribution``) and keys change through this module only.
A process answers from its cache only for ``KEY_CACHE_LEASE`` seconds after confirming it has
received every announcement committed before; so ``revoke_api_key``'s callers wait that long
after the commit, and from then on no process accepts the key.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID, uuid4

import psycopg
from psycopg.rows import class_row

from store.contract.results import ApiKey, ApiKeyIssued, ApiKeyRevoked
from store.db.tenants import enter_tenant, require_tenant
from store.errors import InvalidInput, NotFound

PREFIX = "sgam_"
_SECRET_BYTES = 32
_TOKEN = re.compile(r"sgam_([0-9a-f]{32})_([A-Za-z0-9_-]{43})")

_COLUMNS = " key_id, tenant_id, created_at, revoked_at "

KEY_CHANGED_CHANNEL = "sgam_api_key_changed"
"""Where a changed (revoked, deleted) key's id is announced; an empty payload means every key."""
KEY_CACHE_LEASE = 0.5
"""Seconds a process may answer from its key cache after its last confirmed catch-up."""


@dataclass(frozen=True, slots=True)
class OfferedKey:
    """A well-formed token: the key it names and the SHA-256 of the secret it carries."""

    key_id: UUID
    secret_hash: bytes


@dataclass(frozen=True, slots=True)
class ActiveKey:
    """An unrevoked key as stored: its tenant and the SHA-256 of its secret."""

    key_id: UUID
    tenant_id: str
    secret_hash: bytes

    def tenant_for(self, offered: OfferedKey) -> str | None:
        """This key's tenant if ``offered`` is this key with its secret; None otherwise."""
        # Digests have one length: the comparison time says nothing about the secret.
        if offered.key_id != self.key_id:
            return None
        if not hmac.compare_digest(self.secret_hash, offered.secret_hash):
            return None
        return self.tenant_id


def _secret_hash(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("ascii")).digest()


def create_api_key(conn: psycopg.Connection[Any], tenant_id: str, *, now: datetime) -> ApiKeyIssued:
    """Issue a key for the tenant; the returned token is the only copy of its secret."""
    _one_connection_per_node(conn)
    require_tenant(conn, tenant_id)
    # Always random ids, never the store's injectable id factory: a deterministic factory
    # (replays) restarted on a kept database would reissue an existing key_id.
    key_id = uuid4()
    secret = secrets.token_urlsafe(_SECRET_BYTES)
    with conn.cursor(row_factory=class_row(ApiKey)) as cur:
        cur.execute(
            """
            INSERT INTO api_keys (key_id, tenant_id, secret_hash, created_at)
            VALUES (%(key_id)s, %(tenant_id)s, %(secret_hash)s, %(now)s)
            RETURNING"""
            + _COLUMNS,
            {
                "key_id": key_id,
                "tenant_id": tenant_id,
                "secret_hash": _secret_hash(secret),
                "now": now,
            },
        )
        row = cur.fetchone()
    assert row is not None
    return ApiKeyIssued(**row.model_dump(), api_key=f"{PREFIX}{key_id.hex}_{secret}")


def _one_connection_per_node(conn: psycopg.Connection[Any]) -> None:
    # On Citus, api_keys is a reference table that a distributed one references (ui_sessions):
    # a transaction that changes it works over one connection per node. Without Citus the
    # setting is an inert placeholder.
    conn.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")


def parse_token(api_key: str) -> OfferedKey | None:
    """The key a token names and its secret's hash; None if the token is malformed."""
    match = _TOKEN.fullmatch(api_key)
    if match is None:
        return None
    return OfferedKey(UUID(hex=match[1]), _secret_hash(match[2]))


def find_active_key(conn: psycopg.Connection[Any], key_id: UUID) -> ActiveKey | None:
    """The key if it exists and is not revoked.

    Revoked is revoked whatever the request's clock says: a client-set time (X-SGAM-Now)
    before revoked_at must not bring a key back.
    """
    with conn.cursor(row_factory=class_row(ActiveKey)) as cur:
        cur.execute(
            "SELECT key_id, tenant_id, secret_hash FROM sgam_active_key(%(key_id)s)",
            {"key_id": key_id},
        )
        return cur.fetchone()


def authenticate(conn: psycopg.Connection[Any], api_key: str) -> str | None:
    """The tenant a token belongs to; None if it is malformed, unknown or revoked."""
    offered = parse_token(api_key)  # hashed whether or not the key id exists: same work
    if offered is None:
        return None
    key = find_active_key(conn, offered.key_id)
    return None if key is None else key.tenant_for(offered)


def revoke_api_key(conn: psycopg.Connection[Any], key_id: UUID, *, now: datetime) -> ApiKeyRevoked:
    """Revoke a key from ``now``; a key already revoked keeps its first ``revoked_at``.

    The key's tenant is learnt first (``sgam_key_tenant``, migration 0012), then named for the
    rest of the transaction.
    """
    _one_connection_per_node(conn)
    found = conn.execute("SELECT sgam_key_tenant(%(key_id)s)", {"key_id": key_id}).fetchone()
    if found is None or found[0] is None:
        raise NotFound(f"API key {key_id} does not exist", field="key_id")
    enter_tenant(conn, found[0])
    with conn.cursor(row_factory=class_row(ApiKey)) as cur:
        cur.execute(
            # The tenant named too: on Citus a locking read must be of one shard.
            "SELECT" + _COLUMNS + "FROM api_keys"
            " WHERE tenant_id = %(tenant_id)s AND key_id = %(key_id)s FOR UPDATE",
            {"key_id": key_id, "tenant_id": found[0]},
        )
        key = cur.fetchone()
        if key is None:
            raise NotFound(f"API key {key_id} does not exist", field="key_id")
        if key.revoked_at is not None:
            return ApiKeyRevoked(**key.model_dump(), status="unchanged")
        if now < key.created_at:
            raise InvalidInput(
                f"system time {now.isoformat()} is before the key was created"
                f" ({key.created_at.isoformat()})",
                field="now",
            )
        cur.execute(
            "UPDATE api_keys SET revoked_at = %(now)s"
            " WHERE tenant_id = %(tenant_id)s AND key_id = %(key_id)s RETURNING" + _COLUMNS,
            {"key_id": key_id, "now": now, "tenant_id": found[0]},
        )
        revoked = cur.fetchone()
    assert revoked is not None
    announce_key_change(conn, key_id)
    return ApiKeyRevoked(**revoked.model_dump(), status="revoked")


def announce_key_change(conn: psycopg.Connection[Any], key_id: UUID) -> None:
    """Tell every server process to drop ``key_id`` from its cache once this transaction
    commits (PostgreSQL sends nothing for one that rolls back, and delivers in commit order)."""
    conn.execute(
        "SELECT pg_notify(%(channel)s, %(key_id)s)",
        {"channel": KEY_CHANGED_CHANNEL, "key_id": str(key_id)},
    )


def list_api_keys(conn: psycopg.Connection[Any], tenant_id: str) -> list[ApiKey]:
    """The tenant's keys, revoked ones included, oldest first; NotFound for no such tenant."""
    require_tenant(conn, tenant_id)
    with conn.cursor(row_factory=class_row(ApiKey)) as cur:
        cur.execute(
            "SELECT" + _COLUMNS + "FROM api_keys WHERE tenant_id = %(tenant_id)s"
            " ORDER BY created_at, key_id",
            {"tenant_id": tenant_id},
        )
        return cur.fetchall()
