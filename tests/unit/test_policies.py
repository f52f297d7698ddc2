"""Equal-start policies and the replace/retract plans, as pure functions (no database)."""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any
from uuid import UUID, uuid4

import pytest

from store.facts.policies import DEFAULT_RANKS, equal_start_outcome, source_rank
from store.facts.temporal import Expiry, Plan, Version, plan_rebuild, plan_replace, rebuild
from tests.conftest import ts

KINDS = ("user_confirmation", "message", "tool_result", "event", "file", "ticket", "inference")
# The contract's order, highest first; kinds in one tier rank equally.
TIERS = (
    ("user_confirmation",),
    ("message",),
    ("tool_result", "event", "file", "ticket"),
    ("inference",),
)


def tier(kind: str) -> int:
    """Position of ``kind`` in the contract's order (0 = strongest)."""
    return next(index for index, members in enumerate(TIERS) if kind in members)


# One representative pair per column of the contract's table: (newcomer, incumbent).
OUTRANKS = ("user_confirmation", "message")
SAME_RANK = ("tool_result", "event")
OUTRANKED = ("inference", "message")


@pytest.mark.parametrize(
    ("policy", "pair", "outcome"),
    [
        ("reject", OUTRANKS, "conflict"),
        ("reject", SAME_RANK, "conflict"),
        ("reject", OUTRANKED, "conflict"),
        ("source_precedence", OUTRANKS, "replace"),
        ("source_precedence", SAME_RANK, "dispute"),
        ("source_precedence", OUTRANKED, "outranked"),
        ("confirmed_wins", OUTRANKS, "replace"),
        ("confirmed_wins", SAME_RANK, "conflict"),
        ("confirmed_wins", OUTRANKED, "conflict"),
    ],
)
def test_the_policy_table_one_pair_per_column(
    policy: str, pair: tuple[str, str], outcome: str
) -> None:
    newcomer, incumbent = pair
    assert equal_start_outcome(policy, newcomer_kind=newcomer, incumbent_kind=incumbent) == outcome


def test_default_ranks_follow_the_contracts_order() -> None:
    assert set(DEFAULT_RANKS) == set(KINDS)
    for left, right in itertools.product(KINDS, repeat=2):
        stronger = tier(left) < tier(right)
        assert (source_rank(left) > source_rank(right)) == stronger, (left, right)
        assert (source_rank(left) == source_rank(right)) == (tier(left) == tier(right))


def test_source_precedence_over_every_pair_of_kinds() -> None:
    outcomes = {
        (newcomer, incumbent): equal_start_outcome(
            "source_precedence", newcomer_kind=newcomer, incumbent_kind=incumbent
        )
        for newcomer, incumbent in itertools.product(KINDS, repeat=2)
    }
    expected = {
        (newcomer, incumbent): (
            "replace"
            if tier(newcomer) < tier(incumbent)
            else "dispute"
            if tier(newcomer) == tier(incumbent)
            else "outranked"
        )
        for newcomer, incumbent in itertools.product(KINDS, repeat=2)
    }
    assert outcomes == expected
    # A user confirmation meeting another is a same-rank dispute, not a replacement.
    assert outcomes["user_confirmation", "user_confirmation"] == "dispute"


def test_reject_is_a_conflict_for_every_pair_of_kinds() -> None:
    outcomes = {
        equal_start_outcome("reject", newcomer_kind=newcomer, incumbent_kind=incumbent)
        for newcomer, incumbent in itertools.product(KINDS, repeat=2)
    }
    assert outcomes == {"conflict"}


def test_confirmed_wins_replaces_only_for_a_user_confirmation_newcomer() -> None:
    outcomes = {
        (newcomer, incumbent): equal_start_outcome(
            "confirmed_wins", newcomer_kind=newcomer, incumbent_kind=incumbent
        )
        for newcomer, incumbent in itertools.product(KINDS, repeat=2)
    }
    expected = {
        (newcomer, incumbent): "replace" if newcomer == "user_confirmation" else "conflict"
        for newcomer, incumbent in itertools.product(KINDS, repeat=2)
    }
    assert outcomes == expected
    # Also against a user confirmation incumbent; and an outranking message is still refused.
    assert outcomes["user_confirmation", "user_confirmation"] == "replace"
    assert outcomes["message", "inference"] == "conflict"


