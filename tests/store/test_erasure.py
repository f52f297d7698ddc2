"""Erasure on the real database: a subject's data leaves every column of every table.

The world built here: subject ``mira`` with three attributes (a superseded version, an expiry,
an equal-start conflict) and episodes with unique reference tokens; subject ``omar`` with a
fact citing an episode that lists mira and quoting its text. After ``erase_subject`` nothing
of mira's can be read back through the API or found in any text-like column of the tenant's
rows, and what is left about the erasure is counts and hashes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from uuid import uuid4

import psycopg
import pytest
from psycopg.rows import dict_row

from store.contract.episodes import Episode
from store.contract.facts import Fact
from store.contract.results import ErasureResult, UpdateResult
from store.db.clock import ManualClock
from store.errors import NotFound
from store.service import MemoryStore
from tests.conftest import ts
from tests.dbsearch import find_needles, tenant_rows
from tests.helpers import PURGE_COUNTS, assert_value, declare, record

SHARED = "ep-shared"
MIRA_ONLY = ("ep-m1", "ep-m2", "ep-m3", "ep-m4", "ep-m5")
MIRA_ATTRIBUTES = ("favourite_colour", "home_city", "passport_deadline")
ATTRIBUTE_TYPES = {
    "passport_deadline": "date",
    "favourite_colour": "string",
    "home_city": "string",
    "seat": "string",
    "meal": "string",
}
# Every id, value and text below is chosen so that "mira" occurs only in mira's own data.
EPISODES: dict[str, dict[str, Any]] = {
    "ep-m1": {
        "occurred_at": "2026-05-01T09:00:00Z",
        "text": "mira says her passport deadline is 2037-11-23 and her favourite colour"
        " is vermilion-okapi (ref PELICAN-5521).",
        "subjects": ["mira"],
    },
    "ep-m2": {
        "occurred_at": "2026-05-10T09:00:00Z",
        "text": "Correction from mira: the passport deadline moved to 2038-03-14"
        " (ref GANNET-6632).",
    },
    "ep-m3": {
        "occurred_at": "2026-05-10T09:00:00Z",
        "kind": "tool_result",
        "text": "Registry lookup for mira: passport deadline 2039-09-09 (ref BITTERN-7743).",
    },
    "ep-m4": {
        "occurred_at": "2026-05-20T00:00:00Z",
        "text": "mira no longer has a favourite colour (ref CORMORANT-8854).",
    },
    SHARED: {
        "occurred_at": "2026-05-15T12:00:00Z",
        "text": "Trip memo: mira moves to Quillhaven; omar takes seat window-22F (ref HERON-9965).",
        "subjects": ["mira"],
        "session_id": "sess-wren-3310",
        "metadata": {"channel": "email-ptarmigan-4420"},
    },
    "ep-m5": {
        "occurred_at": "2026-05-18T08:00:00Z",
        "text": "mira asked about visa paperwork (ref PUFFIN-1076).",
        "subjects": ["mira"],
        "session_id": "sess-lark-1187",
        "metadata": {"note": "larkspur-2207"},
    },
    "ep-o1": {
        "occurred_at": "2026-05-16T10:00:00Z",
        "text": "omar prefers vegetarian-thali meals (ref OSPREY-2187).",
        "subjects": ["omar"],
    },
}
ERASED_EPISODES = (*MIRA_ONLY, SHARED)
ERASED_AT = "2026-06-02T00:00:00Z"
KNOWN_BEFORE_ERASURE = "2026-06-01T12:00:00Z"

# What must be gone: the subject id, mira's values, her episodes' texts, unique reference
# tokens and fragments, and the session ids and metadata of her episodes.
FULL_TEXTS = {EPISODES[episode_id]["text"] for episode_id in ERASED_EPISODES}
TOKENS = ("PELICAN-5521", "GANNET-6632", "BITTERN-7743", "CORMORANT-8854", "PUFFIN-1076")
MIRA_VALUES = ("2037-11-23", "2038-03-14", "2039-09-09", "vermilion-okapi", "Quillhaven")
EPISODE_EXTRAS = ("sess-wren-3310", "email-ptarmigan-4420", "sess-lark-1187", "larkspur-2207")
NEEDLES = (
    "mira",
    *MIRA_VALUES,
    *TOKENS,
    "HERON-9965",
    "moves to Quillhaven",
    *EPISODE_EXTRAS,
    *sorted(FULL_TEXTS),
)

# Where each needle sits in the tenant's rows before the erasure (the scan's positive control).
QUOTED_VALUE = {"episodes.text", "fact_versions.value", "fact_versions.evidence"}
EXPECTED_BEFORE: dict[str, set[str]] = {
    "mira": {
        "episodes.text",
        "episode_subjects.subject",
        "fact_versions.subject",
        "fact_versions.subject_folded",
        "fact_versions.evidence",
        "conflicts.subject",
        "expiries.subject",
        "subject_names.subject",  # its id, kept as one of its names
        "subject_names.name",
        "subject_names.folded",
        "subject_names.key",
    },
    "2037-11-23": QUOTED_VALUE,
    "2038-03-14": QUOTED_VALUE,
    "2039-09-09": {"episodes.text", "conflicts.value", "conflicts.evidence"},
    "vermilion-okapi": QUOTED_VALUE,
    "Quillhaven": QUOTED_VALUE,
    **{token: {"episodes.text"} for token in TOKENS},
    "HERON-9965": {"episodes.text", "fact_versions.evidence"},  # omar's quote of the memo
    "moves to Quillhaven": {"episodes.text", "fact_versions.evidence"},
    "sess-wren-3310": {"episodes.session_id"},
    "email-ptarmigan-4420": {"episodes.metadata"},
    "sess-lark-1187": {"episodes.session_id"},
    "larkspur-2207": {"episodes.metadata"},
    **{text: {"episodes.text"} for text in FULL_TEXTS},
}


def sha256(text: str) -> str:
    """The ``sha256:<hex>`` form the store uses for hashes, computed independently."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class World:
    """A tenant holding mira's and omar's data, and what was read back before any erasure."""

    tenant: str
    episodes: dict[str, Episode]
    omar_seat: Fact
    omar_meal: Fact
    mira_profile: list[Fact]
    mira_histories: dict[str, list[Fact]]


