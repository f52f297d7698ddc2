"""Serializing writers: one transaction-scoped advisory lock per key, bounded retries.

Writers to one (tenant, subject, attribute) queue on the key's lock, so each sees the previous
writer's committed versions; writers to different keys run in parallel. Deadlocks and
serialization failures are retried a bounded number of times; any other error (a constraint
violation would only recur) propagates at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import psycopg
from psycopg import errors
from tenacity import (
    retry,
    retry_if_exception_type,
    stop_after_attempt,
    wait_random_exponential,
)

T = TypeVar("T")

RETRYABLE = (errors.SerializationFailure, errors.DeadlockDetected)
MAX_ATTEMPTS = 5


def lock_key(
    conn: psycopg.Connection[Any], *, tenant_id: str, subject: str, attribute: str
) -> None:
    """Hold the key's advisory lock until the transaction ends."""
    conn.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended(%(key)s, 0))",
        {"key": "\x1f".join((tenant_id, subject, attribute))},
    )


def lock_keys(
    conn: psycopg.Connection[Any], *, tenant_id: str, keys: Iterable[tuple[str, str]]
) -> None:
    """Lock several (subject, attribute) keys in sorted order, so such writers cannot deadlock.

    A single-key writer never holds another key's lock, so it cannot take part in a cycle.
    """
    for subject, attribute in sorted(set(keys)):
        lock_key(conn, tenant_id=tenant_id, subject=subject, attribute=attribute)


def with_retries(function: Callable[..., T]) -> Callable[..., T]:
    """Re-run a transaction on deadlock or serialization failure, at most MAX_ATTEMPTS times."""
    return retry(
        retry=retry_if_exception_type(RETRYABLE),
        stop=stop_after_attempt(MAX_ATTEMPTS),
        wait=wait_random_exponential(multiplier=0.01, max=0.5),
        reraise=True,
    )(function)