def test_an_override_can_make_inference_outrank_a_message() -> None:
    overrides = {"inference": 5}

    def outcome(newcomer: str, incumbent: str) -> str:
        return equal_start_outcome(
            "source_precedence",
            newcomer_kind=newcomer,
            incumbent_kind=incumbent,
            overrides=overrides,
        )

    assert [
        outcome("inference", "message"),
        outcome("message", "inference"),
        outcome("inference", "user_confirmation"),
        outcome("inference", "inference"),
        # Kinds the override does not name keep their default ranks.
        outcome("user_confirmation", "message"),
        outcome("tool_result", "message"),
        outcome("file", "ticket"),
    ] == ["replace", "outranked", "replace", "dispute", "replace", "outranked", "dispute"]
    assert [source_rank(kind, overrides) for kind in KINDS] == [4, 3, 2, 2, 2, 2, 5]


def test_an_override_can_tie_and_split_default_tiers() -> None:
    overrides = {"tool_result": 3, "ticket": 0}

    def outcome(newcomer: str, incumbent: str) -> str:
        return equal_start_outcome(
            "source_precedence",
            newcomer_kind=newcomer,
            incumbent_kind=incumbent,
            overrides=overrides,
        )

    assert [
        outcome("tool_result", "message"),  # now equal to a message
        outcome("tool_result", "event"),  # now above its old peers
        outcome("ticket", "inference"),  # now below inference
        outcome("event", "file"),  # untouched peers still tie
    ] == ["dispute", "replace", "outranked", "dispute"]


def test_overrides_do_not_change_reject_or_confirmed_wins() -> None:
    overrides = {"inference": 10, "user_confirmation": 0}
    assert [
        equal_start_outcome(
            "reject", newcomer_kind="inference", incumbent_kind="message", overrides=overrides
        ),
        equal_start_outcome(
            "confirmed_wins",
            newcomer_kind="inference",
            incumbent_kind="message",
            overrides=overrides,
        ),
        equal_start_outcome(
            "confirmed_wins",
            newcomer_kind="user_confirmation",
            incumbent_kind="inference",
            overrides=overrides,
        ),
    ] == ["conflict", "conflict", "replace"]


# -- plans ------------------------------------------------------------------------------


def version(
    value: str,
    valid_from: str,
    valid_to: str | None = None,
    *,
    source: str = "e",
    kind: str = "message",
    fact_id: UUID | None = None,
) -> Version:
    """A stored version (it has a version_id) with a fresh fact id unless given."""
    return Version(
        fact_id=fact_id or uuid4(),
        value=value,
        valid_from=ts(valid_from),
        valid_to=ts(valid_to) if valid_to else None,
        source_episode_id=source,
        source_kind=kind,
        evidence=f"said {value}",
        evidence_verified=True,
        schema_version=1,
        version_id=uuid4(),
    )


def newcomer(value: str, valid_from: str, *, source: str, kind: str) -> Version:
    """A fact as the write path builds it: open window, no version id yet."""
    return replace(version(value, valid_from, source=source, kind=kind), version_id=None)


def ended(v: Version, by: Version | UUID, kind: str = "fact") -> Version:
    """``v`` with ``ended_by`` set to ``by`` (a fact, or an expiry id)."""
    by_id = by.fact_id if isinstance(by, Version) else by
    return replace(v, ended_by=by_id, ended_by_kind="fact" if kind == "fact" else "expiry")


def test_plan_replace_retires_the_incumbent_and_gives_its_window_to_the_newcomer() -> None:
    following = version("C", "2026-06-10T00:00:00Z")
    incumbent = ended(version("A", "2026-06-05T00:00:00Z", "2026-06-10T00:00:00Z"), following)
    new = newcomer("B", "2026-06-05T00:00:00Z", source="u1", kind="user_confirmation")

    plan = plan_replace(incumbent, new)

    placed = replace(
        new,
        valid_to=ts("2026-06-10T00:00:00Z"),
        ended_by=following.fact_id,
        ended_by_kind="fact",
        supersedes=incumbent.fact_id,
    )
    assert plan == Plan("written", retire=(incumbent,), insert=(placed,), shown=placed)
    [inserted] = plan.insert
    assert plan.shown is inserted
    # The newcomer keeps its own identity and provenance; nothing is deleted.
    assert (inserted.fact_id, inserted.value, inserted.source_episode_id) == (
        new.fact_id,
        "B",
        "u1",
    )
    assert inserted.version_id is None


def test_plan_replace_carries_an_expiry_end_and_an_open_end() -> None:
    expiry = uuid4()
    closed = ended(version("A", "2026-06-05T00:00:00Z", "2026-06-08T00:00:00Z"), expiry, "expiry")
    open_ = version("A", "2026-06-05T00:00:00Z")
    new = newcomer("B", "2026-06-05T00:00:00Z", source="u1", kind="user_confirmation")

    after_closed = plan_replace(closed, new).shown
    after_open = plan_replace(open_, new).shown

    assert after_closed is not None
    assert after_open is not None
    assert (
        after_closed.valid_from,
        after_closed.valid_to,
        after_closed.ended_by,
        after_closed.ended_by_kind,
        after_closed.supersedes,
    ) == (ts("2026-06-05T00:00:00Z"), ts("2026-06-08T00:00:00Z"), expiry, "expiry", closed.fact_id)
    assert (after_open.valid_to, after_open.ended_by, after_open.ended_by_kind) == (
        None,
        None,
        None,
    )
    assert after_open.supersedes == open_.fact_id


