"""Random assertions and expiries against the real store agree with a tiny reference model.

The model (written here, independent of ``store.facts.temporal``) keeps a key's timeline as
breakpoints: ``instant -> value`` starts a value, ``instant -> None`` ends the value before it.
The value valid at x comes from the latest breakpoint at or before x. Every write is applied to
both the store (at a strictly non-decreasing system time) and the model, whose timeline is
snapshotted after each write, so known-at reads can be checked as well as current ones.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import datetime, timedelta

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from store.contract.facts import Fact
from store.db.clock import ManualClock
from store.errors import InvalidInput, NotFound
from store.service import MemoryStore

ATTRIBUTE = "deadline"
VALUES = ("2026-07-01", "2026-07-02", "2026-07-03")
INSTANTS = tuple(f"2026-01-01T{hour:02d}:00:00Z" for hour in range(8))
SYSTEM_START = datetime.fromisoformat("2026-06-01T00:00:00Z")
EPISODE_TIME = "2025-12-01T00:00:00Z"


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text)


# Every instant an operation can name, the midpoints between them, one before all, one after.
VALID_POINTS: tuple[datetime, ...] = (
    _instant("2025-12-31T23:00:00Z"),
    *(_instant(text) for text in INSTANTS),
    *(_instant(text) + timedelta(minutes=30) for text in INSTANTS[:-1]),
    _instant("2026-01-01T09:00:00Z"),
)

_examples = itertools.count(1)


# -- the reference model ----------------------------------------------------------------

Timeline = dict[datetime, str | None]
"""Breakpoints of one key: a value starts there (str) or the value before it ends (None)."""

Run = tuple[datetime, datetime | None, str]
"""A stretch of one value: start, end (None = open), value."""


def model_value_at(timeline: Timeline, instant: datetime) -> str | None:
    """The value valid at ``instant``: the latest breakpoint at or before it decides."""
    earlier = [point for point in timeline if point <= instant]
    return timeline[max(earlier)] if earlier else None


def model_assert(timeline: Timeline, value: str, start: datetime) -> str:
    """Assert ``value`` from ``start``; return the status the store should report."""
    if timeline.get(start) is not None:
        return "unchanged" if timeline[start] == value else "conflict"
    if model_value_at(timeline, start) == value:
        return "unchanged"
    timeline[start] = value  # replaces an end at ``start`` if there is one
    return "written"


def model_expire(timeline: Timeline, at: datetime) -> str:
    """End the value valid at ``at``; return the status the store should report.

    An end only bounds the value right before it: when a value that already had an end is
    cut short earlier, its old end no longer means anything (design 4, rule 3: a value
    asserted later in the gap runs to the next start, not to a stale end), so it is dropped.
    """
    if timeline.get(at) is not None:
        return "invalid"
    if model_value_at(timeline, at) is None:
        return "unchanged"
    later = [point for point in timeline if point > at]
    if later and timeline[min(later)] is None:
        del timeline[min(later)]
    timeline[at] = None
    return "expired"


def model_runs(timeline: Timeline) -> set[Run]:
    """Every value stretch of the timeline: each value breakpoint up to the next breakpoint."""
    points = sorted(timeline)
    runs: set[Run] = set()
    for index, point in enumerate(points):
        value = timeline[point]
        if value is not None:
            end = points[index + 1] if index + 1 < len(points) else None
            runs.add((point, end, value))
    return runs


def model_run_at(timeline: Timeline, instant: datetime) -> Run | None:
    """The stretch holding at ``instant``, if any."""
    return next(
        (
            run
            for run in model_runs(timeline)
            if run[0] <= instant and (run[1] is None or instant < run[1])
        ),
        None,
    )


def known_at(snapshots: list[tuple[datetime, Timeline]], system_time: datetime) -> Timeline:
    """The model's timeline as known at ``system_time``: the last snapshot not after it."""
    known: Timeline = {}
    for recorded, timeline in snapshots:
        if recorded <= system_time:
            known = timeline
    return known


# -- operations ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Assert:
    """Assert ``value`` from ``at``; ``same_time`` reuses the previous write's system time."""

    value: str
    at: str
    same_time: bool


@dataclass(frozen=True)
class Expire:
    """Expire the key at ``at``; ``same_time`` reuses the previous write's system time."""

    at: str
    same_time: bool


Operation = Assert | Expire

_same_time = st.booleans()
operations = st.lists(
    st.one_of(
        st.builds(
            Assert,
            value=st.sampled_from(VALUES),
            at=st.sampled_from(INSTANTS),
            same_time=_same_time,
        ),
        st.builds(Expire, at=st.sampled_from(INSTANTS), same_time=_same_time),
    ),
    min_size=1,
    max_size=12,
)


# -- reading the store ----------------------------------------------------------------------


def _read(
    store: MemoryStore,
    tenant: str,
    subject: str,
    *,
    valid_at: datetime,
    known: datetime | None = None,
) -> Fact | None:
    try:
        return store.facts.at(tenant, subject, ATTRIBUTE, valid_at=valid_at, known_at=known)
    except NotFound:
        return None


def _as_run(fact: Fact | None) -> Run | None:
    if fact is None:
        return None
    assert isinstance(fact.value, str)
    return (fact.valid_from, fact.valid_to, fact.value)


