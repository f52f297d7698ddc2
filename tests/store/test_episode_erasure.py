"""Erasing one episode (design 4, "Erase an episode") on the real database.

The world: episode ``good`` sources mira's passport deadline and home city and omar's seat;
episode ``bad`` (distinctive tokens in its text, session and metadata) supersedes mira's
deadline, gives omar the only home city he has, challenges omar's seat at the same start (an
open conflict) and is cited by the expiry of mira's home city; episode ``other`` gives mira a
seat, which ``good`` challenges (a conflict that has nothing to do with ``bad``).

After ``erase_episode("bad")`` the facts ``bad`` alone sourced are out of current knowledge and
what they had closed runs as before; their versions are deleted, so past known-at answers no
longer show them either; ``bad`` stays as a content-free stub for the expiry that cites it;
the conflict it challenged is gone; none of its text, session, metadata or
quoted evidence is left in any text-like column of the tenant; a tombstone records counts and
hashes only. Everything else, and every other tenant, is untouched.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import psycopg
import pytest
from psycopg.rows import dict_row

from store.contract.episodes import Episode
from store.contract.facts import ConflictRecord, Fact
from store.contract.results import ErasureResult, UpdateResult
from store.db.clock import ManualClock
from store.errors import NotFound
from store.service import MemoryStore
from tests.conftest import ts
from tests.dbsearch import find_needles, tenant_rows
from tests.helpers import PURGE_COUNTS, assert_value, declare

BAD_TOKENS = ("BAD-QUOKKA-7731", "marzipan-heliograph", "zephyr-sess-4412", "mandolin-fax-9902")
BAD_TEXT = (
    "Garbled transcript BAD-QUOKKA-7731 marzipan-heliograph: mira's deadline moved to"
    " 2026-06-30; omar now lives in Oslo; omar wants seat 14C; mira left Lisbon."
)
BAD_QUOTES = {
    "deadline": "BAD-QUOKKA-7731 marzipan-heliograph: mira's deadline moved to 2026-06-30",
    "home_city": "omar now lives in Oslo",
    "seat": "omar wants seat 14C",
}
GOOD_TEXT = (
    "Intake note GOOD-ALBATROSS-1101: mira's passport deadline is 2026-07-15,"
    " mira lives in Lisbon, omar has seat 12A, mira booked seat 2B."
)
OTHER_TEXT = "Booking OTHER-CORMORANT-3303: mira has seat 3F."
SURVIVORS = ("GOOD-ALBATROSS-1101", "OTHER-CORMORANT-3303", "mira booked seat 2B")

GOOD_START = ts("2026-06-01T09:00:00Z")
BAD_START = ts("2026-06-03T10:00:00Z")
OTHER_START = ts("2026-06-04T08:00:00Z")
EXPIRED_AT = ts("2026-06-05T00:00:00Z")
BUILD_START = ts("2026-06-10T00:00:00Z")
ERASED_AT = ts("2026-06-11T00:00:00Z")


@dataclass
class World:
    """What was written, as the store answered each write."""

    tenant: str
    deadline_good: Fact
    deadline_bad: Fact
    home_city_good: Fact
    home_city_bad: Fact
    seat_good: Fact
    seat_other: Fact
    expiry_id: UUID
    bad_conflict: UUID
    other_conflict: UUID
    bad_written_at: datetime
    episodes: dict[str, Episode]


class Ticker:
    """System time moving forward an hour per step from ``BUILD_START``."""

    def __init__(self, clock: ManualClock) -> None:
        self.clock = clock
        self.now = BUILD_START - timedelta(hours=1)

    def step(self) -> datetime:
        self.now += timedelta(hours=1)
        self.clock.set(self.now)
        return self.now


def _fact(result: UpdateResult) -> Fact:
    assert result.status == "written", result
    assert result.fact is not None
    return result.fact


def _conflict(result: UpdateResult) -> UUID:
    assert result.status == "conflict", result
    assert result.conflict_id is not None
    return result.conflict_id


def build_world(store: MemoryStore, clock: ManualClock, tenant: str) -> World:
    """Write the world described in the module docstring into ``tenant``."""
    tick = Ticker(clock)
    tick.step()
    declare(store, tenant, "passport_deadline", "date")
    declare(store, tenant, "home_city", "string")
    declare(store, tenant, "seat", "string")
    episodes: dict[str, dict[str, Any]] = {
        "good": {"occurred_at": "2026-06-01T09:00:00Z", "text": GOOD_TEXT},
        "bad": {
            "occurred_at": "2026-06-03T10:00:00Z",
            "text": BAD_TEXT,
            "session_id": "zephyr-sess-4412",
            "metadata": {"channel": "mandolin-fax-9902"},
            "subjects": ["mira"],
        },
        "other": {"occurred_at": "2026-06-04T08:00:00Z", "text": OTHER_TEXT},
    }
    for episode_id, body in episodes.items():
        store.episodes.record(tenant, {"id": episode_id, **body})

    tick.step()
    deadline_good = _fact(
        assert_value(
            store, tenant, "good", "2026-07-15", evidence="mira's passport deadline is 2026-07-15"
        )
    )
    tick.step()
    home_city_good = _fact(
        assert_value(
            store,
            tenant,
            "good",
            "Lisbon",
            attribute="home_city",
            evidence="mira lives in Lisbon",
        )
    )
    tick.step()
    seat_good = _fact(
        assert_value(
            store,
            tenant,
            "good",
            "12A",
            subject="omar",
            attribute="seat",
            evidence="omar has seat 12A",
        )
    )
    bad_written_at = tick.step()
    deadline_bad = _fact(
        assert_value(store, tenant, "bad", "2026-06-30", evidence=BAD_QUOTES["deadline"])
    )
    assert deadline_bad.supersedes == deadline_good.fact_id
    tick.step()
    home_city_bad = _fact(
        assert_value(
            store,
            tenant,
            "bad",
            "Oslo",
            subject="omar",
            attribute="home_city",
            evidence=BAD_QUOTES["home_city"],
        )
    )
    tick.step()
    bad_conflict = _conflict(
        assert_value(
            store,
            tenant,
            "bad",
            "14C",
            "2026-06-01T09:00:00Z",
            subject="omar",
            attribute="seat",
            evidence=BAD_QUOTES["seat"],
        )
    )
    tick.step()
    expired = store.facts.expire(
        tenant, "mira", "home_city", at=EXPIRED_AT, source_episode_id="bad"
    )
    assert expired.status == "expired"
    assert expired.expiry_id is not None
    tick.step()
    seat_other = _fact(
        assert_value(store, tenant, "other", "3F", attribute="seat", evidence="mira has seat 3F")
    )
    tick.step()
    other_conflict = _conflict(
        assert_value(
            store,
            tenant,
            "good",
            "2B",
            "2026-06-04T08:00:00Z",
            attribute="seat",
            evidence="mira booked seat 2B",
        )
    )
    return World(
        tenant=tenant,
        deadline_good=deadline_good,
        deadline_bad=deadline_bad,
        home_city_good=home_city_good,
        home_city_bad=home_city_bad,
        seat_good=seat_good,
        seat_other=seat_other,
        expiry_id=expired.expiry_id,
        bad_conflict=bad_conflict,
        other_conflict=other_conflict,
        bad_written_at=bad_written_at,
        episodes={episode_id: store.episodes.get(tenant, episode_id) for episode_id in episodes},
    )


def erase(
    store: MemoryStore, clock: ManualClock, tenant: str, episode_id: str = "bad"
) -> ErasureResult:
    """Erase an episode at ``ERASED_AT``."""
    clock.set(ERASED_AT)
    return store.erasure.erase_episode(tenant, episode_id)


def tombstones(conninfo: str, tenant: str) -> list[dict[str, Any]]:
    with psycopg.connect(conninfo) as conn, conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT * FROM tombstones WHERE tenant_id = %(tenant)s ORDER BY erased_at",
            {"tenant": tenant},
        )
        return cur.fetchall()


def expiries(conninfo: str, tenant: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(conninfo) as conn:
        return conn.execute(
            "SELECT expiry_id, subject, attribute, at, source_episode_id FROM expiries"
            " WHERE tenant_id = %(tenant)s",
            {"tenant": tenant},
        ).fetchall()


def sourced_by(conninfo: str, tenant: str, episode_id: str) -> list[tuple[Any, ...]]:
    """Every version citing ``episode_id``: subject, attribute, fact and when it was retired."""
    with psycopg.connect(conninfo) as conn:
        return conn.execute(
            "SELECT subject, attribute, fact_id, retired_at FROM fact_versions"
            " WHERE tenant_id = %(tenant)s AND source_episode_id = %(episode)s"
            " ORDER BY subject, attribute, recorded_at",
            {"tenant": tenant, "episode": episode_id},
        ).fetchall()


def conflicts(store: MemoryStore, tenant: str) -> list[ConflictRecord]:
    page = store.conflicts.list(tenant, status=None)
    assert page.next_cursor is None
    return page.conflicts


Row = tuple[object, datetime, datetime | None, str, UUID | None, datetime, datetime | None]


def history_rows(store: MemoryStore, tenant: str, subject: str, attribute: str) -> list[Row]:
    """Each version: value, valid window, source, ended_by and system window."""
    return [
        (
            fact.value,
            fact.valid_from,
            fact.valid_to,
            fact.source_episode_id,
            fact.ended_by,
            fact.recorded_at,
            fact.retired_at,
        )
        for fact in store.facts.history(tenant, subject, attribute)
    ]


def _without(fact: Fact, *fields: str) -> dict[str, Any]:
    return fact.model_dump(exclude=set(fields))


def test_erasing_an_episode_withdraws_its_facts_and_every_trace_of_its_content(
    store: MemoryStore, clock: ManualClock, tenant: str, conninfo: str
) -> None:
    world = build_world(store, clock, tenant)
    needles = (*BAD_TOKENS, *BAD_QUOTES.values())

    # The search works: before the erasure it finds every token and quote where it is stored.
    quoted = {"episodes.text", "fact_versions.evidence"}
    assert find_needles(conninfo, tenant, (*needles, *SURVIVORS)) == {
        "BAD-QUOKKA-7731": quoted,
        "marzipan-heliograph": quoted,
        "zephyr-sess-4412": {"episodes.session_id"},
        "mandolin-fax-9902": {"episodes.metadata"},
        BAD_QUOTES["deadline"]: quoted,
        BAD_QUOTES["home_city"]: quoted,
        BAD_QUOTES["seat"]: {"episodes.text", "conflicts.evidence"},
        "GOOD-ALBATROSS-1101": {"episodes.text"},
        "OTHER-CORMORANT-3303": {"episodes.text"},
        "mira booked seat 2B": {"episodes.text", "conflicts.evidence"},
    }
    conflicts_before = conflicts(store, tenant)
    assert [record.conflict_id for record in conflicts_before] == [
        world.bad_conflict,
        world.other_conflict,
    ]
    seat_other_before = store.facts.current(tenant, "mira", "seat")
    before_erasure = ERASED_AT - timedelta(minutes=1)
    believed_before = store.facts.at(
        tenant, "mira", "passport_deadline", valid_at=BAD_START, known_at=before_erasure
    )
    assert believed_before.fact_id == world.deadline_bad.fact_id

    result = erase(store, clock, tenant)
    assert result == ErasureResult(
        tombstone_id=result.tombstone_id,
        facts_retracted=2,
        episodes_deleted=0,
        episodes_stubbed=1,
        fact_versions_deleted=2,
        conflicts_deleted=1,
        expiries_deleted=0,
    )
    clock.set(ERASED_AT + timedelta(hours=1))

    # mira's deadline: good's value is current again, its window open as before bad.
    deadline = store.facts.current(tenant, "mira", "passport_deadline")
    assert deadline == world.deadline_good.model_copy(
        update={"version_id": deadline.version_id, "recorded_at": ERASED_AT}
    )
    assert history_rows(store, tenant, "mira", "passport_deadline") == [
        ("2026-07-15", GOOD_START, None, "good", None, BUILD_START + timedelta(hours=1),
         world.bad_written_at),
        ("2026-07-15", GOOD_START, BAD_START, "good", world.deadline_bad.fact_id,
         world.bad_written_at, ERASED_AT),
        ("2026-07-15", GOOD_START, None, "good", None, ERASED_AT, None),
    ]  # fmt: skip
    # Erasure changes past known-at answers too: what bad said was never believed now.
    with pytest.raises(NotFound):
        store.facts.at(
            tenant, "mira", "passport_deadline", valid_at=BAD_START, known_at=before_erasure
        )

    # omar's home city: bad was its only source, so nothing is known, then or now.
    with pytest.raises(NotFound):
        store.facts.current(tenant, "omar", "home_city")
    assert store.facts.history(tenant, "omar", "home_city") == []

    # omar's seat: the challenge is gone, good's fact undisputed; the unrelated conflict stays.
    assert store.facts.current(tenant, "omar", "seat") == world.seat_good
    assert conflicts(store, tenant) == [conflicts_before[1]]
    assert store.facts.current(tenant, "mira", "seat") == seat_other_before

    # The expiry bad sourced stays (it is not a fact), citing the stub.
    assert expiries(conninfo, tenant) == [(world.expiry_id, "mira", "home_city", EXPIRED_AT, "bad")]
    with pytest.raises(NotFound):
        store.facts.current(tenant, "mira", "home_city")
    home_city = store.facts.at(tenant, "mira", "home_city", valid_at=GOOD_START)
    assert (
        home_city.fact_id,
        home_city.valid_to,
        home_city.ended_by,
        home_city.ended_by_kind,
    ) == (world.home_city_good.fact_id, EXPIRED_AT, world.expiry_id, "expiry")

    # No version bad sourced is left.
    assert sourced_by(conninfo, tenant, "bad") == []

    # The episode is a stub: id, kind, times and content hash, nothing of its content.
    bad_before = world.episodes["bad"]
    assert bad_before.text == BAD_TEXT
    assert store.episodes.get(tenant, "bad") == bad_before.model_copy(
        update={
            "text": None,
            "subjects": [],
            "session_id": None,
            "metadata": {},
            "erased_at": ERASED_AT,
        }
    )
    assert store.episodes.get(tenant, "good") == world.episodes["good"]
    assert store.episodes.get(tenant, "other") == world.episodes["other"]

    # No column of any table holds a token or a quote of bad; the other episodes' text stays.
    found = find_needles(conninfo, tenant, (*needles, *SURVIVORS))
    assert {needle: found[needle] for needle in needles} == {needle: set() for needle in needles}
    assert {needle: bool(found[needle]) for needle in SURVIVORS} == dict.fromkeys(SURVIVORS, True)

    # The tombstone: counts, the hash of the id and of the content, the time; no content.
    assert tombstones(conninfo, tenant) == [
        {
            "tenant_id": tenant,
            "tombstone_id": result.tombstone_id,
            "target": "episode",
            "target_hash": "sha256:" + hashlib.sha256(b"bad").hexdigest(),
            "erased_at": ERASED_AT,
            "episodes_deleted": 0,
            "episodes_stubbed": 1,
            "fact_versions_deleted": 2,
            "conflicts_deleted": 1,
            "expiries_deleted": 0,
            "facts_retracted": 2,
            "checkpoints_deleted": 0,
            **dict.fromkeys(PURGE_COUNTS, 0),  # only a retention purge counts these
            "episode_hashes": [bad_before.content_hash],
        }
    ]


def test_erasing_twice_changes_nothing_more_and_a_missing_episode_is_not_found(
    store: MemoryStore, clock: ManualClock, tenant: str, conninfo: str
) -> None:
    build_world(store, clock, tenant)
    with pytest.raises(NotFound) as missing:
        store.erasure.erase_episode(tenant, "never-recorded")
    assert (missing.value.code, missing.value.field) == ("not_found", "episode_id")
    assert tombstones(conninfo, tenant) == []

    first = erase(store, clock, tenant)
    assert first.facts_retracted == 2
    rows_after_first = tenant_rows(conninfo, tenant)

    clock.set(ERASED_AT + timedelta(hours=1))
    second = store.erasure.erase_episode(tenant, "bad")
    assert second == ErasureResult(
        tombstone_id=second.tombstone_id,
        facts_retracted=0,
        episodes_deleted=0,
        episodes_stubbed=0,
        fact_versions_deleted=0,
        conflicts_deleted=0,
        expiries_deleted=0,
    )
    assert second.tombstone_id != first.tombstone_id
    rows_after_second = tenant_rows(conninfo, tenant)
    assert {table: rows for table, rows in rows_after_second.items() if table != "tombstones"} == {
        table: rows for table, rows in rows_after_first.items() if table != "tombstones"
    }
    bad_hash = "sha256:" + hashlib.sha256(b"bad").hexdigest()
    content_hash = store.episodes.get(tenant, "bad").content_hash
    assert [
        (row["target"], row["target_hash"], row["facts_retracted"], row["episode_hashes"])
        for row in tombstones(conninfo, tenant)
    ] == [("episode", bad_hash, 2, [content_hash]), ("episode", bad_hash, 0, [])]


def test_erasing_in_one_tenant_leaves_the_same_episode_id_in_another_untouched(
    store: MemoryStore, clock: ManualClock, tenant: str, conninfo: str
) -> None:
    twin = f"{tenant}-twin"
    store.admin.create_tenant(twin)
    build_world(store, clock, tenant)
    twin_world = build_world(store, clock, twin)
    twin_rows = tenant_rows(conninfo, twin)
    needles = (*BAD_TOKENS, *BAD_QUOTES.values())
    twin_found = find_needles(conninfo, twin, needles)
    assert all(twin_found[needle] for needle in needles)

    result = erase(store, clock, tenant)
    assert result.facts_retracted == 2

    assert tenant_rows(conninfo, twin) == twin_rows
    assert find_needles(conninfo, twin, needles) == twin_found
    assert tombstones(conninfo, twin) == []
    assert store.episodes.get(twin, "bad") == twin_world.episodes["bad"]
    assert store.facts.current(twin, "mira", "passport_deadline") == twin_world.deadline_bad
    assert [record.conflict_id for record in conflicts(store, twin)] == [
        twin_world.bad_conflict,
        twin_world.other_conflict,
    ]


def test_an_episode_nothing_cites_is_deleted_outright(
    store: MemoryStore, clock: ManualClock, tenant: str, conninfo: str
) -> None:
    clock.set(BUILD_START)
    store.episodes.record(
        tenant,
        {
            "id": "lonely",
            "occurred_at": "2026-06-02T00:00:00Z",
            "text": "Nothing was extracted from this LONELY-GIBBON-5150 note.",
        },
    )
    content_hash = store.episodes.get(tenant, "lonely").content_hash
    assert find_needles(conninfo, tenant, ["LONELY-GIBBON-5150"]) == {
        "LONELY-GIBBON-5150": {"episodes.text"}
    }

    result = erase(store, clock, tenant, "lonely")
    assert result == ErasureResult(
        tombstone_id=result.tombstone_id,
        facts_retracted=0,
        episodes_deleted=1,
        episodes_stubbed=0,
        fact_versions_deleted=0,
        conflicts_deleted=0,
        expiries_deleted=0,
    )
    with pytest.raises(NotFound):
        store.episodes.get(tenant, "lonely")
    assert find_needles(conninfo, tenant, ["LONELY-GIBBON-5150"]) == {"LONELY-GIBBON-5150": set()}
    [tombstone] = tombstones(conninfo, tenant)
    assert (tombstone["target_hash"], tombstone["episode_hashes"]) == (
        "sha256:" + hashlib.sha256(b"lonely").hexdigest(),
        [content_hash],
    )
