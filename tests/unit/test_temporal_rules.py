"""The three assertion rules and expiry, as pure functions over a key's versions."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from uuid import UUID, uuid4

from store.facts.temporal import Version, plan_assert, plan_expire
from tests.conftest import ts


def version(value: str, valid_from: str, valid_to: str | None = None) -> Version:
    """A stored version with a fresh fact id."""
    return Version(
        fact_id=uuid4(),
        value=value,
        valid_from=ts(valid_from),
        valid_to=ts(valid_to) if valid_to else None,
        source_episode_id="e",
        source_kind="message",
        evidence=None,
        evidence_verified=False,
        schema_version=1,
        version_id=uuid4(),
    )


def new(value: str, valid_from: str) -> Version:
    """A newcomer as the write path builds it: open window, no version id yet."""
    return replace(version(value, valid_from), version_id=None)


def window(v: Version) -> tuple[datetime, datetime | None]:
    return (v.valid_from, v.valid_to)


def test_equal_start_same_value_is_unchanged_and_different_value_a_conflict() -> None:
    incumbent = version("A", "2026-06-01T00:00:00Z")
    same = plan_assert([incumbent], new("A", "2026-06-01T00:00:00Z"))
    other = plan_assert([incumbent], new("B", "2026-06-01T00:00:00Z"))
    assert (same.status, same.shown, same.insert) == ("unchanged", incumbent, ())
    assert (other.status, other.shown, other.retire, other.insert) == (
        "conflict",
        incumbent,
        (),
        (),
    )


def test_rule_2_closes_the_containing_version_and_inherits_its_end() -> None:
    first = version("A", "2026-06-01T00:00:00Z", "2026-06-10T00:00:00Z")
    following = version("C", "2026-06-10T00:00:00Z")
    first = replace(first, ended_by=following.fact_id, ended_by_kind="fact")
    newcomer = new("B", "2026-06-05T00:00:00Z")
    plan = plan_assert([first, following], newcomer)
    assert plan.status == "written"
    assert plan.retire == (first,)
    closed, successor = plan.insert
    assert (closed.fact_id, window(closed)) == (
        first.fact_id,
        (ts("2026-06-01T00:00:00Z"), ts("2026-06-05T00:00:00Z")),
    )
    assert (closed.ended_by, closed.ended_by_kind, closed.version_id) == (
        newcomer.fact_id,
        "fact",
        None,
    )
    assert window(successor) == (ts("2026-06-05T00:00:00Z"), ts("2026-06-10T00:00:00Z"))
    assert (successor.supersedes, successor.ended_by) == (first.fact_id, following.fact_id)
    assert plan.shown is successor


def test_rule_2_with_the_same_value_is_unchanged() -> None:
    first = version("A", "2026-06-01T00:00:00Z")
    plan = plan_assert([first], new("A", "2026-06-05T00:00:00Z"))
    assert (plan.status, plan.shown, plan.insert) == ("unchanged", first, ())


def test_rule_3_before_all_runs_to_the_next_start_and_touches_nothing() -> None:
    first = version("A", "2026-06-01T00:00:00Z")
    plan = plan_assert([first], new("Z", "2026-05-01T00:00:00Z"))
    [placed] = plan.insert
    assert plan.retire == ()
    assert window(placed) == (ts("2026-05-01T00:00:00Z"), ts("2026-06-01T00:00:00Z"))
    assert (placed.ended_by, placed.ended_by_kind, placed.supersedes) == (
        first.fact_id,
        "fact",
        None,
    )


def test_rule_3_in_a_gap_after_an_expiry_stays_open_or_stops_at_the_next_start() -> None:
    expired = replace(
        version("A", "2026-06-01T00:00:00Z", "2026-06-05T00:00:00Z"),
        ended_by=uuid4(),
        ended_by_kind="expiry",
    )
    alone = plan_assert([expired], new("B", "2026-06-07T00:00:00Z"))
    assert window(alone.insert[0]) == (ts("2026-06-07T00:00:00Z"), None)
    later = version("C", "2026-06-20T00:00:00Z")
    bounded = plan_assert([expired, later], new("B", "2026-06-07T00:00:00Z"))
    assert window(bounded.insert[0]) == (ts("2026-06-07T00:00:00Z"), ts("2026-06-20T00:00:00Z"))
    assert bounded.retire == ()


def test_expiry_closes_the_containing_version_without_a_successor() -> None:
    first = version("A", "2026-06-01T00:00:00Z")
    expiry_id = UUID(int=7)
    plan = plan_expire([first], at=ts("2026-06-05T00:00:00Z"), expiry_id=expiry_id)
    [closed] = plan.insert
    assert (plan.status, plan.retire) == ("expired", (first,))
    assert window(closed) == (ts("2026-06-01T00:00:00Z"), ts("2026-06-05T00:00:00Z"))
    assert (closed.ended_by, closed.ended_by_kind) == (expiry_id, "expiry")


def test_expiry_at_a_start_is_invalid_and_in_a_gap_unchanged() -> None:
    first = version("A", "2026-06-01T00:00:00Z", "2026-06-05T00:00:00Z")
    at_start = plan_expire([first], at=ts("2026-06-01T00:00:00Z"), expiry_id=uuid4())
    in_gap = plan_expire([first], at=ts("2026-06-06T00:00:00Z"), expiry_id=uuid4())
    assert (at_start.status, at_start.insert) == ("invalid", ())
    assert (in_gap.status, in_gap.insert, in_gap.retire) == ("unchanged", (), ())
