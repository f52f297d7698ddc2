"""Retracting a fact equals never having asserted it (design 4, "Retract"), on the real store.

Each example writes one random sequence of assertions and expiries to subject A and the same
sequence without one chosen assertion F to subject B, then retracts F from A. Afterwards A's
current knowledge must be B's, F must survive in history only as retired versions, and what
A's knowledge was just before the retraction must still be readable at that known-at time.

The store rebuilds the key from its log (assertions and expiries in arrival order, an expiry
logged even when it changed nothing) without F. The claim then holds for every sequence in
which no operation was refused or absorbed because of F, so every assertion has its own value
and its own start (even hours), never unchanged or a conflict, and expiries fall on odd
hours, never invalid. A small interval model, written here and independent of
``store.facts.temporal``, checks the store's statuses on both subjects.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from uuid import UUID, uuid4

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from store.contract.facts import Fact
from store.contract.results import RetractResult
from store.db.clock import ManualClock
from store.errors import InvalidInput, NotFound
from store.service import MemoryStore

ATTRIBUTE = "deadline"
DAY = datetime(2026, 1, 1, tzinfo=UTC)
ASSERT_HOURS = tuple(range(0, 24, 2))
EXPIRY_HOURS = tuple(range(1, 24, 2))
SYSTEM_START = datetime(2026, 6, 1, tzinfo=UTC)
EPISODE_TIME = "2025-12-01T00:00:00Z"
# Every window starts and ends on a whole hour, so whole hours (and one before them all) probe
# every stretch of valid time.
PROBES = (DAY - timedelta(hours=1), *(DAY + timedelta(hours=hour) for hour in range(24)))

_examples = itertools.count(1)


def _at(hour: int) -> datetime:
    return DAY + timedelta(hours=hour)


# -- operations and scenarios -------------------------------------------------------------


@dataclass(frozen=True)
class Assert:
    """Assert ``value`` from ``hour`` (an even hour of the day)."""

    value: str
    hour: int


@dataclass(frozen=True)
class Expire:
    """Expire the key at ``hour`` (an odd hour of the day)."""

    hour: int


Operation = Assert | Expire


@dataclass(frozen=True)
class Scenario:
    """A sequence of writes, the index of the assertion to retract, and how to name it."""

    ops: tuple[Operation, ...]
    retracted: int
    by_fact_id: bool

    @property
    def target(self) -> Assert:
        """The assertion that is retracted."""
        op = self.ops[self.retracted]
        assert isinstance(op, Assert)
        return op

    def without_target(self) -> tuple[Operation, ...]:
        """The sequence as if the retracted assertion had never been made."""
        return self.ops[: self.retracted] + self.ops[self.retracted + 1 :]


def _value(number: int) -> str:
    return (datetime(2026, 7, 1, tzinfo=UTC) + timedelta(days=number)).date().isoformat()


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    """Distinct values on distinct even-hour starts, expiries on odd hours, in any order."""
    starts = draw(st.lists(st.sampled_from(ASSERT_HOURS), min_size=1, max_size=6, unique=True))
    ends = draw(st.lists(st.sampled_from(EXPIRY_HOURS), max_size=4))
    asserts = [Assert(_value(number), hour) for number, hour in enumerate(starts)]
    ops: list[Operation] = draw(st.permutations([*asserts, *(Expire(hour) for hour in ends)]))
    target = draw(st.sampled_from(asserts))
    return Scenario(tuple(ops), ops.index(target), draw(st.booleans()))


# -- the reference model: a key's current windows --------------------------------------------

Window = tuple[int, int | None, str]
"""A current version: start hour, end hour (None = open), value."""


Outcome = tuple[str, str | None]
"""An operation's status and the value of the version it cut short (None: it cut none)."""


