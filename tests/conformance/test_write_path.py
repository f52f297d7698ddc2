"""The write path, the same on every surface: a bad candidate is an invalid result that names
its field and writes nothing, results keep the candidates' order, a whole request that breaks
the contract is refused naming its field, and a written value reads back the same way."""

from __future__ import annotations

from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from tests.conformance.surfaces import FactSurface, Json, Refused, Surface
from tests.http_helpers import candidate, tenant_rows

NAIVE = "2026-06-01T09:00:00"
OVERFLOWING = "9999-12-31T23:59:59-01:00"
E1 = {"id": "e1", "occurred_at": "2026-05-01T09:00:00Z", "text": "Her deadline is 2026-07-15."}


def _candidate(
    attribute: str = "passport_deadline", value: Any = "2026-07-15", **extra: Any
) -> Json:
    """A candidate about mira's ``attribute`` (another subject through ``extra``)."""
    return candidate("mira", attribute, value) | extra


def _declared(surface: FactSurface) -> FactSurface:
    """The surface's tenant with one attribute of each troublesome type, and episode e1."""
    for attribute, value_type in (
        ("passport_deadline", "date"),
        ("home_city", "string"),
        ("seen_at", "datetime"),
        ("visits", "integer"),
        ("blob", "json"),
    ):
        surface.declare_attribute(attribute, {"value_type": value_type})
    surface.record(E1)
    return surface


BAD_CANDIDATES = [
    pytest.param(_candidate("undeclared", "x"), "attribute", id="unknown-attribute"),
    pytest.param(_candidate("a b", "x"), "attribute", id="attribute-with-space"),
    pytest.param(_candidate(subject="mira smith"), "subject", id="subject-with-space"),
    pytest.param(_candidate(subject=""), "subject", id="subject-empty"),
    pytest.param(_candidate(subject="x" * 201), "subject", id="subject-too-long"),
    pytest.param(_candidate(valid_from=NAIVE), "valid_from", id="naive-valid-from"),
    pytest.param(_candidate(valid_from="soon"), "valid_from", id="garbage-valid-from"),
    pytest.param(_candidate(value="July 15"), "value", id="not-a-date"),
    pytest.param(_candidate("visits", "many"), "value", id="not-an-integer"),
    pytest.param(_candidate("visits", "9" * 5000), "value", id="integer-of-5000-digits"),
    pytest.param(_candidate("seen_at", NAIVE), "value", id="naive-datetime-value"),
    pytest.param(_candidate("seen_at", OVERFLOWING), "value", id="overflowing-datetime-value"),
    pytest.param(_candidate("blob", "{not json"), "value", id="not-json"),
    pytest.param(_candidate("blob", "[" * 400 + "]" * 400), "value", id="json-nested-400-deep"),
    pytest.param(_candidate("blob", '{"n": ' + "1" * 5000 + "}"), "value", id="json-5000-digits"),
    pytest.param(_candidate(change="maybe"), "change", id="change-unknown"),
    pytest.param(
        {k: v for k, v in _candidate().items() if k != "change"}, "change", id="change-missing"
    ),
    pytest.param(_candidate(value=None), "value", id="value-missing"),
    pytest.param(_candidate(strength="firm"), "strength", id="strength-unknown"),
    pytest.param(_candidate(evidence=12), "evidence", id="evidence-not-text"),
    pytest.param(_candidate(value_type="json"), "value_type", id="extra"),
    pytest.param(_candidate(tenant_id="other"), "tenant_id", id="tenant-named"),
    pytest.param(_candidate(source_episode_id="e2"), "source_episode_id", id="source-named"),
]


@pytest.mark.parametrize(("bad", "at_fault"), BAD_CANDIDATES)
def test_a_bad_candidate_is_an_invalid_result_naming_its_field_and_writes_nothing(
    surface: Surface, pool: ConnectionPool, bad: Json, at_fault: str
) -> None:
    _declared(surface)
    before = tenant_rows(pool, surface.tenant)

    [result] = surface.apply("e1", [bad])

    assert (result.index, result.status, result.field) == (0, "invalid", at_fault)
    assert result.reason
    assert (result.fact, result.conflict_id) == (None, None)
    assert tenant_rows(pool, surface.tenant) == before
    assert surface.episode("e1").subjects == []


