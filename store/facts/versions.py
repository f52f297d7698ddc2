"""Rows of ``fact_versions``: loading keys, retiring and inserting versions, holding keys."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from store.contract.facts import Fact
from store.db.clock import Clock
from store.db.locks import lock_keys
from store.errors import InvalidInput
from store.facts.rows import (
    COLUMNS,
    INSERT_VERSIONS,
    KEYS,
    STORED,
    IdFactory,
    Key,
    as_version,
    key_params,
    new_row,
    select_facts,
    status_at,
)
from store.facts.temporal import Plan

__all__ = [  # the row shapes of ``store.facts.rows`` are used from here too
    "COLUMNS",
    "IdFactory",
    "Key",
    "KeyState",
    "PendingWrites",
    "apply_plan",
    "as_version",
    "ask_key_state",
    "hold_key",
    "hold_keys",
    "last_system_times",
    "load_current",
    "load_current_keys",
    "new_row",
    "refused_keys",
    "retire",
    "select_facts",
]

# ``subject = ANY`` lets the partial btree on current knowledge find the rows: probing the
# exclusion constraint's GiST index key by key costs about three times as much.
_CURRENT = """
FROM fact_versions WHERE retired_at IS NULL AND subject = ANY(%(subjects)s) AND""" + (
    KEYS + "ORDER BY subject, attribute, valid_from"
)
_RETRACTED = (
    "SELECT subject, attribute, max(retracted_at) FROM retractions WHERE"
    + KEYS
    + "GROUP BY subject, attribute"
)


def _by_key(params: dict[str, Any], facts: Iterable[Fact]) -> dict[Key, list[Fact]]:
    found: dict[Key, list[Fact]] = {
        key: [] for key in zip(params["subjects"], params["attributes"], strict=True)
    }
    for fact in facts:
        found[fact.subject, fact.attribute].append(fact)
    return found


def load_current_keys(
    conn: psycopg.Connection[Any], *, tenant_id: str, keys: Iterable[Key], now: datetime
) -> dict[Key, list[Fact]]:
    """Each key's versions in current knowledge, by valid_from: one statement for all keys."""
    params = key_params(tenant_id, keys)
    query = "SELECT" + COLUMNS + _CURRENT
    return _by_key(params, select_facts(conn, query, {**params, "now": now}))


def load_current(
    conn: psycopg.Connection[Any], *, tenant_id: str, subject: str, attribute: str, now: datetime
) -> list[Fact]:
    """The key's versions in current knowledge, by valid_from."""
    key = (subject, attribute)
    return load_current_keys(conn, tenant_id=tenant_id, keys=[key], now=now)[key]


def last_system_times(
    conn: psycopg.Connection[Any], *, tenant_id: str, current: dict[Key, list[Fact]]
) -> dict[Key, datetime]:
    """When each key's knowledge last changed, given its ``current`` versions (absent: never).

    That is the latest ``recorded_at`` among its current versions, or its latest retraction if
    later: every write that retires a version inserts another at the same instant (a closed
    window, a successor, a replacement, a rebuilt neighbour), except a retraction that leaves
    nothing to rebuild, which the retractions log records. So no scan of retired versions (the
    exclusion constraint's GiST index, the only one holding them by key) is needed.
    """
    retracted = conn.execute(_RETRACTED, key_params(tenant_id, current)).fetchall()
    return _last_changes(current, retracted)


def _last_changes(
    current: dict[Key, list[Fact]], retracted: Iterable[tuple[str, str, datetime]]
) -> dict[Key, datetime]:
    last = {key: max(fact.recorded_at for fact in facts) for key, facts in current.items() if facts}
    for subject, attribute, at in retracted:
        key = (subject, attribute)
        last[key] = max(last.get(key, at), at)
    return last


KeyState = Callable[[datetime], tuple[dict[Key, list[Fact]], dict[Key, datetime]]]
"""Given system time: the keys' current knowledge and when each last changed."""


def ask_key_state(
    conn: psycopg.Connection[Any], *, tenant_id: str, keys: Iterable[Key]
) -> KeyState:
    """Send the reads of ``load_current_keys`` and ``last_system_times`` for the keys, both at
    once; read them once system time is known.

    Sent after the keys' locks, they see each key's last committed writer, as when the clock is
    read first; each status is then set as ``COLUMNS`` would set it at that time.
    """
    params = key_params(tenant_id, keys)
    facts = conn.cursor(row_factory=class_row(Fact))
    facts.execute(("SELECT" + STORED + " 'current' AS status" + _CURRENT).encode(), params)
    retracted = conn.cursor()
    retracted.execute(_RETRACTED.encode(), params)

    def state(now: datetime) -> tuple[dict[Key, list[Fact]], dict[Key, datetime]]:
        with facts, retracted:
            current = _by_key(params, facts.fetchall())
            for fact in (fact for found in current.values() for fact in found):
                fact.status = status_at(fact, now)
            return current, _last_changes(current, retracted.fetchall())

    return state


