"""The bulk import onto stored knowledge, and the rows it stages: what the write path stores.

An import plans only the keys whose subjects hold a current version or a retraction against
what is stored; every other key is planned from nothing. Its rows go through a staging table
whose ids are checked once each, and the database's constraints still hold every row.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any
from uuid import uuid4

import psycopg
import pytest
from psycopg import errors
from psycopg_pool import ConnectionPool

from store.db.clock import ManualClock
from store.episodes.bulk import KeyWrites
from store.episodes.bulk_copy import copy_versions
from store.facts.temporal import Version
from store.service import MemoryStore
from tests.conftest import ts
from tests.helpers import owner_connection
from tests.store.test_import import (
    HISTORY,
    candidate,
    episode_line,
    import_text,
    new_tenant,
    one_call_at_a_time,
    stored_rows,
)


@pytest.fixture
def clock() -> ManualClock:
    """The first history's system time; the second moves it on."""
    return ManualClock(ts("2026-06-10T00:00:00Z"))


# Onto HISTORY, with an expiry and a retraction after it: stored keys changed (a window
# closed, a value repeated, several values in one file, an equal start under its policy), a
# key of a subject held only through a retraction, new keys of held subjects and of new ones.
LATER = [
    episode_line(
        "f1",
        "2026-06-20T00:00:00Z",
        candidate("mira", "deadline", "2026-10-10"),
        candidate("mira", "balance", "1e20", valid_from="2026-06-01T09:00:00Z"),
        candidate("kai", "deadline", "2026-11-11"),
        candidate("lee", "deadline", "2026-03-03"),
        candidate("noa", "balance", "5"),
        candidate("noa", "balance", "6", valid_from="2026-06-25T00:00:00Z"),
    ),
    episode_line(
        "f2",
        "2026-06-05T12:00:00Z",
        candidate("zed", "balance", "30"),
        candidate("zed", "balance", "40", valid_from="2026-06-07T00:00:00Z"),
        candidate("mira", "tier", "platinum", valid_from="2026-06-01T09:00:00Z"),
        candidate("noa", "balance", "4", valid_from="2026-06-19T00:00:00Z"),
        kind="user_confirmation",
    ),
    episode_line(
        "f3",
        "2026-06-01T09:00:00Z",
        candidate("mira", "tier", "bronze"),
        candidate("mira", "deadline", "2026-10-10", valid_from="2026-06-21T00:00:00Z"),
    ),
]


def _stored_first(store: MemoryStore, tenant: str, clock: ManualClock) -> None:
    one_call_at_a_time(store, tenant)
    clock.set(ts("2026-06-10T01:00:00Z"))
    store.facts.expire(tenant, "zed", "balance", at="2026-06-08T00:00:00Z", source_episode_id="e5")
    store.facts.retract(tenant, "lee", "deadline", valid_from="2026-06-01T09:00:00Z")
    clock.set(ts("2026-06-11T00:00:00Z"))


def test_an_import_onto_stored_knowledge_stores_what_one_call_at_a_time_stores(
    store: MemoryStore, pool: ConnectionPool, clock: ManualClock
) -> None:
    one_by_one, imported = new_tenant(store, "calls"), new_tenant(store, "import")
    for tenant in (one_by_one, imported):
        clock.set(ts("2026-06-10T00:00:00Z"))
        _stored_first(store, tenant, clock)
    results = one_call_at_a_time(store, one_by_one, LATER)
    outcome = store.episodes.import_lines(import_text(imported, LATER))

    assert stored_rows(pool, imported) == stored_rows(pool, one_by_one)
    assert outcome.candidates == dict(sorted(Counter(r.status for _, r in results).items()))
    # mira's balance "1e20" again at its stored start is a repeat: stored, it reads back as
    # 100000000000000000000, which is the same number.
    assert outcome.candidates == {"unchanged": 3, "written": 9}
    assert outcome.refused == []


def test_keys_changed_after_the_imports_system_time_are_refused_as_by_the_write_path(
    store: MemoryStore, pool: ConnectionPool, clock: ManualClock
) -> None:
    one_by_one, imported = new_tenant(store, "calls"), new_tenant(store, "import")
    for tenant in (one_by_one, imported):
        clock.set(ts("2026-06-10T00:00:00Z"))
        _stored_first(store, tenant, clock)
    clock.set(ts("2026-06-10T00:30:00Z"))  # before the expiry and the retraction
    results = one_call_at_a_time(store, one_by_one, LATER)
    outcome = store.episodes.import_lines(import_text(imported, LATER))

    assert stored_rows(pool, imported) == stored_rows(pool, one_by_one)
    refused = [
        (line, result.index, result.status, result.field)
        for line, result in results
        if result.status in {"invalid", "conflict"}
    ]
    assert [(r.line, r.index, r.status, r.field) for r in outcome.refused] == refused
    assert refused == [
        (1, 3, "invalid", "now"),  # lee's deadline: retracted after this system time
        (2, 0, "invalid", "now"),  # zed's balance: expired after it
        (2, 1, "invalid", "now"),
    ]