def model_apply(windows: list[Window], op: Operation) -> Outcome:
    """Apply ``op`` to the windows in place; return the status the store should report."""
    if isinstance(op, Assert):
        for start, _, value in windows:
            if start == op.hour:
                return ("unchanged" if value == op.value else "conflict"), None
        for index, (start, end, value) in enumerate(windows):
            if start < op.hour and (end is None or op.hour < end):
                if value == op.value:
                    return "unchanged", None
                windows[index] = (start, op.hour, value)
                windows.append((op.hour, end, op.value))
                return "written", value
        following = [start for start, _, _ in windows if start > op.hour]
        windows.append((op.hour, min(following, default=None), op.value))
        return "written", None
    for index, (start, end, value) in enumerate(windows):
        if start == op.hour:
            return "invalid", None
        if start < op.hour and (end is None or op.hour < end):
            windows[index] = (start, op.hour, value)
            return "expired", value
    return "unchanged", None


def model_run(ops: Sequence[Operation]) -> tuple[list[Outcome], set[Window]]:
    """The outcomes of ``ops`` applied in order to an empty key, and the final windows."""
    windows: list[Window] = []
    outcomes = [model_apply(windows, op) for op in ops]
    return outcomes, set(windows)


# -- the store ---------------------------------------------------------------------------------


@dataclass
class Writer:
    """Writes to the store with the system clock strictly increasing per write."""

    store: MemoryStore
    clock: ManualClock
    tenant: str
    episode_id: str
    now: datetime = SYSTEM_START

    def tick(self) -> datetime:
        """Move system time one minute on and return it."""
        self.now += timedelta(minutes=1)
        self.clock.set(self.now)
        return self.now

    def apply(
        self, subject: str, op: Operation, expiries: dict[UUID, str], facts: dict[Assert, UUID]
    ) -> str:
        """Apply one operation; note the fact or expiry id it created."""
        self.tick()
        if isinstance(op, Assert):
            [result] = self.store.facts.apply_candidates(
                self.tenant,
                self.episode_id,
                [
                    {
                        "evidence": "",
                        "subject": subject,
                        "attribute": ATTRIBUTE,
                        "change": "update",
                        "value": op.value,
                        "valid_from": _at(op.hour).isoformat(),
                    }
                ],
            )
            if result.fact is not None:
                facts[op] = result.fact.fact_id
            return result.status
        expired = self.store.facts.expire(
            self.tenant, subject, ATTRIBUTE, at=_at(op.hour), source_episode_id=self.episode_id
        )
        if expired.expiry_id is not None:
            expiries[expired.expiry_id] = f"expiry@{op.hour}"
        return expired.status


Row = tuple[str, datetime, datetime | None, str | None]
"""A current version compared across subjects: value, window, and what ended it (by name)."""


def current_rows(history: Sequence[Fact], expiries: dict[UUID, str]) -> list[Row]:
    """The non-retired versions, ``ended_by`` named by the ending fact's value or expiry."""
    names: dict[UUID, str] = {fact.fact_id: str(fact.value) for fact in history}
    names.update(expiries)
    return sorted(
        (
            str(fact.value),
            fact.valid_from,
            fact.valid_to,
            names[fact.ended_by] if fact.ended_by is not None else None,
        )
        for fact in history
        if fact.retired_at is None
    )


def as_windows(rows: Sequence[Row]) -> set[Window]:
    """The rows in the model's terms (hours of the day)."""
    return {
        (
            int((start - DAY) / timedelta(hours=1)),
            None if end is None else int((end - DAY) / timedelta(hours=1)),
            value,
        )
        for value, start, end, _ in rows
    }


def read_all(
    store: MemoryStore, tenant: str, subject: str, known_at: datetime
) -> list[Fact | None]:
    """The fact valid at each probe instant as known at ``known_at`` (None: not known)."""
    found: list[Fact | None] = []
    for instant in PROBES:
        try:
            found.append(
                store.facts.at(tenant, subject, ATTRIBUTE, valid_at=instant, known_at=known_at)
            )
        except NotFound:
            found.append(None)
    return found


