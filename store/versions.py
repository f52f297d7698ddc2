"""Rows of ``fact_versions``: loading keys, retiring and inserting versions, shaping facts."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import fields
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from store.clock import Clock
from store.errors import InvalidInput
from store.locks import lock_keys
from store.models import Fact
from store.temporal import Plan, Version

IdFactory = Callable[[], UUID]

Key = tuple[str, str]
"""A key of one tenant: (subject, attribute)."""

COLUMNS = """
    version_id, fact_id, subject, attribute, value, valid_from, valid_to, recorded_at,
    retired_at, supersedes, ended_by, ended_by_kind, source_episode_id, source_kind, evidence,
    evidence_verified, schema_version,
    CASE
        WHEN retired_at IS NOT NULL AND retired_at <= %(now)s THEN 'retired'
        WHEN valid_from > %(now)s THEN 'future'
        WHEN valid_to IS NOT NULL AND valid_to <= %(now)s THEN 'past'
        ELSE 'current'
    END AS status
"""
"""A version's columns read as a ``Fact``; ``status`` is where it stands at ``%(now)s``."""

_KEYS = """
    tenant_id = %(tenant_id)s
    AND (subject, attribute) IN (SELECT * FROM unnest(%(subjects)s::text[], %(attributes)s::text[]))
"""


def select_facts(conn: psycopg.Connection[Any], query: str, params: dict[str, Any]) -> list[Fact]:
    """Rows of ``query`` (SQL of this package selecting ``COLUMNS``) as facts."""
    with conn.cursor(row_factory=class_row(Fact)) as cur:
        cur.execute(query.encode(), params)
        return cur.fetchall()


_VERSION_FIELDS = tuple(field.name for field in fields(Version))


def as_version(fact: Fact) -> Version:
    """A stored fact as the temporal rules see it: the fields a ``Version`` has, as stored."""
    return Version(**{name: getattr(fact, name) for name in _VERSION_FIELDS})


def _key_params(tenant_id: str, keys: Iterable[Key]) -> dict[str, Any]:
    wanted = sorted(set(keys))
    return {
        "tenant_id": tenant_id,
        "subjects": [subject for subject, _ in wanted],
        "attributes": [attribute for _, attribute in wanted],
    }


def load_current_keys(
    conn: psycopg.Connection[Any], *, tenant_id: str, keys: Iterable[Key], now: datetime
) -> dict[Key, list[Fact]]:
    """Each key's versions in current knowledge, by valid_from: one statement for all keys."""
    params = _key_params(tenant_id, keys)
    found: dict[Key, list[Fact]] = {
        key: [] for key in zip(params["subjects"], params["attributes"], strict=True)
    }
    # ``subject = ANY`` lets the partial btree on current knowledge find the rows: probing the
    # exclusion constraint's GiST index key by key costs about three times as much.
    query = (
        "SELECT"
        + COLUMNS
        + "FROM fact_versions WHERE retired_at IS NULL AND subject = ANY(%(subjects)s) AND"
        + _KEYS
        + "ORDER BY subject, attribute, valid_from"
    )
    for fact in select_facts(conn, query, {**params, "now": now}):
        found[fact.subject, fact.attribute].append(fact)
    return found


def load_current(
    conn: psycopg.Connection[Any],
    *,
    tenant_id: str,
    subject: str,
    attribute: str,
    now: datetime,
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
    last = {key: max(fact.recorded_at for fact in facts) for key, facts in current.items() if facts}
    retracted = conn.execute(
        "SELECT subject, attribute, max(retracted_at) FROM retractions"
        " WHERE" + _KEYS + "GROUP BY subject, attribute",
        _key_params(tenant_id, current),
    ).fetchall()
    for subject, attribute, at in retracted:
        key = (subject, attribute)
        last[key] = max(last.get(key, at), at)
    return last


def new_row(version: Version, *, subject: str, attribute: str, version_id: UUID) -> dict[str, Any]:
    """A new version of the key as JSON: what ``_INSERT`` reads (tenant and system time aside).

    One JSON parameter for all rows costs a fraction of binding each column as an array.
    """
    return {
        "version_id": str(version_id),
        "fact_id": str(version.fact_id),
        "subject": subject,
        "attribute": attribute,
        "value": version.value,
        "valid_from": version.valid_from.isoformat(),
        "valid_to": _text(version.valid_to),
        "supersedes": _text(version.supersedes),
        "ended_by": _text(version.ended_by),
        "ended_by_kind": version.ended_by_kind,
        "source_episode_id": version.source_episode_id,
        "source_kind": version.source_kind,
        "evidence": version.evidence,
        "evidence_verified": version.evidence_verified,
        "schema_version": version.schema_version,
    }


def _text(value: UUID | datetime | None) -> str | None:
    if value is None:
        return None
    return value.isoformat() if isinstance(value, datetime) else str(value)


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


# One statement for every new version of a call, in the rows' order (``write_order``).
_INSERT = (
    """
INSERT INTO fact_versions (
    tenant_id, recorded_at, version_id, fact_id, subject, attribute, value, valid_from,
    valid_to, supersedes, ended_by, ended_by_kind, source_episode_id, source_kind, evidence,
    evidence_verified, schema_version
)
SELECT %(tenant_id)s, %(now)s, * FROM jsonb_to_recordset(%(rows)s) AS row(
    version_id uuid, fact_id uuid, subject text, attribute text, value jsonb,
    valid_from timestamptz, valid_to timestamptz, supersedes uuid, ended_by uuid,
    ended_by_kind text, source_episode_id text, source_kind text, evidence text,
    evidence_verified boolean, schema_version integer
)
RETURNING"""
    + COLUMNS
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
        """Retire, then insert, everything queued: two statements at most."""
        params = {"tenant_id": self.tenant_id, "now": self.now}
        retire(conn, tenant_id=self.tenant_id, version_ids=self._retire, at=self.now)
        if self._rows:
            inserted = select_facts(conn, _INSERT, params | {"rows": Jsonb(self._rows)})
            self._facts.update((fact.version_id, fact) for fact in inserted)
        self._retire, self._rows = [], []

    def fact(self, version_id: UUID) -> Fact:
        """A fact queued or shown before the last flush, by version id."""
        return self._facts[version_id]


def hold_keys(
    conn: psycopg.Connection[Any], clock: Clock, *, tenant_id: str, keys: Sequence[Key]
) -> tuple[datetime, dict[Key, list[Fact]], dict[Key, InvalidInput]]:
    """Lock the keys, then read the write's system time once; their current knowledge then, and
    the keys it would take back in time, refused with the reason.

    Read once every lock is held, system time orders each key's writers as they commit; a key
    whose knowledge last changed after it may not be written.
    """
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