def retire(
    conn: psycopg.Connection[Any], *, tenant_id: str, version_ids: list[UUID], at: datetime
) -> None:
    """End the system window of these versions at ``at``: they stop being believed."""
    if version_ids:
        conn.execute(
            "UPDATE fact_versions SET retired_at = %(at)s WHERE tenant_id = %(tenant_id)s"
            " AND version_id = ANY(%(ids)s) AND retired_at IS NULL",
            {"tenant_id": tenant_id, "ids": version_ids, "at": at},
        )


class PendingWrites:
    """The plans of several keys at one system time, written together by ``flush``.

    A key may appear in one plan per flush: flush before planning it again, so the plan sees
    the key's new state.
    """

    def __init__(self, *, tenant_id: str, now: datetime, new_id: IdFactory) -> None:
        self.tenant_id = tenant_id
        self.now = now
        self._new_id = new_id
        self._retire: list[UUID] = []
        self._rows: list[dict[str, Any]] = []
        self._facts: dict[UUID | None, Fact] = {}
        self._inserted: list[psycopg.Cursor[Fact]] = []

    def add(
        self, plan: Plan, *, subject: str, attribute: str, current: Sequence[Fact]
    ) -> UUID | None:
        """Queue what the plan retires and inserts; the version id the caller should see.

        Version ids are drawn here, in plan order, as the writes would draw them one by one.
        """
        self._retire.extend(version.version_id for version in plan.retire if version.version_id)
        self._facts.update((fact.version_id, fact) for fact in current)
        shown = None if plan.shown is None else plan.shown.version_id
        for version in plan.insert:
            version_id = self._new_id()
            self._rows.append(
                new_row(version, subject=subject, attribute=attribute, version_id=version_id)
            )
            if version is plan.shown:
                shown = version_id
        return shown

    def flush(self, conn: psycopg.Connection[Any]) -> None:
        """Retire, then insert, everything queued: two statements at most.

        The inserted rows are read only when ``fact`` first needs them, so in pipeline mode the
        statements can travel with the ones after them (the commit, say).
        """
        params = {"tenant_id": self.tenant_id, "now": self.now}
        retire(conn, tenant_id=self.tenant_id, version_ids=self._retire, at=self.now)
        if self._rows:
            inserted = conn.cursor(row_factory=class_row(Fact))
            inserted.execute(INSERT_VERSIONS.encode(), params | {"rows": Jsonb(self._rows)})
            self._inserted.append(inserted)
        self._retire, self._rows = [], []

    def fact(self, version_id: UUID) -> Fact:
        """A fact queued or shown before the last flush, by version id."""
        for inserted in self._inserted:
            with inserted:
                self._facts.update((fact.version_id, fact) for fact in inserted.fetchall())
        self._inserted = []
        return self._facts[version_id]


def hold_keys(
    conn: psycopg.Connection[Any],
    clock: Clock,
    *,
    tenant_id: str,
    keys: Sequence[Key],
    locked: bool = False,
) -> tuple[datetime, dict[Key, list[Fact]], dict[Key, InvalidInput]]:
    """Lock the keys (unless ``locked``: the caller's locks cover them), then read the write's
    system time once; their current knowledge then, and the keys it would take back in time,
    refused with the reason. Read once every lock is held, system time orders each key's
    writers as they commit; a key whose knowledge last changed after it may not be written."""
    if not locked:
        lock_keys(conn, tenant_id=tenant_id, keys=keys)
    now = clock()
    current = load_current_keys(conn, tenant_id=tenant_id, keys=keys, now=now)
    last = last_system_times(conn, tenant_id=tenant_id, current=current)
    return now, current, refused_keys(now, last)


def refused_keys(now: datetime, last: dict[Key, datetime]) -> dict[Key, InvalidInput]:
    """The keys a write at ``now`` may not change, given when each last changed, and why."""
    return {
        key: InvalidInput(
            f"system time {now.isoformat()} is before this key's last change"
            f" ({changed.isoformat()}); writes may not go back in system time",
            field="now",
        )
        for key, changed in last.items()
        if now < changed
    }


def hold_key(
    conn: psycopg.Connection[Any], clock: Clock, *, tenant_id: str, subject: str, attribute: str
) -> datetime:
    """Lock one key, then read the write's system time: refused if before the key's last change."""
    now, _, refused = hold_keys(conn, clock, tenant_id=tenant_id, keys=[(subject, attribute)])
    for error in refused.values():
        raise error
    return now


def apply_plan(
    conn: psycopg.Connection[Any],
    plan: Plan,
    *,
    current: list[Fact],
    tenant_id: str,
    subject: str,
    attribute: str,
    now: datetime,
    new_id: IdFactory,
) -> Fact | None:
    """Retire and insert what the plan says; return the fact the caller should see."""
    writes = PendingWrites(tenant_id=tenant_id, now=now, new_id=new_id)
    shown = writes.add(plan, subject=subject, attribute=attribute, current=current)
    writes.flush(conn)
    return None if shown is None else writes.fact(shown)
