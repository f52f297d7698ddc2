"""Equal-start policies, disputes, resolution and retraction end to end on the real database.

Listing conflicts by page and resolving them, which every surface answers the same way, are
scenarios of tests/conformance/test_conflicts.py."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest

from store.contract.facts import Challenger, ConflictRecord, Fact
from store.contract.results import UpdateResult
from store.db.clock import ManualClock
from store.service import MemoryStore
from tests.conftest import ts
from tests.helpers import assert_value, declare, record

T = "2026-06-01T09:00:00Z"  # the shared start every equal-start test fights over
WRITES_AT = ts("2026-06-02T00:00:00Z")  # system time of the first writes (after T)
SUBJECT = "account:42"

CONFLICT_REASON = "a different value already starts at this instant"
DISPUTE_REASON = "disputed: a source of equal rank starts a different value here"

# Episode id -> (kind, value it asserts). The incumbent is always m1's "gold".
EPISODES = {
    "m1": ("message", "gold"),
    "u1": ("user_confirmation", "platinum"),
    "u2": ("user_confirmation", "diamond"),
    "m2": ("message", "silver"),
    "m3": ("message", "copper"),
    "t1": ("tool_result", "bronze"),
    "i1": ("inference", "tin"),
}


def sentence(value: str) -> str:
    return f"Account 42 is on {value}."


def setup_tier(
    store: MemoryStore, tenant: str, clock: ManualClock, policy: str, **extra: Any
) -> None:
    """Declare ``tier`` under ``policy`` and record every episode, all occurring at T."""
    clock.set(WRITES_AT)
    declare(store, tenant, "tier", "string", on_equal_start=policy, **extra)
    for episode_id, (kind, value) in EPISODES.items():
        record(store, tenant, episode_id, T, text=sentence(value), kind=kind)


def say(
    store: MemoryStore,
    tenant: str,
    episode_id: str,
    subject: str = SUBJECT,
    value: str | None = None,
) -> UpdateResult:
    """Assert the episode's value for ``subject``.tier from T, quoting the episode."""
    value = value or EPISODES[episode_id][1]
    return assert_value(
        store,
        tenant,
        episode_id,
        value,
        T,
        subject=subject,
        attribute="tier",
        evidence=sentence(value),
    )


def written(result: UpdateResult) -> Fact:
    assert result.status == "written", result
    assert result.fact is not None
    return result.fact


class Labels:
    """Names fact ids so whole outcomes compare as plain tuples."""

    def __init__(self, **names: UUID) -> None:
        self.names = {fact_id: name for name, fact_id in names.items()}

    def __call__(self, fact_id: UUID | None) -> str | None:
        return None if fact_id is None else self.names.get(fact_id, "unknown")


def outcome(result: UpdateResult, label: Labels) -> tuple[Any, ...]:
    fact = result.fact
    return (
        result.status,
        result.reason,
        None if fact is None else (fact.value, fact.source_episode_id, label(fact.fact_id)),
        None if fact is None else label(fact.supersedes),
        result.conflict_id is not None,
    )


def snapshot(store: MemoryStore, tenant: str, subject: str, label: Labels) -> dict[str, Any]:
    """What the reads say about ``subject``.tier: current, history and open conflicts."""
    current = store.facts.current(tenant, subject, "tier")
    return {
        "current": (
            current.value,
            current.source_episode_id,
            label(current.fact_id),
            label(current.supersedes),
            current.status,
            current.disputed,
            [(c.value, c.source_episode_id) for c in current.challengers],
        ),
        "history": [
            (v.value, v.source_episode_id, label(v.fact_id), v.retired_at is not None)
            for v in store.facts.history(tenant, subject, "tier")
        ],
        "open": [
            (c.policy, c.disputed, label(c.incumbent_fact_id), c.challenger.value)
            for c in store.conflicts.list(tenant, subject=subject).conflicts
        ],
    }


INCUMBENT_READ: tuple[Any, ...] = ("gold", "m1", "inc", None, "current", False, [])
INCUMBENT_ONLY = [("gold", "m1", "inc", False)]


def kept(policy: str, value: str, disputed: bool = False) -> dict[str, Any]:
    """Reads after a refused newcomer: the incumbent stands, the challenger waits logged."""
    return {
        "current": (*INCUMBENT_READ[:5], disputed, [(value, "m2")] if disputed else []),
        "history": INCUMBENT_ONLY,
        "open": [(policy, disputed, "inc", value)],
    }


REPLACED: dict[str, Any] = {
    "current": ("platinum", "u1", "new", "inc", "current", False, []),
    "history": [("gold", "m1", "inc", True), ("platinum", "u1", "new", False)],
    "open": [],
}
UNTOUCHED = {"current": INCUMBENT_READ, "history": INCUMBENT_ONLY, "open": []}