def written(result: UpdateResult) -> Fact:
    """The fact of a candidate that must have been written with verified evidence."""
    assert (result.status, result.reason) == ("written", None), result
    assert result.fact is not None
    assert result.fact.evidence_verified is True
    return result.fact


def build_world(store: MemoryStore, clock: ManualClock, tenant: str) -> World:
    """Fill ``tenant``; system time runs from 2026-06-01T00:00Z to 09:00Z."""
    clock.set(ts("2026-06-01T00:00:00Z"))
    for attribute, value_type in ATTRIBUTE_TYPES.items():
        declare(store, tenant, attribute, value_type)
    for episode_id, spec in EPISODES.items():
        record(store, tenant, episode_id, **spec)

    clock.set(ts("2026-06-01T01:00:00Z"))
    written(
        assert_value(
            store, tenant, "ep-m1", "2037-11-23", evidence="passport deadline is 2037-11-23"
        )
    )
    written(
        assert_value(
            store,
            tenant,
            "ep-m1",
            "vermilion-okapi",
            attribute="favourite_colour",
            evidence="favourite colour is vermilion-okapi",
        )
    )
    clock.set(ts("2026-06-01T02:00:00Z"))
    second = written(
        assert_value(store, tenant, "ep-m2", "2038-03-14", evidence="moved to 2038-03-14")
    )
    assert second.valid_from == ts("2026-05-10T09:00:00Z")
    assert second.supersedes is not None  # the first deadline is now a superseded version
    clock.set(ts("2026-06-01T03:00:00Z"))
    conflict = assert_value(
        store, tenant, "ep-m3", "2039-09-09", evidence="passport deadline 2039-09-09"
    )
    assert conflict.status == "conflict"
    assert conflict.conflict_id is not None
    clock.set(ts("2026-06-01T04:00:00Z"))
    expired = store.facts.expire(
        tenant, "mira", "favourite_colour", at="2026-05-20T00:00:00Z", source_episode_id="ep-m4"
    )
    assert expired.status == "expired"
    clock.set(ts("2026-06-01T05:00:00Z"))
    written(
        assert_value(
            store,
            tenant,
            SHARED,
            "Quillhaven",
            attribute="home_city",
            evidence="mira moves to Quillhaven",
        )
    )
    clock.set(ts("2026-06-01T06:00:00Z"))
    seat = written(
        assert_value(
            store,
            tenant,
            SHARED,
            "window-22F",
            subject="omar",
            attribute="seat",
            evidence="omar takes seat window-22F (ref HERON-9965)",
        )
    )
    meal = written(
        assert_value(
            store,
            tenant,
            "ep-o1",
            "vegetarian-thali",
            subject="omar",
            attribute="meal",
            evidence="omar prefers vegetarian-thali",
        )
    )
    assert (seat.source_episode_id, meal.source_episode_id) == (SHARED, "ep-o1")
    clock.set(ts("2026-06-01T09:00:00Z"))

    episodes = {episode_id: store.episodes.get(tenant, episode_id) for episode_id in EPISODES}
    assert episodes[SHARED].subjects == ["mira", "omar"]
    assert [episodes[episode_id].subjects for episode_id in MIRA_ONLY] == [["mira"]] * 5
    histories = {
        attribute: store.facts.history(tenant, "mira", attribute) for attribute in MIRA_ATTRIBUTES
    }
    assert [len(histories[attribute]) for attribute in MIRA_ATTRIBUTES] == [2, 1, 3]
    profile = store.subjects.profile(tenant, "mira").facts
    assert [(fact.attribute, fact.value) for fact in profile] == [
        ("home_city", "Quillhaven"),
        ("passport_deadline", "2038-03-14"),
    ]
    return World(
        tenant=tenant,
        episodes=episodes,
        omar_seat=store.facts.current(tenant, "omar", "seat"),
        omar_meal=store.facts.current(tenant, "omar", "meal"),
        mira_profile=profile,
        mira_histories=histories,
    )