def _stable(fact: Fact | None) -> dict[str, object] | None:
    """A read without the fields a later retirement may change (status, its label, retired_at)."""
    return None if fact is None else fact.model_dump(exclude={"status", "label", "retired_at"})


# -- the property ----------------------------------------------------------------------------


@pytest.fixture
def declared(store: MemoryStore, tenant: str) -> str:
    """The test's tenant with the date attribute declared."""
    store.admin.declare_attribute(
        tenant, ATTRIBUTE, {"value_type": "date", "description": "a deadline"}
    )
    return tenant


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(scenario=scenarios())
# F splits P and is split by G: P must run to G again, G keeps its window.
@example(
    scenario=Scenario(
        (Assert(_value(0), 0), Assert(_value(1), 4), Assert(_value(2), 8)), 1, by_fact_id=True
    )
)
# An expiry cut P, which F had closed, short of F's start: nothing takes F's window.
@example(
    scenario=Scenario(
        (Assert(_value(0), 0), Assert(_value(1), 4), Assert(_value(2), 8), Expire(3)),
        1,
        by_fact_id=False,
    )
)
# A delayed G placed before F ran only to F's start: it gets F's open end.
@example(
    scenario=Scenario((Assert(_value(0), 10), Assert(_value(1), 2), Expire(1)), 0, by_fact_id=False)
)
def test_retracting_a_fact_equals_never_asserting_it(
    store: MemoryStore, clock: ManualClock, declared: str, scenario: Scenario
) -> None:
    tenant = declared
    with_target, full_windows = model_run(scenario.ops)
    without_target, expected_windows = model_run(scenario.without_target())
    event(f"retract by {'fact_id' if scenario.by_fact_id else 'valid_from'}")

    number = next(_examples)
    subject_a, subject_b = f"retract-a-{number}", f"retract-b-{number}"
    episode_id = f"retract-ep-{number}"
    store.episodes.record(tenant, {"id": episode_id, "occurred_at": EPISODE_TIME, "text": "so"})
    writer = Writer(store, clock, tenant, episode_id)

    facts_a: dict[Assert, UUID] = {}
    expiries_a: dict[UUID, str] = {}
    statuses_a = [writer.apply(subject_a, op, expiries_a, facts_a) for op in scenario.ops]
    assert statuses_a == [status for status, _ in with_target]
    facts_b: dict[Assert, UUID] = {}
    expiries_b: dict[UUID, str] = {}
    statuses_b = [
        writer.apply(subject_b, op, expiries_b, facts_b) for op in scenario.without_target()
    ]
    assert statuses_b == [status for status, _ in without_target]

    before = writer.now
    history_before = store.facts.history(tenant, subject_a, ATTRIBUTE)
    assert as_windows(current_rows(history_before, expiries_a)) == full_windows
    reads_before = read_all(store, tenant, subject_a, before)
    target_fact = facts_a[scenario.target]
    closed_by_target = sum(
        fact.ended_by == target_fact for fact in history_before if fact.retired_at is None
    )
    event(f"versions the retracted fact had closed: {closed_by_target}")

    retracted_at = writer.tick()
    if scenario.by_fact_id:
        result = store.facts.retract(tenant, subject_a, ATTRIBUTE, fact_id=target_fact)
    else:
        result = store.facts.retract(
            tenant, subject_a, ATTRIBUTE, valid_from=_at(scenario.target.hour)
        )
    assert result == RetractResult(status="retracted", fact_id=target_fact)

    # Current knowledge of A is now B's: values, windows and what ended each version.
    history_a = store.facts.history(tenant, subject_a, ATTRIBUTE)
    history_b = store.facts.history(tenant, subject_b, ATTRIBUTE)
    rows_b = current_rows(history_b, expiries_b)
    assert current_rows(history_a, expiries_a) == rows_b
    assert as_windows(rows_b) == expected_windows

    # The retracted fact stays in history, every version of it retired (the last just now).
    versions = [fact for fact in history_a if fact.fact_id == target_fact]
    assert versions
    assert all(fact.retired_at is not None for fact in versions)
    assert retracted_at in {fact.retired_at for fact in versions}
    assert {fact.status for fact in versions} == {"retired"}
    assert {fact.value for fact in versions} == {scenario.target.value}

    # Knowledge just before the retraction is unchanged: the same versions, the same reads.
    visible = [
        fact
        for fact in history_a
        if fact.recorded_at <= before and (fact.retired_at is None or before < fact.retired_at)
    ]
    believed = [fact for fact in history_before if fact.retired_at is None]
    assert sorted(fact.version_id for fact in visible) == sorted(
        fact.version_id for fact in believed
    )
    reads_after = read_all(store, tenant, subject_a, before)
    assert [_stable(fact) for fact in reads_after] == [_stable(fact) for fact in reads_before]
    for fact in reads_after:
        if fact is not None:
            retired = fact.retired_at == retracted_at
            assert retired or fact.retired_at is None, fact
            assert (fact.status == "retired") == retired, fact