def _overlap(
    start_a: datetime, end_a: datetime | None, start_b: datetime, end_b: datetime | None
) -> bool:
    """Whether half-open windows [start, end) overlap (None = open end)."""
    return (end_b is None or start_a < end_b) and (end_a is None or start_b < end_a)


def _apply(
    store: MemoryStore, tenant: str, subject: str, episode_id: str, operation: Operation
) -> str:
    """Apply one operation to the store; return its status (``invalid`` for a refused expiry)."""
    if isinstance(operation, Assert):
        [result] = store.facts.apply_candidates(
            tenant,
            episode_id,
            [
                {
                    "evidence": "",
                    "subject": subject,
                    "attribute": ATTRIBUTE,
                    "change": "update",
                    "value": operation.value,
                    "valid_from": operation.at,
                }
            ],
        )
        return result.status
    try:
        expired = store.facts.expire(
            tenant, subject, ATTRIBUTE, at=operation.at, source_episode_id=episode_id
        )
    except InvalidInput:
        return "invalid"
    return expired.status


# -- the property -----------------------------------------------------------------------------


@pytest.fixture
def declared(store: MemoryStore, tenant: str) -> str:
    """The test's tenant with the date attribute declared (reject on equal start)."""
    store.admin.declare_attribute(
        tenant, ATTRIBUTE, {"value_type": "date", "description": "a deadline"}
    )
    return tenant


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=operations)
# A value cut short before its old end: a later value in the gap runs past that stale end.
@example(
    ops=[
        Assert(VALUES[0], INSTANTS[0], same_time=False),
        Expire(INSTANTS[5], same_time=False),
        Expire(INSTANTS[3], same_time=False),
        Assert(VALUES[1], INSTANTS[4], same_time=False),
    ]
)
# The same value asserted exactly where it was expired starts a new version (rule 3).
@example(
    ops=[
        Assert(VALUES[0], INSTANTS[0], same_time=False),
        Expire(INSTANTS[2], same_time=False),
        Assert(VALUES[0], INSTANTS[2], same_time=False),
    ]
)
# Equal starts (conflict, invalid expiry) and writes sharing one system time.
@example(
    ops=[
        Assert(VALUES[0], INSTANTS[1], same_time=False),
        Assert(VALUES[1], INSTANTS[1], same_time=True),
        Expire(INSTANTS[1], same_time=True),
        Assert(VALUES[2], INSTANTS[4], same_time=True),
        Expire(INSTANTS[6], same_time=False),
        Assert(VALUES[0], INSTANTS[0], same_time=True),
    ]
)
def test_random_writes_in_random_order_agree_with_the_reference_model(
    store: MemoryStore, clock: ManualClock, declared: str, ops: list[Operation]
) -> None:
    tenant = declared
    example = next(_examples)
    subject = f"subject-{example}"
    timeline: Timeline = {}
    snapshots: list[tuple[datetime, Timeline]] = []
    now = SYSTEM_START

    for index, operation in enumerate(ops):
        if index > 0 and not operation.same_time:
            now += timedelta(minutes=1)
        clock.set(now)
        episode_id = f"ep-{example}-{index}"
        store.episodes.record(
            tenant, {"id": episode_id, "occurred_at": EPISODE_TIME, "text": "said so"}
        )
        if isinstance(operation, Assert):
            expected = model_assert(timeline, operation.value, _instant(operation.at))
        else:
            expected = model_expire(timeline, _instant(operation.at))
        assert _apply(store, tenant, subject, episode_id, operation) == expected, (
            index,
            operation,
        )
        event(f"{type(operation).__name__.lower()}: {expected}")
        snapshots.append((now, dict(timeline)))

    # Current knowledge: every probe instant, the whole set of current versions, and now.
    for instant in VALID_POINTS:
        found = _read(store, tenant, subject, valid_at=instant)
        assert _as_run(found) == model_run_at(timeline, instant), instant
    history = store.facts.history(tenant, subject, ATTRIBUTE)
    assert {_as_run(fact) for fact in history if fact.retired_at is None} == model_runs(timeline)
    try:
        current: str | None = store.facts.current(tenant, subject, ATTRIBUTE).value
    except NotFound:
        current = None
    assert current == model_value_at(timeline, now)

    # Past knowledge: before the first write, at each write, between writes, after the last.
    write_times = sorted({recorded for recorded, _ in snapshots})
    probes = {write_times[0] - timedelta(seconds=30), *write_times}
    probes |= {
        earlier + (later - earlier) / 2 for earlier, later in itertools.pairwise(write_times)
    }
    probes.add(write_times[-1] + timedelta(seconds=30))
    for system_time in sorted(probes):
        believed = known_at(snapshots, system_time)
        for instant in VALID_POINTS:
            found = _read(store, tenant, subject, valid_at=instant, known=system_time)
            assert _as_run(found) == model_run_at(believed, instant), (system_time, instant)
        visible = {
            _as_run(fact)
            for fact in history
            if fact.recorded_at <= system_time
            and (fact.retired_at is None or system_time < fact.retired_at)
        }
        assert visible == model_runs(believed), system_time

    # No two versions overlap in both valid time and (non-empty) system time.
    seen = [fact for fact in history if fact.retired_at != fact.recorded_at]
    for first, second in itertools.combinations(seen, 2):
        assert not (
            _overlap(first.valid_from, first.valid_to, second.valid_from, second.valid_to)
            and _overlap(first.recorded_at, first.retired_at, second.recorded_at, second.retired_at)
        ), (first, second)