def new_tenant(store: MemoryStore, name: str) -> str:
    """A tenant whose id cannot contain "mira" (hex digits only after the name)."""
    tenant = f"{name}-{uuid4().hex[:8]}"
    store.admin.create_tenant(tenant)
    return tenant


def tombstones(conninfo: str, tenant: str) -> list[dict[str, Any]]:
    """The tenant's tombstone rows, every column, oldest first."""
    with psycopg.connect(conninfo, row_factory=dict_row) as conn:
        return conn.execute(
            "SELECT * FROM tombstones WHERE tenant_id = %(tenant)s ORDER BY erased_at",
            {"tenant": tenant},
        ).fetchall()


def expected_tombstone(
    tenant: str,
    result: ErasureResult,
    *,
    subject: str,
    erased_at: str,
    episode_texts: Iterable[str],
    counts: Mapping[str, int],
) -> dict[str, Any]:
    """A tombstone row as it must be: the time, counts and hashes, nothing else."""
    return {
        "tenant_id": tenant,
        "tombstone_id": result.tombstone_id,
        "target": "subject",
        "target_hash": sha256(subject),
        "erased_at": ts(erased_at),
        "episode_hashes": sorted(sha256(text) for text in episode_texts),
        **counts,
        **dict.fromkeys(PURGE_COUNTS, 0),  # only a retention purge counts these
    }


MIRA_COUNTS = {
    "episodes_deleted": 5,  # m1-m5: linked to mira, cited by nobody else
    "episodes_stubbed": 1,  # the memo omar's seat cites
    "fact_versions_deleted": 6,  # deadline 3 (one superseded), colour 2 (expired), city 1
    "conflicts_deleted": 1,
    "expiries_deleted": 1,
    "facts_retracted": 0,  # a subject's erasure deletes; only an episode's retracts
    "checkpoints_deleted": 0,  # only a thread's erasure deletes checkpoints
}


