"""Merging a duplicate into a subject that holds the same key equals asserting the duplicate's
values into that subject through the write path, over random histories, on the real store.

Each example writes one random sequence of assertions to the survivor and to a reference
subject alike, and another to the duplicate. The duplicate's current versions, earliest start
first, then the challengers of its open conflicts, are asserted into the reference with the
ordinary write call; the duplicate is merged into the survivor. Afterwards the survivor's
current knowledge and open conflicts must be the reference's, value for value and window for
window, and the duplicate's id must read as the survivor. Where the survivor holds nothing of
the key, the duplicate's history moves as it was, version for version.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store.contract.facts import Fact
from store.db.clock import ManualClock
from store.service import MemoryStore

ATTRIBUTE = "home_city"
DAY = datetime(2026, 1, 1, tzinfo=UTC)
# Few starts and values, so supersessions, repeats and equal-start conflicts all happen.
HOURS = (0, 4, 8, 12)
VALUES = ("Lisbon", "Porto", "Braga")

_examples = itertools.count(1)

Writes = list[tuple[str, int]]
writes = st.lists(st.tuples(st.sampled_from(VALUES), st.sampled_from(HOURS)), max_size=5)


def _write(
    store: MemoryStore, clock: ManualClock, tenant: str, subject: str, *, value: Any, **cited: Any
) -> None:
    """One candidate through the ordinary write call, a minute of system time after the last."""
    clock.set(clock.now + timedelta(minutes=1))
    [result] = store.facts.apply_candidates(
        tenant,
        cited["episode_id"],
        [
            {
                "evidence": "",
                "subject": subject,
                "attribute": ATTRIBUTE,
                "change": "update",
                "value": value,
                "valid_from": cited["valid_from"].isoformat(),
            }
        ],
    )
    assert result.status != "invalid", result


def _believed(facts: list[Fact]) -> list[tuple[Any, ...]]:
    return [
        (fact.value, fact.valid_from, fact.valid_to, fact.source_episode_id)
        for fact in facts
        if fact.retired_at is None
    ]


def _open_conflicts(store: MemoryStore, tenant: str, subject: str) -> list[tuple[Any, ...]]:
    page = store.conflicts.list(tenant, subject=subject)
    return sorted(
        (c.valid_from, c.challenger.value, c.challenger.source_episode_id) for c in page.conflicts
    )


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(survivor_writes=writes, duplicate_writes=writes.filter(bool))
def test_merging_equals_asserting_the_duplicates_values_through_the_write_path(
    store: MemoryStore,
    clock: ManualClock,
    tenant: str,
    survivor_writes: Writes,
    duplicate_writes: Writes,
) -> None:
    n = next(_examples)
    survivor, reference, duplicate = f"s-{n}", f"r-{n}", f"d-{n}"
    if n == 1:
        store.admin.declare_attribute(tenant, ATTRIBUTE, {"value_type": "string"})
    episodes = [f"e-{n}-{i}" for i in range(len(survivor_writes) + len(duplicate_writes))]
    for episode_id in episodes:
        store.episodes.record(
            tenant, {"id": episode_id, "occurred_at": "2025-12-01T00:00:00Z", "text": "so"}
        )
    for (value, hour), episode_id in zip(
        survivor_writes, episodes[: len(survivor_writes)], strict=True
    ):
        for subject in (survivor, reference):
            at = DAY + timedelta(hours=hour)
            _write(store, clock, tenant, subject, value=value, episode_id=episode_id, valid_from=at)
    for (value, hour), episode_id in zip(
        duplicate_writes, episodes[len(survivor_writes) :], strict=True
    ):
        at = DAY + timedelta(hours=hour)
        _write(store, clock, tenant, duplicate, value=value, episode_id=episode_id, valid_from=at)

    current = sorted(
        (
            fact
            for fact in store.facts.history(tenant, duplicate, ATTRIBUTE)
            if fact.retired_at is None
        ),
        key=lambda fact: (fact.valid_from, fact.recorded_at),
    )
    challengers = store.conflicts.list(tenant, subject=duplicate).conflicts
    for fact in current:
        _write(
            store,
            clock,
            tenant,
            reference,
            value=fact.value,
            episode_id=fact.source_episode_id,
            valid_from=fact.valid_from,
        )
    for conflict in sorted(challengers, key=lambda c: (c.valid_from, c.conflict_id)):
        _write(
            store,
            clock,
            tenant,
            reference,
            value=conflict.challenger.value,
            episode_id=conflict.challenger.source_episode_id,
            valid_from=conflict.valid_from,
        )
    # A key only the duplicate holds moves whole, its versions as they were written; replayed
    # earliest start first, the same values can split into fewer versions, so it is compared
    # with itself.
    moved_whole = _believed(store.facts.history(tenant, duplicate, ATTRIBUTE))
    conflicts_whole = _open_conflicts(store, tenant, duplicate)
    clock.set(clock.now + timedelta(minutes=1))
    merged = store.subjects.merge(tenant, duplicate, into=survivor)

    if survivor_writes:
        expected = _believed(store.facts.history(tenant, reference, ATTRIBUTE))
        expected_conflicts = _open_conflicts(store, tenant, reference)
    else:
        expected, expected_conflicts = moved_whole, conflicts_whole
    assert _believed(store.facts.history(tenant, survivor, ATTRIBUTE)) == expected
    assert _believed(store.facts.history(tenant, duplicate, ATTRIBUTE)) == expected
    assert _open_conflicts(store, tenant, survivor) == expected_conflicts
    moved_versions = len(current) if survivor_writes else merged.versions_moved
    assert (merged.versions_moved, merged.conflicts_moved) == (moved_versions, len(challengers))
