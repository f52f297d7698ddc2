"""Serializing writers: transaction-scoped advisory locks per key, bounded retries.

Writers to one (tenant, subject, attribute) queue on the key's lock, so each sees the previous
writer's committed versions; writers to different keys run in parallel. Every key writer also
holds its tenant's lock in shared mode, which a bulk import takes in exclusive mode instead of
one lock per key. So does any writer of more than ``KEY_LOCKS_AT_MOST`` keys: PostgreSQL's lock
table is shared by every transaction and holds about 64 locks per connection, so one transaction
taking a lock per key of a big tenant would fill it, fail ("out of shared memory") and make other
tenants' writes fail with it. Deadlocks and serialization failures are retried a bounded number
of times; any other error (a constraint violation would only recur) propagates at once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

import psycopg
from psycopg import errors
from tenacity import (
    AsyncRetrying,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_random_exponential,
)

T = TypeVar("T")

RETRYABLE = (errors.SerializationFailure, errors.DeadlockDetected)
MAX_ATTEMPTS = 5

TENANT_LOCKS = 0x5347
"""The first half of a tenant lock's two-integer key: a key space apart from the keys' locks."""

KEY_LOCKS_AT_MOST = 256
"""The most key locks one ``lock_keys`` takes; past it, the tenant's lock alone, exclusively."""

# The tenant's lock first, then the keys' in lock-id order (not name order), so writers holding
# several can never wait on each other in a cycle, even when two keys hash alike. The lock
# functions are volatile, so PostgreSQL calls them row by row after the sort.
_LOCK_KEYS = """
SELECT CASE WHEN lock_id IS NULL
            THEN pg_advisory_xact_lock_shared(%(space)s, hashtext(%(tenant_id)s))
            ELSE pg_advisory_xact_lock(lock_id) END
FROM (SELECT NULL::bigint AS lock_id
      UNION ALL
      SELECT DISTINCT hashtextextended(key, 0) FROM unnest(%(keys)s::text[]) AS key) AS locks
ORDER BY lock_id NULLS FIRST
"""


def key_lock_name(tenant_id: str, subject: str, attribute: str) -> str:
    """The text a key's advisory lock id is hashed from."""
    return "\x1f".join((tenant_id, subject, attribute))


def lock_keys(
    conn: psycopg.Connection[Any], *, tenant_id: str, keys: Iterable[tuple[str, str]]
) -> None:
    """Hold the tenant's lock (shared), then each (subject, attribute) key's, until commit.

    One statement, one round trip; the tenant's lock always comes first and the keys' in
    lock-id order, so no two writers can deadlock on them. More than ``KEY_LOCKS_AT_MOST`` keys
    take the tenant's lock exclusively instead, which covers every key of the tenant: the
    tenant's other writers wait for this one's commit, as they do for a bulk import's.
    """
    names = sorted({key_lock_name(tenant_id, subject, attribute) for subject, attribute in keys})
    if len(names) > KEY_LOCKS_AT_MOST:
        lock_tenants(conn, [tenant_id])
        return
    conn.execute(_LOCK_KEYS, {"space": TENANT_LOCKS, "tenant_id": tenant_id, "keys": names})


def lock_tenants(conn: psycopg.Connection[Any], tenant_ids: Iterable[str]) -> None:
    """Hold the tenants' locks exclusively until commit: no key writer of theirs runs meanwhile.

    Taken in sorted order, so two bulk writers cannot deadlock.
    """
    for tenant_id in sorted(set(tenant_ids)):
        conn.execute(
            "SELECT pg_advisory_xact_lock(%(space)s, hashtext(%(tenant_id)s))",
            {"space": TENANT_LOCKS, "tenant_id": tenant_id},
        )


_RETRYING = Retrying(
    retry=retry_if_exception_type(RETRYABLE),
    stop=stop_after_attempt(MAX_ATTEMPTS),
    wait=wait_random_exponential(multiplier=0.01, max=0.5),
    reraise=True,
)


def with_retries(function: Callable[..., T]) -> Callable[..., T]:
    """Re-run a transaction on deadlock or serialization failure, at most MAX_ATTEMPTS times.

    The retry policy is built once: wrapping runs on every store call.
    """

    def attempts(*args: Any, **kwargs: Any) -> T:
        return _RETRYING.copy()(function, *args, **kwargs)

    return attempts


async def async_retries(attempt: Callable[[], Awaitable[T]]) -> T:
    """``attempt()`` awaited under ``with_retries``'s policy (asyncio: the waits do not block)."""
    async for retrying in AsyncRetrying(
        retry=_RETRYING.retry, stop=_RETRYING.stop, wait=_RETRYING.wait, reraise=True
    ):
        with retrying:
            return await attempt()
    raise AssertionError("unreachable: the last attempt's error is reraised")
