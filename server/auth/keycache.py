"""Verified API keys kept in process, so a known key costs no database round trip.

The guarantee: once ``revoke_api_key`` has returned to its caller, every later request with
that key is 401, in every server process. It holds because:

- A process answers from its cache only under a fresh *lease*: less than ``KEY_CACHE_LEASE``
  seconds ago, its listener (``server/auth/keylistener.py``) began a catch-up that then completed,
  and a completed catch-up means every key change committed before it began has been received
  and applied. A catch-up is a notification the listener sends itself; PostgreSQL delivers
  notifications in commit order, so its own arrives after every earlier one.
- ``revoke_api_key`` waits ``KEY_CACHE_LEASE`` after its commit before it returns. A request
  after that answered from a cache runs under a lease that began after the commit, so the key
  is already gone from that cache; any other request checks the key in the database.
- A database read that raced a change does not refill the cache: every change bumps a
  generation, and a read's result is kept only if the generation it began under still holds.
- When the listener's connection fails, the cache is emptied and the lease voided until the
  listener has reconnected and caught up again; meanwhile every key is checked in the database.

A key changed by hand in SQL (no wait) is refused everywhere within ``KEY_CACHE_LEASE``.
A cache hit needs no transaction of its own, so a per-transaction tenant setting (row-level
security) can travel with the request's first statement.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from uuid import UUID

import anyio.to_thread

from store.api.admin import AdminCalls
from store.governance.keys import KEY_CACHE_LEASE, ActiveKey, parse_token

_NO_LEASE = float("-inf")


class KeyCache:
    """Active keys by key_id, served only under a fresh lease; safe to share across threads."""

    def __init__(
        self, *, lease: float = KEY_CACHE_LEASE, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.lease = lease
        self.clock = clock
        self._lock = threading.Lock()
        self._keys: dict[UUID, ActiveKey] = {}
        self._generation = 0
        self._caught_up_at = _NO_LEASE

    @property
    def generation(self) -> int:
        """Changes whenever a key may have changed; pass it back to ``remember``."""
        with self._lock:
            return self._generation

    @property
    def fresh(self) -> bool:
        """Whether the cache may answer now."""
        with self._lock:
            return self._fresh()

    def holds(self, key_id: UUID) -> bool:
        """Whether the key is held, lease or not."""
        with self._lock:
            return key_id in self._keys

    def _fresh(self) -> bool:
        return self.clock() - self._caught_up_at < self.lease

    def lookup(self, key_id: UUID) -> ActiveKey | None:
        """The cached key, or None when it is not held or the lease has run out."""
        with self._lock:
            return self._keys.get(key_id) if self._fresh() else None

    def remember(self, key: ActiveKey, *, generation: int) -> None:
        """Keep a key read from the database, unless a change came in since the read began."""
        with self._lock:
            if generation == self._generation:
                self._keys[key.key_id] = key

    def drop(self, key_id: UUID | None) -> None:
        """Forget one changed key (None: every key)."""
        with self._lock:
            self._generation += 1
            if key_id is None:
                self._keys.clear()
            else:
                self._keys.pop(key_id, None)

    def caught_up(self, *, since: float) -> None:
        """Every change committed before ``since`` (this cache's clock) has been dropped."""
        with self._lock:
            self._caught_up_at = max(self._caught_up_at, since)

    def lapse(self) -> None:
        """Forget every key and void the lease: changes may have been missed."""
        with self._lock:
            self._generation += 1
            self._keys.clear()
            self._caught_up_at = _NO_LEASE


async def authenticate(token: str, *, cache: KeyCache, admin: AdminCalls) -> str | None:
    """The tenant of a valid, unrevoked key (None for anything else); the cache first."""
    offered = parse_token(token)
    if offered is None:
        return None
    key = cache.lookup(offered.key_id)
    if key is None:
        key = await anyio.to_thread.run_sync(_load, offered.key_id, cache, admin)
    return None if key is None else key.tenant_for(offered)


def _load(key_id: UUID, cache: KeyCache, admin: AdminCalls) -> ActiveKey | None:
    generation = cache.generation  # taken before the read: a change during it wins
    key = admin.find_active_key(key_id)
    if key is not None:
        cache.remember(key, generation=generation)
    return key