def test_results_keep_the_candidates_order_and_an_invalid_one_fails_alone(
    surface: Surface,
) -> None:
    _declared(surface)
    results = surface.apply(
        "e1",
        [
            _candidate(change="no_change", value=None),
            _candidate("home_city", "Porto"),
            _candidate("undeclared", "x"),
            _candidate("home_city", "x", valid_from=NAIVE),
            _candidate("home_city", "Faro", subject="faro"),
        ],
    )
    assert [(r.index, r.status, r.field) for r in results] == [
        (0, "ignored", None),
        (1, "written", None),
        (2, "invalid", "attribute"),
        (3, "invalid", "valid_from"),
        (4, "written", None),
    ]
    assert [f.value for f in surface.history("mira", "home_city")] == ["Porto"]
    assert surface.fact("faro", "home_city").value == "Faro"


def test_citing_a_missing_episode_is_not_found_naming_it(surface: Surface) -> None:
    _declared(surface)
    with pytest.raises(Refused) as raised:
        surface.apply("e404", [_candidate()])
    assert raised.value.fault == ("not_found", "episode_id")


def test_a_written_value_reads_back_with_its_source_and_an_unknown_key_is_not_found(
    any_surface: FactSurface,
) -> None:
    surface = _declared(any_surface)
    [written] = surface.record(
        {"id": "e2", "occurred_at": "2026-05-02T09:00:00Z", "text": "Deadline: 2026-06-30."},
        [_candidate(value="2026-06-30", evidence="Deadline: 2026-06-30.")],
    )
    assert (written.index, written.status) == (0, "written")
    assert written.fact is not None
    assert (written.fact.source_episode_id, written.fact.evidence_verified) == ("e2", True)
    assert written.fact.valid_from.isoformat() == "2026-05-02T09:00:00+00:00"
    assert surface.fact("mira", "passport_deadline") == written.fact
    assert surface.history("mira", "passport_deadline") == [written.fact]
    with pytest.raises(Refused) as unknown:
        surface.fact("nobody", "passport_deadline")
    assert unknown.value.code == "not_found"
    with pytest.raises(Refused) as naive:
        surface.fact("mira", "passport_deadline", valid_at=NAIVE)
    assert naive.value.fault == ("invalid", "valid_at")
    with pytest.raises(Refused) as naive_episode:
        surface.record({"id": "e9", "occurred_at": NAIVE, "text": "no offset"})
    assert naive_episode.value.fault == ("invalid", "occurred_at")


def test_redeclaring_bumps_the_schema_version_only_for_a_compatible_change(
    any_surface: FactSurface,
) -> None:
    surface = any_surface
    declared = {"value_type": "date", "description": "the deadline"}
    first = surface.declare_attribute("passport_deadline", declared)
    same = surface.declare_attribute("passport_deadline", declared)
    changed = surface.declare_attribute(
        "passport_deadline", {**declared, "description": "renewal date", "aliases": ["due"]}
    )
    # Nothing is held yet: a new value type is a redeclaration like any other.
    retyped = surface.declare_attribute("passport_deadline", {"value_type": "string"})
    assert [a.schema_version for a in (first, same, changed, retyped)] == [1, 1, 2, 3]
    assert (changed.aliases, retyped.value_type) == (["due"], "string")
    [written] = surface.record(E1, [_candidate(value="soon")])
    assert written.status == "written"
    with pytest.raises(Refused) as held:
        surface.declare_attribute("passport_deadline", {"value_type": "date"})
    assert held.value.fault == ("schema_change_requires_migration", "value_type")


def test_enum_members_may_go_only_while_no_value_holds_them(any_surface: FactSurface) -> None:
    surface = any_surface
    surface.declare_attribute("tier", {"value_type": "enum", "enum_values": ["gold", "silver"]})
    wider = surface.declare_attribute(
        "tier", {"value_type": "enum", "enum_values": ["gold", "silver", "bronze"]}
    )
    assert wider.enum_values == ["gold", "silver", "bronze"]
    narrower = surface.declare_attribute(
        "tier", {"value_type": "enum", "enum_values": ["gold", "silver"]}
    )
    assert (narrower.enum_values, narrower.schema_version) == (["gold", "silver"], 3)
    [written] = surface.record(E1, [_candidate("tier", "gold")])
    assert written.status == "written"
    with pytest.raises(Refused) as held:
        surface.declare_attribute("tier", {"value_type": "enum", "enum_values": ["gold"]})
    assert held.value.fault == ("schema_change_requires_migration", "enum_values")
    with pytest.raises(Refused) as without_members:
        surface.declare_attribute("plan", {"value_type": "enum"})
    assert without_members.value.code == "invalid"
    assert "enum_values" in without_members.value.detail
