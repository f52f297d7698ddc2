"""Attribute migrations through the store: renames and type changes keep each fact and its
history, the old name reads and writes the new one for the dual-read window, the dry run
reports what the run does, unconvertible values are refused or kept, tenants stay apart.

Refusals, the dry run, unconvertible values and the old name's reads are scenarios of
tests/conformance/test_attribute_migrations.py; what stays here is the store's own: receipts,
the dual-read window, the log, failures inside a run."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from uuid import UUID

import psycopg
import pytest
from psycopg_pool import ConnectionPool

from store.attributes import changes as attribute_changes
from store.contract.facts import Fact
from store.db.clock import ManualClock
from store.errors import (
    Conflict,
    InvalidInput,
    NotFound,
    SchemaChangeRequiresMigration,
    UnconvertibleValues,
)
from store.service import MemoryStore
from tests.conftest import ts
from tests.helpers import assert_value, declare, owner_connection, record
from tests.http_helpers import tenant_rows

E1, E2 = "2026-05-01T09:00:00Z", "2026-05-03T09:00:00Z"


def _seed_cities(store: MemoryStore, tenant: str) -> dict[str, UUID]:
    """Mira's city (Oslo, then Bergen) and Ada's (Turin), as strings; fact ids by value."""
    declare(store, tenant, "home_city", "string")
    record(store, tenant, "e1", E1)
    record(store, tenant, "e2", E2)
    written = [
        assert_value(store, tenant, "e1", "Oslo", attribute="home_city"),
        assert_value(store, tenant, "e2", "Bergen", attribute="home_city"),
        assert_value(store, tenant, "e1", "Turin", attribute="home_city", subject="ada"),
    ]
    return {r.fact.value: r.fact.fact_id for r in written if r.fact is not None}


def _shape(facts: list[Fact]) -> list[tuple[Any, ...]]:
    return [
        (f.fact_id, f.attribute, f.value, f.valid_from, f.valid_to, f.retired_at, f.schema_version)
        for f in facts
    ]


def test_a_rename_keeps_each_fact_and_its_history_and_the_old_name_reads_and_writes_the_new(
    store: MemoryStore, tenant: str, clock: ManualClock, pool: ConnectionPool
) -> None:
    ids = _seed_cities(store, tenant)
    clock.set(ts("2026-06-02T00:00:00Z"))
    now = clock()
    result = store.admin.migrate_attribute(
        tenant, "home_city", {"attribute": "city", "value_type": "string"}
    )
    assert (result.attribute, result.migrated_from, result.from_schema_version) == (
        "city",
        "home_city",
        1,
    )
    assert (result.schema_version, result.dual_read_until) == (2, now + timedelta(days=30))
    assert [(c.subject, c.fact_id, c.converted_value) for c in result.converted] == [
        ("ada", ids["Turin"], "Turin"),
        ("mira", ids["Oslo"], "Oslo"),
        ("mira", ids["Bergen"], "Bergen"),
    ]
    # History under the new name keeps the old name's versions, retired at the migration.
    history = store.facts.history(tenant, "mira", "city")
    oslo, bergen = ids["Oslo"], ids["Bergen"]
    assert _shape(history) == [
        (oslo, "home_city", "Oslo", ts(E1), ts(E2), now, 1),
        (oslo, "city", "Oslo", ts(E1), ts(E2), None, 2),
        (bergen, "home_city", "Bergen", ts(E2), None, now, 1),
        (bergen, "city", "Bergen", ts(E2), None, None, 2),
    ]
    # Each rewritten version left a write receipt: ids of the new versions, no values.
    with owner_connection(pool) as conn:
        receipts = conn.execute(
            "SELECT version FROM receipts WHERE tenant_id = %s AND action = 'write'"
            " AND recorded_at = %s",
            (tenant, now),
        ).fetchall()
    new_versions = [
        f.version_id
        for subject in ("mira", "ada")
        for f in store.facts.history(tenant, subject, "city")
        if f.attribute == "city"
    ]
    assert sorted(row[0] for row in receipts) == sorted(map(str, new_versions))
    # The old name, within the window: reads answer from the new one and say so.
    read = store.facts.current(tenant, "mira", "home_city")
    assert (read.attribute, read.value, read.fact_id, read.migrated_from) == (
        "city",
        "Bergen",
        ids["Bergen"],
        "home_city",
    )
    assert read.model_dump(mode="json")["migrated_from"] == "home_city"
    assert "migrated_from" not in store.facts.current(tenant, "mira", "city").model_dump()
    old_history = store.facts.history(tenant, "mira", "home_city")
    assert [f.migrated_from for f in old_history] == ["home_city"] * len(old_history)
    assert _shape(old_history) == _shape(store.facts.history(tenant, "mira", "city"))
    # ... and writes under the old name land on the new one.
    record(store, tenant, "e3", "2026-06-01T12:00:00Z")
    written = assert_value(store, tenant, "e3", "Tromso", attribute="home_city")
    assert (written.status, written.migrated_from) == ("written", "home_city")
    assert written.fact is not None
    assert (written.fact.attribute, written.fact.schema_version) == ("city", 2)
    assert store.facts.current(tenant, "mira", "city").value == "Tromso"
    # The old name is no longer declared; after the window it is unknown.
    assert [a.attribute for a in store.admin.list_attributes(tenant)] == ["city"]
    clock.set(now + timedelta(days=30))
    with pytest.raises(NotFound):
        store.facts.current(tenant, "mira", "home_city")
    with pytest.raises(NotFound):
        store.facts.history(tenant, "mira", "home_city")
    late = assert_value(store, tenant, "e3", "Narvik", attribute="home_city")
    assert (late.status, late.reason) == (
        "invalid",
        "attribute 'home_city' is not declared; did you mean 'city'?",
    )


def test_a_type_change_converts_values_and_older_versions_say_their_schema_version(
    store: MemoryStore, tenant: str, clock: ManualClock
) -> None:
    declare(store, tenant, "deadline", "string")
    record(store, tenant, "e1", E1)
    first = assert_value(store, tenant, "e1", "July 15, 2026", attribute="deadline")
    assert first.fact is not None
    with pytest.raises(SchemaChangeRequiresMigration) as refused:
        store.admin.declare_attribute(tenant, "deadline", {"value_type": "date"})
    assert (refused.value.code, refused.value.field) == (
        "schema_change_requires_migration",
        "value_type",
    )
    clock.set(ts("2026-06-02T00:00:00Z"))
    result = store.admin.migrate_attribute(tenant, "deadline", {"value_type": "date"})
    assert (result.from_value_type, result.value_type, result.migrated_from) == (
        "string",
        "date",
        None,
    )
    assert result.dual_read_until is None
    current = store.facts.current(tenant, "mira", "deadline")
    assert (current.fact_id, current.value, current.schema_version) == (
        first.fact.fact_id,
        "2026-07-15",
        2,
    )
    assert [
        (f.value, f.schema_version, f.status)
        for f in store.facts.history(tenant, "mira", "deadline")
    ] == [("July 15, 2026", 1, "retired"), ("2026-07-15", 2, "current")]
    # Reading as known before the migration still answers the old version, as it was.
    before = store.facts.at(tenant, "mira", "deadline", known_at="2026-06-01T00:00:00Z")
    assert (before.value, before.schema_version) == ("July 15, 2026", 1)
    [declared] = store.admin.list_attributes(tenant)
    assert (declared.value_type, declared.schema_version) == ("date", 2)


def test_a_refused_run_lists_each_unconvertible_value_with_its_ids(
    store: MemoryStore, tenant: str
) -> None:
    declare(store, tenant, "tier", "enum", enum_values=["gold", "silver"])
    record(store, tenant, "e1", E1)
    silver = assert_value(store, tenant, "e1", "silver", attribute="tier", subject="ada")
    assert_value(store, tenant, "e1", "gold", attribute="tier")
    assert silver.fact is not None
    narrower = {"value_type": "enum", "enum_values": ["gold", "standard"]}
    with pytest.raises(UnconvertibleValues) as refused:
        store.admin.migrate_attribute(tenant, "tier", narrower)
    assert refused.value.unconvertible == [
        {
            "fact_id": str(silver.fact.fact_id),
            "version_id": str(silver.fact.version_id),
            "subject": "ada",
            "value": "silver",
            "reason": "as enum: 'silver' is not one of gold, standard",
        }
    ]


def test_a_rename_with_kept_values_leaves_them_under_the_old_name_and_version(
    store: MemoryStore, tenant: str, clock: ManualClock
) -> None:
    declare(store, tenant, "age", "string")
    record(store, tenant, "e1", E1)
    assert_value(store, tenant, "e1", "41", attribute="age")
    kept = assert_value(store, tenant, "e1", "forty", attribute="age", subject="ada")
    assert kept.fact is not None
    clock.set(ts("2026-06-02T00:00:00Z"))
    result = store.admin.migrate_attribute(
        tenant,
        "age",
        {"attribute": "age_years", "value_type": "integer"},
        keep_unconvertible=True,
    )
    assert result.kept_unconvertible
    assert [u.fact_id for u in result.unconvertible] == [kept.fact.fact_id]
    assert store.facts.current(tenant, "mira", "age_years").value == 41
    # The kept fact stays current under the old name, at version 1, flagged: the new name's
    # history shows it.
    kept_history = store.facts.history(tenant, "ada", "age_years")
    assert [
        (f.attribute, f.value, f.schema_version, f.retired_at, f.unconvertible)
        for f in kept_history
    ] == [("age", "forty", 1, None, True)]
    assert store.facts.current(tenant, "ada", "age").model_dump(mode="json")["unconvertible"]


def test_another_tenants_migration_never_touches_this_tenants_facts(
    store: MemoryStore, clock: ManualClock, pool: ConnectionPool
) -> None:
    ours, theirs = "migrations-ours", "migrations-theirs"
    for name in (ours, theirs):
        store.admin.create_tenant(name)
        _seed_cities(store, name)
    ours_before = {s: store.facts.history(ours, s, "home_city") for s in ("mira", "ada")}
    rows_before = tenant_rows(pool, ours)
    clock.set(ts("2026-06-02T00:00:00Z"))
    result = store.admin.migrate_attribute(
        theirs, "home_city", {"attribute": "city", "value_type": "string"}
    )
    assert len(result.converted) == 3
    assert tenant_rows(pool, ours) == rows_before
    assert {s: store.facts.history(ours, s, "home_city") for s in ours_before} == ours_before
    assert [a.attribute for a in store.admin.list_attributes(ours)] == ["home_city"]
    with pytest.raises(NotFound):
        store.facts.current(ours, "mira", "city")
    assert store.facts.current(theirs, "mira", "home_city").migrated_from == "home_city"


def test_a_retraction_after_a_rename_replays_the_log_kept_under_the_old_name(
    store: MemoryStore, tenant: str, clock: ManualClock
) -> None:
    declare(store, tenant, "team", "string")
    record(store, tenant, "e1", E1)
    record(store, tenant, "e2", E2)
    blue = assert_value(store, tenant, "e1", "blue", attribute="team")
    ended = store.facts.expire(
        tenant, "mira", "team", at="2026-05-20T00:00:00Z", source_episode_id="e1"
    )
    red = assert_value(store, tenant, "e2", "red", "2026-05-25T00:00:00Z", attribute="team")
    assert ended.status == "expired"
    assert blue.fact is not None
    assert red.fact is not None
    clock.set(ts("2026-06-02T00:00:00Z"))
    store.admin.migrate_attribute(tenant, "team", {"attribute": "squad", "value_type": "string"})
    retracted = store.facts.retract(tenant, "mira", "squad", fact_id=red.fact.fact_id)
    assert retracted.status == "retracted"
    # The expiry logged under the old name still ends blue: nothing is valid now.
    with pytest.raises(NotFound):
        store.facts.current(tenant, "mira", "squad")
    kept = store.facts.at(tenant, "mira", "squad", valid_at="2026-05-10T00:00:00Z")
    assert (kept.fact_id, kept.attribute, kept.valid_to, kept.ended_by_kind) == (
        blue.fact.fact_id,
        "squad",
        ts("2026-05-20T00:00:00Z"),
        "expiry",
    )


def test_a_migration_that_fails_after_rewriting_facts_changes_nothing(
    store: MemoryStore,
    tenant: str,
    clock: ManualClock,
    pool: ConnectionPool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _seed_cities(store, tenant)
    before = tenant_rows(pool, tenant)

    def failing(conn: psycopg.Connection[Any], *_: Any, **__: Any) -> None:
        conn.execute("SELECT 1 / 0")  # the database refuses the last statement

    monkeypatch.setattr(attribute_changes, "_record", failing)
    clock.set(ts("2026-06-02T00:00:00Z"))
    with pytest.raises(InvalidInput):
        store.admin.migrate_attribute(
            tenant, "home_city", {"attribute": "city", "value_type": "string"}
        )
    assert tenant_rows(pool, tenant) == before


def test_values_waiting_outside_the_facts_hold_a_migration_back(
    store: MemoryStore, tenant: str, pool: ConnectionPool
) -> None:
    declare(store, tenant, "home_city", "string")
    declare(store, tenant, "export_format", "string")
    record(store, tenant, "e1", E1)
    record(store, tenant, "e2", E2, text="another episode")
    assert_value(store, tenant, "e1", "Oslo", E1, attribute="home_city")
    rival = assert_value(store, tenant, "e2", "Bergen", E1, attribute="home_city")
    weak = assert_value(store, tenant, "e1", "csv", attribute="export_format", strength="weak")
    assert (rival.status, weak.status) == ("conflict", "buffered")
    before = tenant_rows(pool, tenant)
    for attribute, counts in (
        ("home_city", "1 open conflict(s) and 0"),
        ("export_format", "0 open conflict(s) and 1"),
    ):
        with pytest.raises(Conflict) as held:
            store.admin.migrate_attribute(tenant, attribute, {"value_type": "json"}, dry_run=True)
        assert (held.value.field, counts in held.value.detail) == ("attribute", True)
    assert tenant_rows(pool, tenant) == before