def mira_tombstone(tenant: str, result: ErasureResult) -> dict[str, Any]:
    """The tombstone mira's erasure must leave: all six episodes' hashes, MIRA_COUNTS."""
    return expected_tombstone(
        tenant,
        result,
        subject="mira",
        erased_at=ERASED_AT,
        episode_texts=[EPISODES[episode_id]["text"] for episode_id in ERASED_EPISODES],
        counts=MIRA_COUNTS,
    )


def erase_mira(store: MemoryStore, clock: ManualClock, tenant: str) -> ErasureResult:
    """Erase mira at ERASED_AT and check the receipt's counts."""
    clock.set(ts(ERASED_AT))
    result = store.erasure.erase_subject(tenant, "mira")
    assert result == ErasureResult(tombstone_id=result.tombstone_id, **MIRA_COUNTS)
    return result


# -- the tests ------------------------------------------------------------------------------


def test_erasing_mira_removes_her_from_every_read(store: MemoryStore, clock: ManualClock) -> None:
    world = build_world(store, clock, new_tenant(store, "erase-reads"))
    tenant = world.tenant
    attributes_before = store.admin.list_attributes(tenant)

    erase_mira(store, clock, tenant)

    for attribute in MIRA_ATTRIBUTES:
        with pytest.raises(NotFound) as now_error:
            store.facts.current(tenant, "mira", attribute)
        assert now_error.value.detail == f"mira.{attribute} is not known at that time"
        # Erasure rewrites the past too: what was believed before it is gone as well.
        with pytest.raises(NotFound):
            store.facts.at(
                tenant,
                "mira",
                attribute,
                valid_at="2026-05-16T00:00:00Z",
                known_at=KNOWN_BEFORE_ERASURE,
            )
        assert store.facts.history(tenant, "mira", attribute) == []
    assert store.subjects.profile(tenant, "mira").facts == []
    assert (
        store.subjects.profile(
            tenant, "mira", valid_at="2026-05-16T00:00:00Z", known_at=KNOWN_BEFORE_ERASURE
        ).facts
        == []
    )
    for episode_id in MIRA_ONLY:
        with pytest.raises(NotFound) as episode_error:
            store.episodes.get(tenant, episode_id)
        assert episode_error.value.detail == f"episode {episode_id!r} does not exist"

    # The memo omar's fact cites survives as a stub: id, kind, times and hash only.
    stub = store.episodes.get(tenant, SHARED)
    assert stub == world.episodes[SHARED].model_copy(
        update={
            "text": None,
            "subjects": [],
            "session_id": None,
            "metadata": {},
            "erased_at": ts(ERASED_AT),
        }
    )
    assert stub.content_hash == sha256(EPISODES[SHARED]["text"])
    # Omar keeps his facts; the one citing the memo lost only its quote of the erased text.
    seat = store.facts.current(tenant, "omar", "seat")
    assert seat == world.omar_seat.model_copy(update={"evidence": None})
    assert seat.source_episode_id == stub.id
    assert store.facts.current(tenant, "omar", "meal") == world.omar_meal
    assert store.facts.history(tenant, "omar", "seat") == [seat]
    assert store.subjects.profile(tenant, "omar").facts == [world.omar_meal, seat]
    assert store.episodes.get(tenant, "ep-o1") == world.episodes["ep-o1"]
    assert store.admin.list_attributes(tenant) == attributes_before
    # The stub can be cited by nobody new.
    clock.set(ts("2026-06-02T01:00:00Z"))
    refused = assert_value(store, tenant, SHARED, "aisle-3C", subject="omar", attribute="seat")
    assert (refused.status, refused.field, refused.reason) == (
        "invalid",
        "episode",
        f"episode {SHARED!r} was erased",
    )
    assert store.facts.current(tenant, "omar", "seat") == seat


