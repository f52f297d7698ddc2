"""Each tenant's receipt secrets: the keys its receipts' hashes are made with, by version.

A tenant's first receipt creates its secret (version 1: 32 random bytes). A rotation adds the
next version, which every receipt made after it uses; the older versions stay, so receipts made
with them still compare (``store.contract.receipts``). The secrets never leave the server.

The current secret is asked of the database once per ``REMEMBERED_S`` seconds per process and
tenant, not by every call that leaves receipts: a rotation made by another process reaches this
one's receipts within that time (the rotating process's at once).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import psycopg

from store.contract.receipts import (
    LEGACY_SECRET_VERSION,
    Keyring,
    OwnerKind,
    SecretVersion,
    owner_keys,
)
from store.errors import Conflict

REMEMBERED_S = 60.0
"""How long a process uses the current secret it read before asking again."""
SECRET_BYTES = 32

_CURRENT = """
SELECT version, secret FROM receipt_secrets WHERE tenant_id = %(tenant_id)s
ORDER BY version DESC LIMIT 1
"""
# The next version (with ``first``, only a tenant's first). Of two at once, one adds nothing.
_ADD = """
INSERT INTO receipt_secrets (tenant_id, version, secret, created_at)
SELECT %(tenant_id)s::sgam_identifier, coalesce(max(version), 0) + 1, %(secret)s, %(now)s
FROM receipt_secrets WHERE tenant_id = %(tenant_id)s
HAVING %(first)s IS FALSE OR count(*) = 0
ON CONFLICT DO NOTHING
RETURNING version, created_at
"""

_remembered: dict[tuple[str, str], tuple[float, int, bytes]] = {}
_guard = threading.Lock()


def _place(conn: psycopg.Connection[Any], tenant_id: str) -> tuple[str, str]:
    """The tenant in this database: the same tenant id names another tenant elsewhere."""
    info = conn.info
    return f"{info.host}:{info.port}/{info.dbname}", tenant_id


def current_secret(
    conn: psycopg.Connection[Any], tenant_id: str, *, now: datetime
) -> tuple[int, bytes]:
    """The tenant's current secret and its version, made if it has none yet.

    Only a secret read back committed is remembered: one this transaction made may yet roll back.
    """
    place = _place(conn, tenant_id)
    with _guard:
        remembered = _remembered.get(place)
    if remembered is not None and time.monotonic() - remembered[0] < REMEMBERED_S:
        return remembered[1], remembered[2]
    row = conn.execute(_CURRENT, {"tenant_id": tenant_id}).fetchone()
    if row is None:
        made = secrets.token_bytes(SECRET_BYTES)
        added = _add(conn, tenant_id, secret=made, now=now, first=True)
        if added is not None:
            return added.secret_version, made
        row = conn.execute(_CURRENT, {"tenant_id": tenant_id}).fetchone()
        assert row is not None  # another call made it first, and committed
    version, secret = int(row[0]), bytes(row[1])
    with _guard:
        _remembered[place] = (time.monotonic(), version, secret)
    return version, secret


def keyring(conn: psycopg.Connection[Any], tenant_id: str) -> Keyring:
    """Every secret the tenant's receipts may have been made with, by version (0 included)."""
    rows = conn.execute(
        "SELECT version, secret FROM receipt_secrets WHERE tenant_id = %(tenant_id)s",
        {"tenant_id": tenant_id},
    ).fetchall()
    return {LEGACY_SECRET_VERSION: b"", **{int(v): bytes(s) for v, s in rows}}


def owner_hashes(
    conn: psycopg.Connection[Any], tenant_id: str, kind: OwnerKind, owners: Sequence[str]
) -> list[str]:
    """The ``owner_key`` of each of ``owners`` under every secret of the tenant: what finds
    their receipts, whichever version each was made with."""
    if not owners:
        return []
    ring = keyring(conn, tenant_id)
    return sorted({key for owner in owners for key in owner_keys(tenant_id, kind, owner, ring)})


def rotate(conn: psycopg.Connection[Any], tenant_id: str, *, now: datetime) -> SecretVersion:
    """Add the tenant's next secret: receipts made from now on use it."""
    added = _add(conn, tenant_id, secret=secrets.token_bytes(SECRET_BYTES), now=now, first=False)
    if added is None:
        raise Conflict("another rotation of the receipt secret ran at the same time; try again")
    return added


def forget(conn: psycopg.Connection[Any], tenant_id: str) -> None:
    """Ask the database again for the tenant's current secret next time (after a rotation)."""
    with _guard:
        _remembered.pop(_place(conn, tenant_id), None)


def _add(
    conn: psycopg.Connection[Any], tenant_id: str, *, secret: bytes, now: datetime, first: bool
) -> SecretVersion | None:
    params = {"tenant_id": tenant_id, "secret": secret, "now": now, "first": first}
    row = conn.execute(_ADD, params).fetchone()
    if row is None:
        return None
    return SecretVersion(tenant_id=tenant_id, secret_version=row[0], created_at=row[1])
