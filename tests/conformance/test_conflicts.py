"""Equal-start conflicts, the same on every surface: listed oldest first by page, resolved for
the incumbent or the challenger once, walled by tenant, a bad cursor or choice refused."""

from __future__ import annotations

from uuid import UUID

import pytest

from store.contract.facts import Fact
from store.contract.results import UpdateResult
from store.db.paging import encode_cursor
from tests.conformance.surfaces import Refused, Surface
from tests.conftest import ts
from tests.http_helpers import candidate

T = "2026-06-01T09:00:00Z"  # the start every test fights over
SUBJECT = "account:42"
EPISODES = {"m1": "gold", "m2": "silver"}
"""Episode id -> the value it asserts; both are messages occurring at T."""


def _sentence(value: str) -> str:
    return f"Account 42 is on {value}."


def _tier(surface: Surface, policy: str) -> None:
    """``tier`` declared under ``policy``, and the episodes recorded, at 2026-06-02."""
    surface.clock.set(ts("2026-06-02T00:00:00Z"))
    surface.declare_attribute("tier", {"value_type": "string", "on_equal_start": policy})
    for episode_id, value in EPISODES.items():
        surface.record({"id": episode_id, "occurred_at": T, "text": _sentence(value)})


def _say(surface: Surface, episode_id: str, subject: str = SUBJECT) -> UpdateResult:
    """The episode's value for ``subject``.tier from T, quoting the episode."""
    value = EPISODES[episode_id]
    [result] = surface.apply(
        episode_id,
        [candidate(subject, "tier", value, valid_from=T, evidence=_sentence(value))],
    )
    return result


def _written(result: UpdateResult) -> Fact:
    assert result.status == "written", result
    assert result.fact is not None
    return result.fact


def _conflict_id(result: UpdateResult) -> str:
    assert result.status == "conflict", result
    assert result.conflict_id is not None
    return str(result.conflict_id)


def test_a_rejected_challenger_is_listed_open_and_reads_stay_with_the_incumbent(
    surface: Surface,
) -> None:
    _tier(surface, "reject")
    incumbent = _written(_say(surface, "m1"))
    conflict_id = _conflict_id(_say(surface, "m2"))

    [listed] = surface.conflicts().conflicts
    assert listed.model_dump(mode="json") == {
        "conflict_id": conflict_id,
        "subject": SUBJECT,
        "attribute": "tier",
        "valid_from": T,
        "policy": "reject",
        "disputed": False,
        "incumbent_fact_id": str(incumbent.fact_id),
        "challenger": {
            "conflict_id": conflict_id,
            "value": "silver",
            "source_episode_id": "m2",
            "source_kind": "message",
            "evidence": _sentence("silver"),
            "evidence_verified": True,
        },
        "status": "open",
        "created_at": "2026-06-02T00:00:00Z",
        "resolved_at": None,
        "resolution": None,
        "resolved_fact_id": None,
    }
    assert surface.fact(SUBJECT, "tier") == incumbent
    assert surface.conflicts(status="resolved").conflicts == []


def test_resolving_for_the_incumbent_keeps_its_value_and_ends_the_conflict(
    surface: Surface,
) -> None:
    _tier(surface, "source_precedence")
    incumbent = _written(_say(surface, "m1"))
    conflict_id = _conflict_id(_say(surface, "m2"))
    surface.clock.set(ts("2026-06-02T02:00:00Z"))

    result = surface.resolve_conflict(conflict_id, "incumbent")

    assert (
        result.conflict.status,
        result.conflict.resolution,
        result.conflict.resolved_at,
        result.conflict.resolved_fact_id,
    ) == ("resolved", "incumbent", ts("2026-06-02T02:00:00Z"), None)
    assert result.fact == incumbent
    assert surface.fact(SUBJECT, "tier") == incumbent
    assert surface.history(SUBJECT, "tier") == [incumbent]
    assert surface.conflicts().conflicts == []
    assert surface.conflicts(status="resolved").conflicts == [result.conflict]