# -- edge cases ------------------------------------------------------------------------------


def test_retract_edge_cases(store: MemoryStore, clock: ManualClock, declared: str) -> None:
    tenant = declared
    store.episodes.record(tenant, {"id": "edge-ep", "occurred_at": EPISODE_TIME, "text": "so"})
    writer = Writer(store, clock, tenant, "edge-ep")
    facts: dict[Assert, UUID] = {}
    first, second = Assert(_value(0), 0), Assert(_value(1), 4)
    assert [writer.apply("edge", op, {}, facts) for op in (first, second)] == ["written"] * 2
    writer.apply("edge-other", Assert(_value(2), 0), {}, facts)
    writer.tick()

    unknown = uuid4()
    with pytest.raises(NotFound) as missing:
        store.facts.retract(tenant, "edge", ATTRIBUTE, fact_id=unknown)
    assert (missing.value.code, missing.value.field) == ("not_found", "fact_id")
    # A fact of another key is not a fact of this one.
    with pytest.raises(NotFound) as elsewhere:
        store.facts.retract(tenant, "edge", ATTRIBUTE, fact_id=facts[Assert(_value(2), 0)])
    assert elsewhere.value.field == "fact_id"
    with pytest.raises(NotFound) as no_start:
        store.facts.retract(tenant, "edge", ATTRIBUTE, valid_from=_at(2))
    assert (no_start.value.code, no_start.value.field) == ("not_found", "valid_from")
    with pytest.raises(InvalidInput) as both:
        store.facts.retract(tenant, "edge", ATTRIBUTE, fact_id=facts[second], valid_from=_at(4))
    assert (both.value.code, both.value.field) == ("invalid", "fact_id")
    with pytest.raises(InvalidInput) as neither:
        store.facts.retract(tenant, "edge", ATTRIBUTE)
    assert (neither.value.code, neither.value.field) == ("invalid", "fact_id")

    # None of the refused calls changed anything.
    history = store.facts.history(tenant, "edge", ATTRIBUTE)
    assert [
        (fact.value, fact.valid_from, fact.valid_to) for fact in history if not fact.retired_at
    ] == [
        (_value(0), _at(0), _at(4)),
        (_value(1), _at(4), None),
    ]

    assert store.facts.retract(tenant, "edge", ATTRIBUTE, fact_id=facts[second]) == RetractResult(
        status="retracted", fact_id=facts[second]
    )
    writer.tick()
    assert store.facts.retract(tenant, "edge", ATTRIBUTE, fact_id=facts[second]) == RetractResult(
        status="unchanged", fact_id=facts[second]
    )
    history = store.facts.history(tenant, "edge", ATTRIBUTE)
    assert [
        (fact.value, fact.valid_from, fact.valid_to, fact.ended_by)
        for fact in history
        if fact.retired_at is None
    ] == [(_value(0), _at(0), None, None)]
    assert store.facts.current(tenant, "edge", ATTRIBUTE).fact_id == facts[first]