def _assertion(value: str, start: str, **extra: Any) -> Version:
    """A logged assertion: its value and start, window open, nothing linked yet."""
    return replace(version(value, start, **extra), version_id=None)


def _summary(versions: list[Version]) -> list[tuple[object, ...]]:
    return [(v.value, v.valid_from, v.valid_to, v.ended_by_kind) for v in versions]


def test_rebuild_replays_assertions_and_expiries_in_arrival_order() -> None:
    a = _assertion("A", "2026-06-01T00:00:00Z")
    c = _assertion("C", "2026-06-10T00:00:00Z")
    b = _assertion("B", "2026-06-05T00:00:00Z")
    expiry = Expiry(at=ts("2026-06-07T00:00:00Z"), expiry_id=uuid4())
    rebuilt = rebuild([a, c, b, expiry])
    assert _summary(rebuilt) == [
        ("A", ts("2026-06-01T00:00:00Z"), ts("2026-06-05T00:00:00Z"), "fact"),
        ("B", ts("2026-06-05T00:00:00Z"), ts("2026-06-07T00:00:00Z"), "expiry"),
        ("C", ts("2026-06-10T00:00:00Z"), None, None),
    ]
    assert rebuilt[1].supersedes == a.fact_id
    assert rebuilt[0].ended_by == b.fact_id


def test_rebuild_without_a_fact_gives_its_window_back_to_what_it_closed() -> None:
    a = _assertion("A", "2026-06-01T00:00:00Z")
    b = _assertion("B", "2026-06-05T00:00:00Z")
    c = _assertion("C", "2026-06-08T00:00:00Z")
    assert _summary(rebuild([a, c])) == _summary(
        [
            replace(a, valid_to=ts("2026-06-08T00:00:00Z"), ended_by_kind="fact"),
            c,
        ]
    )
    # The successor that superseded the withdrawn fact now supersedes its predecessor.
    rebuilt = rebuild([a, b, c])
    assert rebuilt[2].supersedes == b.fact_id
    assert rebuild([a, c])[1].supersedes == a.fact_id


def test_rebuild_replays_a_logged_equal_start_as_the_replacement_it_was() -> None:
    incumbent = _assertion("A", "2026-06-05T00:00:00Z", source="m1")
    newcomer = _assertion("B", "2026-06-05T00:00:00Z", source="u1", kind="user_confirmation")
    [replaced] = rebuild([incumbent, newcomer])
    assert (replaced.fact_id, replaced.value, replaced.supersedes) == (
        newcomer.fact_id,
        "B",
        incumbent.fact_id,
    )
    # Without the newcomer the incumbent holds the start again.
    [restored] = rebuild([incumbent])
    assert restored.fact_id == incumbent.fact_id


def test_plan_rebuild_retires_and_inserts_only_the_difference() -> None:
    a = _assertion("A", "2026-06-01T00:00:00Z")
    b = _assertion("B", "2026-06-05T00:00:00Z")
    c = _assertion("C", "2026-06-20T00:00:00Z")
    stored = [replace(v, version_id=uuid4()) for v in rebuild([a, b, c])]
    target = rebuild([a, c])
    plan = plan_rebuild(stored, target)
    assert plan.status == "retracted"
    # A's window grows, B goes, and C now supersedes A: three versions change.
    assert set(plan.retire) == set(stored)
    assert [(v.value, v.valid_to, v.supersedes, v.version_id) for v in plan.insert] == [
        ("A", ts("2026-06-20T00:00:00Z"), None, None),
        ("C", None, a.fact_id, None),
    ]
    # An expiry's gap keeps an unrelated later fact untouched.
    d = _assertion("D", "2026-07-01T00:00:00Z")
    expiry = Expiry(at=ts("2026-06-25T00:00:00Z"), expiry_id=uuid4())
    stored = [replace(v, version_id=uuid4()) for v in rebuild([a, b, c, expiry, d])]
    plan = plan_rebuild(stored, rebuild([a, c, expiry, d]))
    assert stored[3] not in plan.retire
    assert stored[3].value == "D"
    assert plan_rebuild(stored, rebuild([a, b, c, expiry, d])) == Plan("retracted")
