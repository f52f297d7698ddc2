"""Bulk import, what is stored already: the state of the keys an import writes, and values as
the database returns them once stored.

A key's state is its current versions and its retractions, so only keys of subjects holding
either are read. Values holding a float make one round trip through jsonb, since only they can
come back otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from store.contract.values import JsonValue, canonical
from store.episodes.bulk import has_float
from store.errors import InvalidInput
from store.facts import versions
from store.facts.temporal import Version
from store.facts.versions import Key, as_version

_HELD_SUBJECTS = """
SELECT subject FROM fact_versions
WHERE tenant_id = %(tenant_id)s AND retired_at IS NULL AND subject = ANY(%(subjects)s)
UNION
SELECT subject FROM retractions WHERE tenant_id = %(tenant_id)s AND subject = ANY(%(subjects)s)
"""
"""Which of these subjects hold a current version or a retraction: their keys have a state."""


def key_state(
    conn: psycopg.Connection[Any], tenant_id: str, keys: Iterable[Key], *, now: datetime
) -> tuple[dict[Key, list[Version]], dict[Key, InvalidInput]]:
    """The keys' stored current knowledge, and the keys this system time may not write.

    Only keys of subjects with a current version or a retraction can have either, so only
    those are read (a key's state is its current versions and its retractions).
    """
    keys = list(keys)
    params = {"tenant_id": tenant_id, "subjects": sorted({key[0] for key in keys})}
    held = {subject for (subject,) in conn.execute(_HELD_SUBJECTS, params)}
    keys = [key for key in keys if key[0] in held]
    if not keys:  # the import's first facts on all its subjects: nothing to read
        return {}, {}
    facts = versions.load_current_keys(conn, tenant_id=tenant_id, keys=keys, now=now)
    last = versions.last_system_times(conn, tenant_id=tenant_id, current=facts)
    current = {key: [as_version(fact) for fact in found] for key, found in facts.items()}
    return current, versions.refused_keys(now, last)


def stored_values(
    conn: psycopg.Connection[Any], values: Iterable[JsonValue]
) -> Callable[[JsonValue], JsonValue]:
    """A function giving a value as the database returns it once stored as jsonb.

    Only numbers with a fraction or an exponent can come back otherwise (``1e20`` returns as
    ``100000000000000000000``), so only values holding a float make the round trip.
    """
    floating = {canonical(value): value for value in values if has_float(value)}
    returned: dict[str, JsonValue] = {}
    if floating:
        sent = list(floating.values())
        rows = conn.execute(
            "SELECT value FROM unnest(%(values)s::jsonb[]) WITH ORDINALITY AS v(value, n)"
            " ORDER BY n",
            {"values": [Jsonb(value) for value in sent]},
        ).fetchall()
        returned = {canonical(value): row[0] for value, row in zip(sent, rows, strict=True)}

    def stored(value: JsonValue) -> JsonValue:
        return returned.get(canonical(value), value) if returned and has_float(value) else value

    return stored