# policy -> column -> (result of the newcomer, reads afterwards)
TABLE: dict[str, dict[str, tuple[tuple[Any, ...], dict[str, Any]]]] = {
    "reject": {
        "outranks": (("conflict", CONFLICT_REASON, None, None, True), kept("reject", "platinum")),
        "same_rank": (("conflict", CONFLICT_REASON, None, None, True), kept("reject", "silver")),
        "outranked": (("conflict", CONFLICT_REASON, None, None, True), kept("reject", "bronze")),
    },
    "source_precedence": {
        "outranks": (("written", None, ("platinum", "u1", "new"), "inc", False), REPLACED),
        "same_rank": (
            ("conflict", DISPUTE_REASON, None, None, True),
            kept("source_precedence", "silver", disputed=True),
        ),
        "outranked": (("unchanged", "outranked", ("gold", "m1", "inc"), None, False), UNTOUCHED),
    },
    "confirmed_wins": {
        "outranks": (("written", None, ("platinum", "u1", "new"), "inc", False), REPLACED),
        "same_rank": (
            ("conflict", CONFLICT_REASON, None, None, True),
            kept("confirmed_wins", "silver"),
        ),
        "outranked": (
            ("conflict", CONFLICT_REASON, None, None, True),
            kept("confirmed_wins", "bronze"),
        ),
    },
}
NEWCOMER = {"outranks": "u1", "same_rank": "m2", "outranked": "t1"}


@pytest.mark.parametrize("policy", sorted(TABLE))
def test_each_policy_decides_each_column_of_the_table(
    store: MemoryStore, tenant: str, clock: ManualClock, policy: str
) -> None:
    setup_tier(store, tenant, clock, policy)
    observed = {}
    for column, newcomer in NEWCOMER.items():
        subject = f"account:{column}"
        clock.set(WRITES_AT)
        incumbent = written(say(store, tenant, "m1", subject))
        clock.set(ts("2026-06-02T01:00:00Z"))  # the newcomer arrives later in system time
        result = say(store, tenant, newcomer, subject)
        label = Labels(inc=incumbent.fact_id)
        if result.status == "written":
            assert result.fact is not None
            label = Labels(inc=incumbent.fact_id, new=result.fact.fact_id)
        observed[column] = (outcome(result, label), snapshot(store, tenant, subject, label))
    assert observed == TABLE[policy]


def test_a_replacement_takes_the_incumbents_window_and_retires_it_without_deleting(
    store: MemoryStore, tenant: str, clock: ManualClock
) -> None:
    setup_tier(store, tenant, clock, "source_precedence")
    incumbent = written(say(store, tenant, "m1"))
    clock.set(ts("2026-06-02T01:00:00Z"))
    newcomer = written(say(store, tenant, "u1"))

    assert (newcomer.valid_from, newcomer.valid_to, newcomer.ended_by, newcomer.supersedes) == (
        ts(T),
        None,
        None,
        incumbent.fact_id,
    )
    assert (newcomer.source_kind, newcomer.recorded_at, newcomer.status) == (
        "user_confirmation",
        ts("2026-06-02T01:00:00Z"),
        "current",
    )
    retired, now_current = store.facts.history(tenant, SUBJECT, "tier")
    assert retired == incumbent.model_copy(
        update={"retired_at": ts("2026-06-02T01:00:00Z"), "status": "retired"}
    )
    assert now_current == newcomer
    # Before the replacement was recorded, the incumbent was what we believed.
    believed = store.facts.at(tenant, SUBJECT, "tier", valid_at=T, known_at="2026-06-02T00:30:00Z")
    assert (believed.value, believed.fact_id, believed.status) == (
        "gold",
        incumbent.fact_id,
        "retired",
    )


def test_confirmed_wins_lets_a_confirmation_replace_a_confirmation(
    store: MemoryStore, tenant: str, clock: ManualClock
) -> None:
    setup_tier(store, tenant, clock, "confirmed_wins")
    first = written(say(store, tenant, "u1"))
    second = written(say(store, tenant, "u2"))
    assert (second.value, second.source_episode_id, second.supersedes) == (
        "diamond",
        "u2",
        first.fact_id,
    )
    current = store.facts.current(tenant, SUBJECT, "tier")
    assert (current.fact_id, current.value, current.disputed) == (second.fact_id, "diamond", False)
    # An inference, which under source_precedence would be outranked, is a plain conflict here.
    refused = say(store, tenant, "i1")
    assert (refused.status, refused.reason, refused.fact) == ("conflict", CONFLICT_REASON, None)
    assert [
        (c.policy, c.disputed, c.incumbent_fact_id, c.challenger.value)
        for c in store.conflicts.list(tenant).conflicts
    ] == [("confirmed_wins", False, second.fact_id, "tin")]


