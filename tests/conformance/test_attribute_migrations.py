"""Attribute migrations, the same on every surface: a redeclaration that needs a migration is
refused, the dry run reports what the run does, a rename leaves the old name reading and
writing the new one, unconvertible values refuse the run unless kept or mapped."""

from __future__ import annotations

from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from store.contract.facts import Fact
from tests.conformance.surfaces import Refused, Surface
from tests.conftest import ts
from tests.http_helpers import candidate, tenant_rows

E1 = {
    "id": "e1",
    "occurred_at": "2026-05-01T09:00:00Z",
    "text": "Mira lives in Oslo; Ada in Turin.",
}
MIGRATED_AT = "2026-06-02T00:00:00Z"


def _seed(surface: Surface, attribute: str, value_type: str, **values: str) -> dict[str, Fact]:
    """``attribute`` declared as ``value_type``, with each subject's value; facts by subject."""
    extra: dict[str, Any] = {}
    if value_type == "enum":
        extra["enum_values"] = sorted(set(values.values()))
    surface.declare_attribute(attribute, {"value_type": value_type, **extra})
    results = surface.record(E1, [candidate(s, attribute, v) for s, v in values.items()])
    surface.clock.set(ts(MIGRATED_AT))
    return {r.fact.subject: r.fact for r in results if r.fact is not None}


def _refused(call: Any) -> tuple[str, str | None]:
    with pytest.raises(Refused) as refused:
        call()
    return refused.value.fault


def test_a_change_that_needs_a_migration_or_a_migration_that_cannot_run_changes_nothing(
    surface: Surface, pool: ConnectionPool
) -> None:
    _seed(surface, "home_city", "string", mira="Oslo", ada="Turin")
    surface.declare_attribute("city", {"value_type": "string"})
    before = tenant_rows(pool, surface.tenant)

    assert [
        _refused(lambda: surface.declare_attribute("home_city", {"value_type": "date"})),
        _refused(
            lambda: surface.declare_attribute(
                "home_city", {"attribute": "town", "value_type": "string"}
            )
        ),
        _refused(
            lambda: surface.migrate_attribute(
                "home_city", {"attribute": "city", "value_type": "string"}
            )
        ),
        _refused(lambda: surface.migrate_attribute("nothing", {"value_type": "string"}))[0],
    ] == [
        ("schema_change_requires_migration", "value_type"),
        ("schema_change_requires_migration", "attribute"),
        ("conflict", "attribute"),  # the new name is taken
        "not_found",
    ]
    assert tenant_rows(pool, surface.tenant) == before


def test_the_dry_run_reports_exactly_what_the_run_then_does_and_changes_nothing(
    surface: Surface, pool: ConnectionPool
) -> None:
    _seed(surface, "score", "string", mira="12", ada="high", bo="7.5")
    before = tenant_rows(pool, surface.tenant)
    change = {"value_type": "number", "description": "a score"}

    dry = surface.migrate_attribute("score", change, dry_run=True, keep_unconvertible=True)

    assert (dry.dry_run, dry.migration_id, dry.migrated_from) == (True, None, None)
    assert [(c.subject, c.converted_value) for c in dry.converted] == [("bo", 7.5), ("mira", 12)]
    assert [(u.subject, u.value, u.reason) for u in dry.unconvertible] == [
        ("ada", "high", "as number: 'high' is not a number")
    ]
    assert tenant_rows(pool, surface.tenant) == before
    run = surface.migrate_attribute("score", change, keep_unconvertible=True)
    assert run.migration_id is not None
    assert run.model_dump(exclude={"dry_run", "migration_id"}) == dry.model_dump(
        exclude={"dry_run", "migration_id"}
    )
    # What the report says is what happened: converted values under version 2, the kept one
    # unchanged under version 1.
    assert [
        (s, f.value, f.schema_version, f.unconvertible)
        for s in ("bo", "mira", "ada")
        for f in [surface.fact(s, "score")]
    ] == [("bo", 7.5, 2, False), ("mira", 12, 2, False), ("ada", "high", 1, True)]


