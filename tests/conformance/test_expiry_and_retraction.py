"""Ending and withdrawing values, the same on every surface: an expiry ends a value and answers
unchanged the second time, an expiry at a start or without an aware instant is refused, and a
retraction by fact id or by start withdraws a fact as if it had never been said."""

from __future__ import annotations

import pytest

from tests.conformance.surfaces import Refused, Surface
from tests.conftest import ts
from tests.http_helpers import candidate

KEY = ("ada", "home_city")


def _said(surface: Surface, episode_id: str, occurred_at: str, now: str, value: str | None) -> None:
    """Record an episode at system time ``now``, saying ``value`` for Ada's city from then."""
    surface.clock.set(ts(now))
    updates = [] if value is None else [candidate(*KEY, value, valid_from=occurred_at)]
    results = surface.record(
        {"id": episode_id, "occurred_at": occurred_at, "text": f"Ada: {value}."}, updates
    )
    assert [r.status for r in results] == ["written"] * len(updates)


def _not_known(surface: Surface, valid_at: str | None = None) -> bool:
    with pytest.raises(Refused) as refused:
        surface.fact(*KEY, valid_at=valid_at)
    return refused.value.code == "not_found"


def test_an_expiry_ends_the_value_then_answers_unchanged(surface: Surface) -> None:
    surface.clock.set(ts("2026-04-01T00:00:00Z"))
    surface.declare_attribute("home_city", {"value_type": "string"})
    _said(surface, "moved", "2026-04-01T09:00:00Z", "2026-04-01T10:00:00Z", "Porto")
    lived = surface.fact(*KEY, valid_at="2026-04-02T00:00:00Z")
    _said(surface, "left", "2026-04-10T09:00:00Z", "2026-04-10T10:00:00Z", None)

    surface.clock.set(ts("2026-04-10T11:00:00Z"))
    expired = surface.expire(*KEY, at="2026-04-10T09:00:00Z", source_episode_id="left")

    assert (expired.status, expired.fact is not None) == ("expired", True)
    assert expired.fact is not None
    assert expired.fact == lived.model_copy(
        update={
            "version_id": expired.fact.version_id,
            "valid_to": ts("2026-04-10T09:00:00Z"),
            "recorded_at": ts("2026-04-10T11:00:00Z"),
            "ended_by": expired.expiry_id,
            "ended_by_kind": "expiry",
            "status": "past",
            "label": "past · unverified",  # its evidence ("") is not in the episode's text
        }
    )
    assert expired.fact.version_id != lived.version_id
    surface.clock.set(ts("2026-04-10T12:00:00Z"))
    again = surface.expire(*KEY, at="2026-04-10T09:00:00Z", source_episode_id="left")
    assert (again.status, again.fact) == ("unchanged", None)
    # The value ended: not known now, still known before the end.
    surface.clock.set(ts("2026-04-11T00:00:00Z"))
    assert _not_known(surface)
    assert surface.fact(*KEY, valid_at="2026-04-05T00:00:00Z") == expired.fact


def test_an_expiry_at_a_start_is_invalid_and_expiring_nothing_is_unchanged(
    surface: Surface,
) -> None:
    surface.declare_attribute("home_city", {"value_type": "string"})
    _said(surface, "e1", "2026-05-01T09:00:00Z", "2026-06-01T00:00:00Z", "Porto")
    _said(surface, "e2", "2026-05-02T09:00:00Z", "2026-06-01T00:00:00Z", None)
    before = surface.history(*KEY)

    with pytest.raises(Refused) as at_the_start:
        surface.expire(*KEY, at="2026-05-01T09:00:00Z", source_episode_id="e2")
    nothing = surface.expire(*KEY, at="2026-04-01T00:00:00Z", source_episode_id="e2")

    assert at_the_start.value.fault == ("invalid", "at")
    assert (nothing.status, nothing.fact) == ("unchanged", None)
    assert nothing.expiry_id is not None  # logged, for a later retraction's replay
    assert surface.history(*KEY) == before


def test_an_expiry_needs_a_declared_attribute_an_aware_instant_and_a_known_episode(
    surface: Surface,
) -> None:
    surface.declare_attribute("home_city", {"value_type": "string"})
    _said(surface, "e1", "2026-05-01T09:00:00Z", "2026-06-01T00:00:00Z", "Porto")
    faults = []
    for attribute, at, episode_id in (
        ("shoe_size", "2026-05-05T00:00:00Z", "e1"),
        ("home_city", "2026-05-05T00:00:00", "e1"),
        ("home_city", "2026-05-05T00:00:00Z", "e404"),
    ):
        with pytest.raises(Refused) as refused:
            surface.expire("ada", attribute, at=at, source_episode_id=episode_id)
        faults.append(refused.value.fault)
    assert [faults[0][0], faults[1], faults[2]] == [
        "not_found",
        ("invalid", "at"),
        ("not_found", "source_episode_id"),
    ]


def test_a_retraction_by_fact_id_or_by_start_withdraws_the_fact(surface: Surface) -> None:
    surface.clock.set(ts("2026-04-01T00:00:00Z"))
    surface.declare_attribute("home_city", {"value_type": "string"})
    _said(surface, "porto", "2026-04-01T09:00:00Z", "2026-04-01T10:00:00Z", "Porto")
    porto = surface.fact(*KEY, valid_at="2026-04-02T00:00:00Z")
    _said(surface, "lisbon", "2026-04-05T09:00:00Z", "2026-04-05T10:00:00Z", "Lisbon")
    lisbon = surface.fact(*KEY, valid_at="2026-04-06T00:00:00Z")
    assert lisbon.supersedes == porto.fact_id
    now = "2026-04-06T00:00:00Z"
    surface.clock.set(ts(now))

    by_id = surface.retract(*KEY, fact_id=str(lisbon.fact_id))

    assert (by_id.status, by_id.fact_id, by_id.restored_fact_id) == (
        "retracted",
        lisbon.fact_id,
        None,
    )
    # Porto reads as if Lisbon had never been said: open again, its original window.
    restored = surface.fact(*KEY)
    assert restored == porto.model_copy(
        update={"version_id": restored.version_id, "recorded_at": ts(now), "status": "current"}
    )
    history = surface.history(*KEY)
    assert [(v.fact_id, v.status) for v in history] == [
        (porto.fact_id, "retired"),
        (porto.fact_id, "retired"),
        (porto.fact_id, "current"),
        (lisbon.fact_id, "retired"),
    ]
    assert history[-1].retired_at == ts(now)
    again = surface.retract(*KEY, fact_id=str(lisbon.fact_id))
    assert again == by_id.model_copy(update={"status": "unchanged"})

    surface.clock.set(ts("2026-04-07T00:00:00Z"))
    by_start = surface.retract(*KEY, valid_from="2026-04-01T09:00:00Z")
    assert (by_start.status, by_start.fact_id, by_start.restored_fact_id) == (
        "retracted",
        porto.fact_id,
        None,
    )
    assert _not_known(surface)
    with pytest.raises(Refused) as neither:
        surface.retract(*KEY)
    assert neither.value.fault == ("invalid", "fact_id")