def test_under_source_precedence_two_confirmations_dispute(
    store: MemoryStore, tenant: str, clock: ManualClock
) -> None:
    setup_tier(store, tenant, clock, "source_precedence")
    first = written(say(store, tenant, "u1"))
    result = say(store, tenant, "u2")
    assert (result.status, result.reason) == ("conflict", DISPUTE_REASON)
    current = store.facts.current(tenant, SUBJECT, "tier")
    assert (current.fact_id, current.disputed, [c.value for c in current.challengers]) == (
        first.fact_id,
        True,
        ["diamond"],
    )


def test_per_attribute_ranks_let_an_inference_outrank_a_message(
    store: MemoryStore, tenant: str, clock: ManualClock
) -> None:
    setup_tier(store, tenant, clock, "source_precedence", source_ranks={"inference": 5})
    assert store.admin.list_attributes(tenant)[0].source_ranks == {"inference": 5}
    incumbent = written(say(store, tenant, "m1"))
    inferred = written(say(store, tenant, "i1"))
    assert (inferred.value, inferred.supersedes) == ("tin", incumbent.fact_id)
    # A tool result keeps its default rank: below a message, so below the inference too.
    other = written(say(store, tenant, "m1", "account:7"))
    outranked = say(store, tenant, "t1", "account:7")
    assert (outranked.status, outranked.reason) == ("unchanged", "outranked")
    assert outranked.fact == other
    assert [store.facts.current(tenant, s, "tier").value for s in (SUBJECT, "account:7")] == [
        "tin",
        "gold",
    ]


def test_a_dispute_reads_everywhere_as_the_incumbent_citing_the_challenger(
    store: MemoryStore, tenant: str, clock: ManualClock
) -> None:
    setup_tier(store, tenant, clock, "source_precedence")
    incumbent = written(say(store, tenant, "m1"))
    clock.set(ts("2026-06-02T01:00:00Z"))
    disputed = say(store, tenant, "m2")
    assert (disputed.status, disputed.reason, disputed.fact) == ("conflict", DISPUTE_REASON, None)
    assert disputed.conflict_id is not None
    challenger = Challenger(
        conflict_id=disputed.conflict_id,
        value="silver",
        source_episode_id="m2",
        source_kind="message",
        evidence=sentence("silver"),
        evidence_verified=True,
    )
    expected = incumbent.model_copy(update={"disputed": True, "challengers": [challenger]})

    assert store.facts.current(tenant, SUBJECT, "tier") == expected
    assert store.facts.at(tenant, SUBJECT, "tier", valid_at=T) == expected
    assert store.subjects.profile(tenant, SUBJECT).facts == [expected]
    assert store.facts.history(tenant, SUBJECT, "tier") == [expected]
    page = store.conflicts.list(tenant)
    assert page.conflicts == [
        ConflictRecord(
            conflict_id=disputed.conflict_id,
            subject=SUBJECT,
            attribute="tier",
            valid_from=ts(T),
            policy="source_precedence",
            disputed=True,
            incumbent_fact_id=incumbent.fact_id,
            challenger=challenger,
            status="open",
            created_at=ts("2026-06-02T01:00:00Z"),
            resolved_at=None,
            resolution=None,
            resolved_fact_id=None,
        )
    ]
    assert page.next_cursor is None
    # The same challenger again finds the open conflict; a second one joins the citation.
    assert say(store, tenant, "m2").conflict_id == disputed.conflict_id
    clock.set(ts("2026-06-02T02:00:00Z"))
    another = say(store, tenant, "m3")
    current = store.facts.current(tenant, SUBJECT, "tier")
    assert [(c.conflict_id, c.value) for c in current.challengers] == [
        (disputed.conflict_id, "silver"),
        (another.conflict_id, "copper"),
    ]
    assert len(store.conflicts.list(tenant).conflicts) == 2