def test_a_rename_keeps_the_facts_and_the_old_name_reads_and_writes_the_new_one(
    surface: Surface,
) -> None:
    facts = _seed(surface, "home_city", "string", mira="Oslo", ada="Turin")
    dry = surface.migrate_attribute(
        "home_city", {"attribute": "city", "value_type": "string"}, dry_run=True
    )
    assert (dry.dry_run, dry.migration_id, dry.migrated_from) == (True, None, "home_city")
    with pytest.raises(Refused):
        surface.fact("mira", "city")

    done = surface.migrate_attribute("home_city", {"attribute": "city", "value_type": "string"})

    same = {"dry_run", "migration_id", "dual_read_until"}
    assert done.model_dump(exclude=same) == dry.model_dump(exclude=same)
    assert [(c.subject, c.fact_id) for c in done.converted] == [
        ("ada", facts["ada"].fact_id),
        ("mira", facts["mira"].fact_id),
    ]
    read = surface.fact("mira", "home_city")
    assert (read.attribute, read.value, read.migrated_from, read.schema_version) == (
        "city",
        "Oslo",
        "home_city",
        2,
    )
    assert surface.fact("mira", "city").migrated_from is None
    history = surface.history("mira", "home_city")
    assert [(f.attribute, f.schema_version, f.migrated_from) for f in history] == [
        ("home_city", 1, "home_city"),
        ("city", 2, "home_city"),
    ]
    profile = surface.profile("mira")
    assert [(f.attribute, f.migrated_from) for f in profile.facts] == [("city", "home_city")]
    [written] = surface.apply(
        "e1", [candidate("mira", "home_city", "Bergen", valid_from="2026-05-20T00:00:00Z")]
    )
    assert (written.status, written.migrated_from) == ("written", "home_city")
    assert written.fact is not None
    assert (written.fact.attribute, written.fact.schema_version) == ("city", 2)
    assert surface.fact("mira", "city").value == "Bergen"
    assert [a.attribute for a in surface.attributes()] == ["city"]


def test_unconvertible_values_refuse_the_run_unless_kept_or_mapped(
    surface: Surface, pool: ConnectionPool
) -> None:
    facts = _seed(surface, "tier", "enum", mira="gold", ada="silver")
    before = tenant_rows(pool, surface.tenant)
    narrower = {"value_type": "enum", "enum_values": ["gold", "standard"]}

    assert _refused(lambda: surface.declare_attribute("tier", narrower))[0] == (
        "schema_change_requires_migration"
    )
    assert _refused(lambda: surface.migrate_attribute("tier", narrower)) == (
        "conflict",
        "keep_unconvertible",
    )
    assert tenant_rows(pool, surface.tenant) == before
    assert surface.fact("ada", "tier") == facts["ada"]
    # A value map converts the value instead.
    mapped = surface.migrate_attribute("tier", {**narrower, "value_map": {"silver": "standard"}})
    assert (mapped.unconvertible, [c.converted_value for c in mapped.converted]) == (
        [],
        ["standard", "gold"],
    )
    assert surface.fact("ada", "tier").value == "standard"


def test_kept_unconvertible_values_stay_current_flagged_under_the_old_version(
    surface: Surface,
) -> None:
    facts = _seed(surface, "home_city", "string", mira="Oslo", ada="Turin")

    kept = surface.migrate_attribute(
        "home_city", {"value_type": "integer"}, keep_unconvertible=True
    )

    assert (kept.kept_unconvertible, kept.converted, kept.schema_version) == (True, [], 2)
    assert [u.fact_id for u in kept.unconvertible] == [
        facts["ada"].fact_id,
        facts["mira"].fact_id,
    ]
    still = surface.fact("mira", "home_city")
    assert still == facts["mira"].model_copy(update={"unconvertible": True})