def test_resolving_for_the_challenger_writes_it_in_the_incumbents_place_once(
    surface: Surface,
) -> None:
    _tier(surface, "source_precedence")
    incumbent = _written(_say(surface, "m1"))
    conflict_id = _conflict_id(_say(surface, "m2"))
    now = ts("2026-06-02T03:00:00Z")
    surface.clock.set(now)

    result = surface.resolve_conflict(conflict_id, "challenger")

    chosen = result.fact
    assert chosen is not None
    assert (
        chosen.value,
        chosen.source_episode_id,
        chosen.evidence,
        chosen.supersedes,
        chosen.valid_from,
        chosen.valid_to,
        chosen.recorded_at,
        chosen.disputed,
    ) == ("silver", "m2", _sentence("silver"), incumbent.fact_id, ts(T), None, now, False)
    assert (result.conflict.resolution, result.conflict.resolved_fact_id) == (
        "challenger",
        chosen.fact_id,
    )
    assert surface.fact(SUBJECT, "tier") == chosen
    assert surface.history(SUBJECT, "tier") == [
        incumbent.model_copy(update={"retired_at": now, "status": "retired"}),
        chosen,
    ]
    # The second attempt meets a settled conflict.
    with pytest.raises(Refused) as twice:
        surface.resolve_conflict(conflict_id, "incumbent")
    assert twice.value.fault == ("conflict", "conflict_id")
    assert surface.fact(SUBJECT, "tier") == chosen
    assert [c.conflict_id for c in surface.conflicts(status="all").conflicts] == [UUID(conflict_id)]


def test_another_tenants_conflict_cannot_be_seen_or_resolved(surface: Surface) -> None:
    _tier(surface, "source_precedence")
    _say(surface, "m1")
    conflict_id = _conflict_id(_say(surface, "m2"))
    other = surface.other()

    faults = []
    for who, target, choose in (
        (other, conflict_id, "incumbent"),
        (other, conflict_id, "challenger"),
        (surface, str(UUID(int=12345)), "incumbent"),
        (surface, conflict_id, "both"),
    ):
        with pytest.raises(Refused) as refused:
            who.resolve_conflict(target, choose)
        faults.append(refused.value.fault)

    assert faults == [
        ("not_found", "conflict_id"),
        ("not_found", "conflict_id"),
        ("not_found", "conflict_id"),
        ("invalid", "choose"),
    ]
    assert other.conflicts().conflicts == []
    # Nothing of the above touched the owner's open dispute.
    [still_open] = surface.conflicts().conflicts
    assert (str(still_open.conflict_id), still_open.status) == (conflict_id, "open")
    assert surface.fact(SUBJECT, "tier").disputed is True


def test_conflicts_page_oldest_first_with_a_cursor(surface: Surface) -> None:
    _tier(surface, "reject")
    made = []
    for number, subject in enumerate(("account:1", "account:2", "account:3")):
        surface.clock.set(ts(f"2026-06-02T0{number}:00:00Z"))
        _say(surface, "m1", subject)
        made.append(UUID(_conflict_id(_say(surface, "m2", subject))))

    first = surface.conflicts(limit=2)
    assert [c.conflict_id for c in first.conflicts] == made[:2]
    rest = surface.conflicts(limit=2, cursor=first.next_cursor)
    assert ([c.conflict_id for c in rest.conflicts], rest.next_cursor) == ([made[2]], None)
    one_by_one = [surface.conflicts(limit=1)]
    while (cursor := one_by_one[-1].next_cursor) is not None:
        one_by_one.append(surface.conflicts(limit=1, cursor=cursor))
    assert [page.conflicts[0].conflict_id for page in one_by_one] == made
    assert [c.conflict_id for c in surface.conflicts(subject="account:2").conflicts] == [made[1]]


@pytest.mark.parametrize(
    "cursor",
    [
        "not a cursor!",
        "@@@",
        encode_cursor({"a": 1}),  # type: ignore[arg-type]
        encode_cursor([]),
        encode_cursor(["x"]),
        encode_cursor(["x", "y"]),
        encode_cursor([1, 2, 3]),
    ],
)
def test_a_cursor_the_server_did_not_issue_is_refused(surface: Surface, cursor: str) -> None:
    with pytest.raises(Refused) as refused:
        surface.conflicts(cursor=cursor)
    assert (refused.value.fault, refused.value.detail) == (
        ("invalid", "cursor"),
        "not a cursor this server issued",
    )