def test_no_column_of_any_table_keeps_anything_of_mira(
    store: MemoryStore, clock: ManualClock, conninfo: str
) -> None:
    tenant = build_world(store, clock, new_tenant(store, "erase-scan")).tenant
    # Positive control: the scan finds every needle exactly where it was written.
    assert find_needles(conninfo, tenant, NEEDLES) == EXPECTED_BEFORE

    result = erase_mira(store, clock, tenant)

    assert find_needles(conninfo, tenant, NEEDLES) == {needle: set() for needle in NEEDLES}
    # The tombstone holds the time, counts and hashes: no id, value or text of mira.
    [tombstone] = tombstones(conninfo, tenant)
    assert tombstone == mira_tombstone(tenant, result)


def test_erasing_a_subject_without_data_is_not_found_and_writes_no_tombstone(
    store: MemoryStore, clock: ManualClock, conninfo: str
) -> None:
    tenant = build_world(store, clock, new_tenant(store, "erase-nobody")).tenant
    before = tenant_rows(conninfo, tenant)
    assert before["tombstones"] == []

    clock.set(ts(ERASED_AT))
    with pytest.raises(NotFound) as raised:
        store.erasure.erase_subject(tenant, "nobody")

    assert raised.value.field == "subject"
    assert tenant_rows(conninfo, tenant) == before
    assert [fact.value for fact in store.subjects.profile(tenant, "mira").facts] == [
        "Quillhaven",
        "2038-03-14",
    ]


def test_erasing_mira_twice_finds_nothing_the_second_time(
    store: MemoryStore, clock: ManualClock, conninfo: str
) -> None:
    tenant = build_world(store, clock, new_tenant(store, "erase-twice")).tenant
    first = erase_mira(store, clock, tenant)
    after_first = tenant_rows(conninfo, tenant)

    clock.set(ts("2026-06-03T00:00:00Z"))
    with pytest.raises(NotFound) as raised:
        store.erasure.erase_subject(tenant, "mira")

    assert raised.value.field == "subject"
    assert tombstones(conninfo, tenant) == [mira_tombstone(tenant, first)]
    # The stub keeps its first erasure time; nothing moved.
    assert tenant_rows(conninfo, tenant) == after_first
    assert store.episodes.get(tenant, SHARED).erased_at == ts(ERASED_AT)


def test_erasing_mira_in_one_tenant_leaves_another_tenants_mira_untouched(
    store: MemoryStore, clock: ManualClock, conninfo: str
) -> None:
    erased = build_world(store, clock, new_tenant(store, "erase-a"))
    # The same keys, ids and system times in a second tenant: its writes are its own.
    kept = build_world(store, clock, new_tenant(store, "erase-b"))
    kept_rows = tenant_rows(conninfo, kept.tenant)

    erase_mira(store, clock, erased.tenant)

    assert tenant_rows(conninfo, kept.tenant) == kept_rows
    assert find_needles(conninfo, kept.tenant, NEEDLES) == EXPECTED_BEFORE
    assert find_needles(conninfo, erased.tenant, NEEDLES) == {needle: set() for needle in NEEDLES}
    assert store.subjects.profile(kept.tenant, "mira").facts == kept.mira_profile
    for attribute in MIRA_ATTRIBUTES:
        assert store.facts.history(kept.tenant, "mira", attribute) == kept.mira_histories[attribute]
        assert store.facts.history(erased.tenant, "mira", attribute) == []
    for episode_id in EPISODES:
        assert store.episodes.get(kept.tenant, episode_id) == kept.episodes[episode_id]
    assert store.facts.current(kept.tenant, "omar", "seat") == kept.omar_seat
    assert store.facts.current(erased.tenant, "omar", "seat") == erased.omar_seat.model_copy(
        update={"evidence": None}
    )
    assert tombstones(conninfo, kept.tenant) == []


def test_erasing_in_a_missing_tenant_names_the_tenant(store: MemoryStore) -> None:
    with pytest.raises(NotFound) as raised:
        store.erasure.erase_subject("no-such-tenant", "mira")
    assert (raised.value.detail, raised.value.field) == (
        "tenant 'no-such-tenant' does not exist",
        "tenant_id",
    )