def test_a_rejected_conflict_resolved_for_the_challenger_replaces_the_incumbent(
    store: MemoryStore, tenant: str, clock: ManualClock
) -> None:
    setup_tier(store, tenant, clock, "reject")
    incumbent = written(say(store, tenant, "m1"))
    result = say(store, tenant, "t1")
    assert (result.status, result.reason) == ("conflict", CONFLICT_REASON)
    assert result.conflict_id is not None
    assert (
        store.facts.current(tenant, SUBJECT, "tier") == incumbent
    )  # a reject conflict is no dispute
    clock.set(ts("2026-06-02T01:00:00Z"))

    resolved = store.conflicts.resolve(tenant, result.conflict_id, choose="challenger")

    assert resolved.fact is not None
    assert (resolved.fact.value, resolved.fact.source_kind, resolved.fact.supersedes) == (
        "bronze",
        "tool_result",
        incumbent.fact_id,
    )
    assert resolved.conflict.resolved_fact_id == resolved.fact.fact_id
    assert store.facts.current(tenant, SUBJECT, "tier") == resolved.fact
    assert [(f.value, f.status) for f in store.facts.history(tenant, SUBJECT, "tier")] == [
        ("gold", "retired"),
        ("bronze", "current"),
    ]


def test_redeclaring_the_policy_bumps_schema_version_and_takes_effect(
    store: MemoryStore, tenant: str, clock: ManualClock
) -> None:
    setup_tier(store, tenant, clock, "reject")
    incumbent = written(say(store, tenant, "m1"))
    assert say(store, tenant, "u1").status == "conflict"

    redeclared = store.admin.declare_attribute(
        tenant,
        "tier",
        {"value_type": "string", "description": "the tier", "on_equal_start": "source_precedence"},
    )
    same_again = store.admin.declare_attribute(
        tenant,
        "tier",
        {"value_type": "string", "description": "the tier", "on_equal_start": "source_precedence"},
    )

    assert (redeclared.on_equal_start, redeclared.schema_version) == ("source_precedence", 2)
    assert same_again == redeclared
    replaced = written(say(store, tenant, "u1", "account:42"))
    assert (replaced.schema_version, replaced.supersedes, incumbent.schema_version) == (
        2,
        incumbent.fact_id,
        1,
    )


def test_retracting_a_replacement_brings_the_incumbent_back(
    store: MemoryStore, tenant: str, clock: ManualClock
) -> None:
    setup_tier(store, tenant, clock, "source_precedence")
    incumbent = written(say(store, tenant, "m1"))
    clock.set(ts("2026-06-02T01:00:00Z"))
    replacement = written(say(store, tenant, "u1"))
    clock.set(ts("2026-06-02T02:00:00Z"))

    result = store.facts.retract(tenant, SUBJECT, "tier", valid_from=T)

    assert (result.status, result.fact_id, result.restored_fact_id) == (
        "retracted",
        replacement.fact_id,
        incumbent.fact_id,
    )
    current = store.facts.current(tenant, SUBJECT, "tier")
    assert (
        current.fact_id,
        current.value,
        current.source_episode_id,
        current.valid_from,
        current.valid_to,
        current.recorded_at,
        current.supersedes,
    ) == (incumbent.fact_id, "gold", "m1", ts(T), None, ts("2026-06-02T02:00:00Z"), None)
    assert [
        (f.value, f.recorded_at, f.retired_at) for f in store.facts.history(tenant, SUBJECT, "tier")
    ] == [
        ("gold", WRITES_AT, ts("2026-06-02T01:00:00Z")),
        ("platinum", ts("2026-06-02T01:00:00Z"), ts("2026-06-02T02:00:00Z")),
        ("gold", ts("2026-06-02T02:00:00Z"), None),
    ]
    # Withdrawn already: naming it again changes nothing.
    again = store.facts.retract(tenant, SUBJECT, "tier", fact_id=replacement.fact_id)
    assert (again.status, again.restored_fact_id) == ("unchanged", None)
    assert store.facts.current(tenant, SUBJECT, "tier").fact_id == incumbent.fact_id


def test_retracting_a_replacement_hands_a_gap_fact_back_to_the_incumbent(
    store: MemoryStore, tenant: str, clock: ManualClock
) -> None:
    setup_tier(store, tenant, clock, "source_precedence")
    incumbent = written(say(store, tenant, "m1"))
    clock.set(ts("2026-06-02T01:00:00Z"))
    replacement = written(say(store, tenant, "u1"))
    record(store, tenant, "early", "2026-05-20T00:00:00Z", text=sentence("free"))
    delayed = written(
        assert_value(store, tenant, "early", "free", subject=SUBJECT, attribute="tier")
    )
    assert (delayed.valid_to, delayed.ended_by) == (ts(T), replacement.fact_id)

    store.facts.retract(tenant, SUBJECT, "tier", fact_id=replacement.fact_id)

    current = [
        (f.value, f.valid_from, f.valid_to, f.ended_by)
        for f in store.facts.history(tenant, SUBJECT, "tier")
        if f.retired_at is None
    ]
    assert current == [
        ("free", ts("2026-05-20T00:00:00Z"), ts(T), incumbent.fact_id),
        ("gold", ts(T), None, None),
    ]