def test_every_value_type_is_stored_as_the_write_path_stores_it(
    store: MemoryStore, pool: ConnectionPool
) -> None:
    declared: dict[str, tuple[dict[str, Any], str]] = {
        "nickname": ({"value_type": "string"}, "Mimi ✓"),
        "birthday": ({"value_type": "date"}, " 1990-02-03 "),
        "landing": ({"value_type": "datetime"}, "2026-06-30T12:00:00+02:00"),
        "height": ({"value_type": "number"}, "1.50"),
        "score": ({"value_type": "number"}, "-2.5e-3"),
        "visits": ({"value_type": "integer"}, "+42"),
        "vip": ({"value_type": "boolean"}, "TRUE"),
        "size": ({"value_type": "enum", "enum_values": ["S", "M"]}, "M"),
        "tags": ({"value_type": "json"}, '{"b": [1, 2.0, null, "x"], "a": {"c": true}}'),
    }
    history = [
        episode_line(
            "v1",
            "2026-06-01T09:00:00Z",
            *(candidate("mira", name, value) for name, (_, value) in declared.items()),
        )
    ]
    tenants = []
    for prefix in ("calls", "import"):
        tenant = new_tenant(store, f"types-{prefix}")
        for name, (declaration, _) in declared.items():
            store.admin.declare_attribute(tenant, name, declaration)
        tenants.append(tenant)
    one_call_at_a_time(store, tenants[0], history)
    outcome = store.episodes.import_lines(import_text(tenants[1], history))

    assert outcome.candidates == {"written": len(declared)}
    assert stored_rows(pool, tenants[1]) == stored_rows(pool, tenants[0])


def test_a_json_null_value_is_stored_as_json_null(store: MemoryStore, pool: ConnectionPool) -> None:
    # As one call at a time stores it (tests/http/test_values_and_reasons.py).
    tenant = new_tenant(store, "null")
    store.admin.declare_attribute(tenant, "extras", {"value_type": "json"})
    history = [episode_line("n1", "2026-06-01T09:00:00Z", candidate("mira", "extras", "null"))]
    outcome = store.episodes.import_lines(import_text(tenant, history))
    assert outcome.candidates == {"written": 1}
    with owner_connection(pool) as conn:
        found = conn.execute(
            "SELECT value IS NULL, jsonb_typeof(value) FROM fact_versions WHERE tenant_id = %s",
            [tenant],
        ).fetchall()
    assert found == [(False, "null")]


def _writes(subject: str, *windows: tuple[str, str | None]) -> KeyWrites:
    writes = KeyWrites((subject, "deadline"))
    for start, end in windows:
        version = Version(
            fact_id=uuid4(),
            value="2026-07-15",
            valid_from=ts(start),
            valid_to=None if end is None else ts(end),
            source_episode_id="e1",
            source_kind="message",
            evidence=None,
            evidence_verified=False,
            schema_version=1,
        )
        writes.rows.append((uuid4(), version))
    return writes


@pytest.mark.parametrize(
    ("writes", "refusal"),
    [
        (_writes("not an id!", ("2026-06-01T00:00:00Z", None)), errors.CheckViolation),
        (
            _writes("mira", ("2026-06-01T00:00:00Z", None), ("2026-06-05T00:00:00Z", None)),
            errors.ExclusionViolation,
        ),
    ],
    ids=["an id outside the identifier domain", "overlapping windows"],
)
def test_the_staged_rows_still_meet_every_constraint(
    store: MemoryStore,
    pool: ConnectionPool,
    writes: KeyWrites,
    refusal: type[psycopg.Error],
) -> None:
    tenant = new_tenant(store, "staged")
    store.episodes.import_lines(import_text(tenant, HISTORY[:1]))
    now: datetime = ts("2026-06-12T00:00:00Z")
    good = _writes("kim", ("2026-06-01T00:00:00Z", "2026-06-02T00:00:00Z"))
    before = stored_rows(pool, tenant)
    with owner_connection(pool) as conn, pytest.raises(refusal):
        copy_versions(conn, tenant, planned=[good, writes], now=now)
    assert stored_rows(pool, tenant) == before
    with owner_connection(pool) as conn:
        assert copy_versions(conn, tenant, planned=[good], now=now) == 1
        found: Any = conn.execute(
            "SELECT subject, valid_from, valid_to, recorded_at, write_order IS NOT NULL"
            " FROM fact_versions WHERE tenant_id = %s AND subject = 'kim'",
            [tenant],
        ).fetchall()
    assert found == [("kim", ts("2026-06-01T00:00:00Z"), ts("2026-06-02T00:00:00Z"), now, True)]
