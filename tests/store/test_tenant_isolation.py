"""Tenant isolation on the real database: identical keys and episode ids, separate worlds.

Tenants A and B both hold subject ``mira`` with the same attribute names and episode ids
``e1`` and ``e2``, recorded at the same instants, but with different values and texts; B also
has an episode ``e3`` and an attribute ``loyalty_tier`` that A lacks. Every read of one tenant
returns only its own data, writes to one never change the other's reads, and a tenant cannot
reach the other's episodes, not even by naming their ids.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import uuid4

import pytest
from pydantic import BaseModel

from store.contract.facts import Fact
from store.contract.results import UpdateResult
from store.db.clock import ManualClock
from store.errors import Conflict, NotFound
from store.service import MemoryStore
from tests.conftest import ts
from tests.helpers import assert_value, declare, record

READ_AT = "2026-06-01T12:00:00Z"  # the system time every snapshot of reads is taken at
OCCURRED = {
    "e1": "2026-05-01T09:00:00Z",
    "e2": "2026-05-10T09:00:00Z",
    "e3": "2026-04-20T09:00:00Z",
    "e4": "2026-05-25T09:00:00Z",
}


@dataclass(frozen=True)
class Side:
    """One tenant's version of the same story."""

    name: str
    first_deadline: str
    second_deadline: str
    city: str

    def text(self, episode_id: str) -> str:
        """The tenant's own text of an episode (every one carries the tenant's name)."""
        texts = {
            "e1": f"{self.name} e1: mira's passport deadline is {self.first_deadline};"
            f" she lives in {self.city}.",
            "e2": f"{self.name} e2: the passport deadline moved to {self.second_deadline}.",
        }
        return texts[episode_id]

    @property
    def needles(self) -> tuple[str, ...]:
        """Strings only this tenant's data contains."""
        return (self.name, self.first_deadline, self.second_deadline, self.city)


ALPHA = Side("Alpha", "2031-01-11", "2032-02-12", "Ashford-Alpha")
BRAVO = Side("Bravo", "2041-04-14", "2042-05-15", "Brightwater-Bravo")
BRAVO_ONLY_TEXT = "Bravo e3: mira reached loyalty tier platinum-bravo-777."
BRAVO_NEEDLES = (*BRAVO.needles, "platinum-bravo-777")


@dataclass(frozen=True)
class Built:
    """A tenant and the facts its writes returned."""

    tenant: str
    first: Fact
    second: Fact
    city: Fact


def written(result: UpdateResult) -> Fact:
    """The fact of a candidate that must have been written with verified evidence."""
    assert (result.status, result.reason) == ("written", None), result
    assert result.fact is not None
    assert result.fact.evidence_verified is True
    return result.fact


def build(store: MemoryStore, clock: ManualClock, tenant: str, side: Side) -> Built:
    """The shared story in ``tenant``: writes at 01:00 and 02:00 on 2026-06-01."""
    clock.set(ts("2026-06-01T00:00:00Z"))
    for attribute, value_type in (("passport_deadline", "date"), ("home_city", "string")):
        declare(store, tenant, attribute, value_type, description=f"{side.name}: the {attribute}")
    for episode_id in ("e1", "e2"):
        record(
            store,
            tenant,
            episode_id,
            OCCURRED[episode_id],
            side.text(episode_id),
            subjects=["mira"],
        )
    clock.set(ts("2026-06-01T01:00:00Z"))
    first = written(
        assert_value(
            store,
            tenant,
            "e1",
            side.first_deadline,
            evidence=f"passport deadline is {side.first_deadline}",
        )
    )
    city = written(
        assert_value(
            store,
            tenant,
            "e1",
            side.city,
            attribute="home_city",
            evidence=f"she lives in {side.city}",
        )
    )
    clock.set(ts("2026-06-01T02:00:00Z"))
    second = written(
        assert_value(
            store, tenant, "e2", side.second_deadline, evidence=f"moved to {side.second_deadline}"
        )
    )
    return Built(tenant, first, second, city)


@pytest.fixture
def pair(store: MemoryStore, clock: ManualClock) -> tuple[Built, Built]:
    """Tenants A and B with the same keys and episode ids; B also has e3 and loyalty_tier."""
    tenant_a, tenant_b = f"iso-a-{uuid4().hex[:8]}", f"iso-b-{uuid4().hex[:8]}"
    store.admin.create_tenant(tenant_a)
    store.admin.create_tenant(tenant_b)
    a = build(store, clock, tenant_a, ALPHA)
    # B's writes go to the same keys at the same system times as A's: each tenant's keys
    # have their own "system time only moves forward" check.
    b = build(store, clock, tenant_b, BRAVO)
    declare(store, tenant_b, "loyalty_tier", "string", description="Bravo: the loyalty tier")
    record(store, tenant_b, "e3", OCCURRED["e3"], BRAVO_ONLY_TEXT, subjects=["mira"])
    clock.set(ts("2026-06-01T03:00:00Z"))
    written(
        assert_value(
            store,
            tenant_b,
            "e3",
            "platinum-bravo-777",
            attribute="loyalty_tier",
            evidence="loyalty tier platinum-bravo-777",
        )
    )
    return a, b


def reads(store: MemoryStore, clock: ManualClock, tenant: str) -> dict[str, Any]:
    """Everything the API can read about mira in ``tenant``, taken at READ_AT."""
    clock.set(ts(READ_AT))
    found: dict[str, Any] = {
        "current": {
            attribute: store.facts.current(tenant, "mira", attribute)
            for attribute in ("home_city", "passport_deadline")
        },
        "valid_on_may_5": store.facts.at(
            tenant, "mira", "passport_deadline", valid_at="2026-05-05T00:00:00Z"
        ),
        "known_at_0130": store.facts.at(
            tenant,
            "mira",
            "passport_deadline",
            known_at="2026-06-01T01:30:00Z",
            valid_at="2026-05-20T00:00:00Z",
        ),
        "history": {
            attribute: store.facts.history(tenant, "mira", attribute)
            for attribute in ("home_city", "passport_deadline")
        },
        "profile": store.subjects.profile(tenant, "mira"),
        "profile_may_5": store.subjects.profile(
            tenant, "mira", valid_at="2026-05-05T00:00:00Z", known_at="2026-06-01T01:30:00Z"
        ),
        "episodes": {
            episode_id: store.episodes.get(tenant, episode_id) for episode_id in ("e1", "e2")
        },
        "attributes": store.admin.list_attributes(tenant),
    }
    return found


def as_json(value: Any) -> str:
    """Pydantic models (nested in dicts and lists) as one JSON text."""

    def plain(item: Any) -> Any:
        if isinstance(item, BaseModel):
            return item.model_dump(mode="json")
        if isinstance(item, dict):
            return {key: plain(inner) for key, inner in item.items()}
        if isinstance(item, list):
            return [plain(inner) for inner in item]
        return item

    return json.dumps(plain(value))


def assert_mentions_none(text: str, needles: Iterable[str]) -> None:
    """No needle occurs in ``text`` (case-folded)."""
    assert [needle for needle in needles if needle.lower() in text.lower()] == []


def history_summary(
    facts: list[Fact],
) -> list[tuple[Any, str, datetime, datetime | None, str]]:
    """(value, source, valid_from, valid_to, status) of each version, in history order."""
    return [
        (fact.value, fact.source_episode_id, fact.valid_from, fact.valid_to, fact.status)
        for fact in facts
    ]


def expected_reads(read: dict[str, Any], built: Built, side: Side) -> None:
    """A tenant's reads are exactly its own story."""
    first_closed = built.first.model_copy(
        update={
            "version_id": read["valid_on_may_5"].version_id,
            "valid_to": ts(OCCURRED["e2"]),
            "recorded_at": ts("2026-06-01T02:00:00Z"),
            "ended_by": built.second.fact_id,
            "ended_by_kind": "fact",
            "status": "past",
        }
    )
    retired_first = built.first.model_copy(
        update={
            "retired_at": ts("2026-06-01T02:00:00Z"),
            "status": "retired",
        }
    )
    assert read["current"] == {"home_city": built.city, "passport_deadline": built.second}
    assert read["valid_on_may_5"] == first_closed
    assert read["known_at_0130"] == retired_first
    assert read["history"] == {
        "home_city": [built.city],
        "passport_deadline": [retired_first, first_closed, built.second],
    }
    assert history_summary(read["history"]["passport_deadline"]) == [
        (side.first_deadline, "e1", ts(OCCURRED["e1"]), None, "retired"),
        (side.first_deadline, "e1", ts(OCCURRED["e1"]), ts(OCCURRED["e2"]), "past"),
        (side.second_deadline, "e2", ts(OCCURRED["e2"]), None, "current"),
    ]
    assert read["profile"].facts == [built.city, built.second]
    assert read["profile_may_5"].facts == [
        built.city.model_copy(update={"status": "current"}),
        retired_first,
    ]
    assert {
        episode_id: (episode.text, episode.subjects, episode.occurred_at)
        for episode_id, episode in read["episodes"].items()
    } == {
        episode_id: (side.text(episode_id), ["mira"], ts(OCCURRED[episode_id]))
        for episode_id in ("e1", "e2")
    }
    assert [
        (attribute.attribute, attribute.value_type, attribute.description)
        for attribute in read["attributes"]
    ] == [
        ("home_city", "string", f"{side.name}: the home_city"),
        ("passport_deadline", "date", f"{side.name}: the passport_deadline"),
    ]


def without_loyalty(read: dict[str, Any]) -> dict[str, Any]:
    """B's reads less the attribute only B declared (and the current fact it holds)."""
    kept = [item for item in read["attributes"] if item.attribute != "loyalty_tier"]
    profile = read["profile"]
    facts = [fact for fact in profile.facts if fact.attribute != "loyalty_tier"]
    assert len(facts) == len(profile.facts) - 1
    return {**read, "attributes": kept, "profile": profile.model_copy(update={"facts": facts})}


# -- the tests ------------------------------------------------------------------------------


def test_every_read_returns_only_the_tenants_own_data(
    store: MemoryStore, clock: ManualClock, pair: tuple[Built, Built]
) -> None:
    a, b = pair
    read_a = reads(store, clock, a.tenant)
    read_b = reads(store, clock, b.tenant)

    expected_reads(read_a, a, ALPHA)
    # B's reads are B's story, plus only the attribute A never declared.
    expected_reads(without_loyalty(read_b), b, BRAVO)
    assert [attribute.attribute for attribute in read_b["attributes"]] == [
        "home_city",
        "loyalty_tier",
        "passport_deadline",
    ]
    # Nothing of the other tenant anywhere in a tenant's reads, and every fact its own.
    assert_mentions_none(as_json(read_a), (*BRAVO_NEEDLES, "loyalty", b.tenant))
    assert_mentions_none(as_json(read_b), (*ALPHA.needles, a.tenant))
    ids_a = {fact.fact_id for facts in read_a["history"].values() for fact in facts}
    ids_b = {fact.fact_id for facts in read_b["history"].values() for fact in facts}
    assert len(ids_a) == len(ids_b) == 3
    assert ids_a.isdisjoint(ids_b)
    # What only B has is absent from A.
    with pytest.raises(NotFound):  # A never declared it: A's own words, nothing of B's
        store.facts.history(a.tenant, "mira", "loyalty_tier")
    assert store.subjects.profile(a.tenant, "mira", valid_at="2026-04-25T00:00:00Z").facts == []
    [loyalty] = store.subjects.profile(b.tenant, "mira", valid_at="2026-04-25T00:00:00Z").facts
    assert (loyalty.attribute, loyalty.value, loyalty.source_episode_id) == (
        "loyalty_tier",
        "platinum-bravo-777",
        "e3",
    )


def test_writes_to_one_tenant_do_not_change_the_others_reads(
    store: MemoryStore, clock: ManualClock, pair: tuple[Built, Built]
) -> None:
    a, b = pair
    before_b = reads(store, clock, b.tenant)
    loyalty_b, e3_b = (
        store.facts.current(b.tenant, "mira", "loyalty_tier"),
        store.episodes.get(b.tenant, "e3"),
    )

    # A new value in A, from an episode id B does not have.
    clock.set(ts("2026-06-02T00:00:00Z"))
    record(
        store,
        a.tenant,
        "e4",
        OCCURRED["e4"],
        "Alpha e4: deadline now 2033-03-13.",
        subjects=["mira"],
    )
    third = written(
        assert_value(store, a.tenant, "e4", "2033-03-13", evidence="deadline now 2033-03-13")
    )
    assert store.facts.current(a.tenant, "mira", "passport_deadline") == third
    assert reads(store, clock, b.tenant) == before_b
    with pytest.raises(NotFound):
        store.episodes.get(b.tenant, "e4")

    # An expiry in A of a key B also holds.
    clock.set(ts("2026-06-02T01:00:00Z"))
    expired = store.facts.expire(
        a.tenant, "mira", "home_city", at="2026-05-20T00:00:00Z", source_episode_id="e2"
    )
    assert expired.status == "expired"
    assert expired.fact is not None
    assert (expired.fact.value, expired.fact.valid_to) == (ALPHA.city, ts("2026-05-20T00:00:00Z"))
    with pytest.raises(NotFound):
        store.facts.current(a.tenant, "mira", "home_city")
    assert reads(store, clock, b.tenant) == before_b

    # Erasing mira in A.
    clock.set(ts("2026-06-02T02:00:00Z"))
    erased = store.erasure.erase_subject(a.tenant, "mira")
    # Only A's rows are counted. Episodes e1, e2, e4. Versions: deadline from e1 (retired,
    # closed), from e2 (retired, closed), from e4; city (retired, closed by the expiry).
    assert (
        erased.episodes_deleted,
        erased.episodes_stubbed,
        erased.fact_versions_deleted,
        erased.conflicts_deleted,
        erased.expiries_deleted,
    ) == (3, 0, 7, 0, 1)
    assert store.subjects.profile(a.tenant, "mira").facts == []
    for episode_id in ("e1", "e2", "e4"):
        with pytest.raises(NotFound):
            store.episodes.get(a.tenant, episode_id)
    assert reads(store, clock, b.tenant) == before_b
    expected_reads(without_loyalty(before_b), b, BRAVO)
    assert store.facts.current(b.tenant, "mira", "loyalty_tier") == loyalty_b
    assert store.episodes.get(b.tenant, "e3") == e3_b


def test_a_tenant_cannot_cite_or_read_an_episode_only_the_other_has(
    store: MemoryStore, clock: ManualClock, pair: tuple[Built, Built]
) -> None:
    a, b = pair
    before_a, before_b = reads(store, clock, a.tenant), reads(store, clock, b.tenant)
    bravo_e3 = store.episodes.get(b.tenant, "e3")
    clock.set(ts("2026-06-02T00:00:00Z"))

    with pytest.raises(NotFound) as cited:
        store.facts.apply_candidates(
            a.tenant,
            "e3",
            [
                {
                    "evidence": "loyalty tier platinum-bravo-777",
                    "subject": "mira",
                    "attribute": "passport_deadline",
                    "change": "update",
                    "value": "2030-01-01",
                }
            ],
        )
    with pytest.raises(NotFound) as expired:
        store.facts.expire(
            a.tenant, "mira", "passport_deadline", at="2026-05-20T00:00:00Z", source_episode_id="e3"
        )
    with pytest.raises(NotFound) as read:
        store.episodes.get(a.tenant, "e3")

    for error in (cited.value, read.value):
        assert (error.detail, error.field) == ("episode 'e3' does not exist", "episode_id")
    # The same answer as for an episode nobody has, naming the field the caller sent.
    assert (expired.value.detail, expired.value.field) == (
        "episode 'e3' does not exist",
        "source_episode_id",
    )
    assert reads(store, clock, a.tenant) == before_a
    assert reads(store, clock, b.tenant) == before_b
    assert store.episodes.get(b.tenant, "e3") == bravo_e3


def test_the_same_episode_id_names_each_tenants_own_episode(
    store: MemoryStore, clock: ManualClock, pair: tuple[Built, Built]
) -> None:
    a, b = pair
    # Re-recording A's own e1 is idempotent: it returns A's episode, untouched by B's e1.
    again = store.episodes.record(
        a.tenant, {"id": "e1", "occurred_at": OCCURRED["e1"], "text": ALPHA.text("e1")}
    )
    assert again == store.episodes.get(a.tenant, "e1")
    assert again.text == ALPHA.text("e1")
    # B's content under the id e1 in A is a different episode to A: refused.
    with pytest.raises(Conflict) as refused:
        store.episodes.record(
            a.tenant, {"id": "e1", "occurred_at": OCCURRED["e1"], "text": BRAVO.text("e1")}
        )
    assert refused.value.detail == "episode 'e1' exists with different content"
    assert store.episodes.get(b.tenant, "e1").text == BRAVO.text("e1")
    assert (
        store.episodes.get(a.tenant, "e1").content_hash
        != store.episodes.get(b.tenant, "e1").content_hash
    )


def test_errors_of_one_tenants_reads_do_not_mention_the_others_data(
    store: MemoryStore, clock: ManualClock, pair: tuple[Built, Built]
) -> None:
    a, b = pair
    clock.set(ts(READ_AT))
    # Reads that fail in A but succeed in B: B's key, time and episode exist. A names B's
    # attribute, which A never declared.
    cases: list[tuple[str, Callable[[str], object]]] = [
        (
            "attribute 'loyalty_tier' is not declared",
            lambda tenant: store.facts.current(tenant, "mira", "loyalty_tier"),
        ),
        (
            "attribute 'loyalty_tier' is not declared",
            lambda tenant: store.facts.at(
                tenant, "mira", "loyalty_tier", valid_at="2026-05-01T00:00:00Z"
            ),
        ),
        ("episode 'e3' does not exist", lambda tenant: store.episodes.get(tenant, "e3")),
    ]
    for expected, call in cases:
        with pytest.raises(NotFound) as caught:
            call(a.tenant)
        assert caught.value.detail == expected
        assert_mentions_none(str(caught.value), (*BRAVO_NEEDLES, BRAVO_ONLY_TEXT, b.tenant))
        assert_mentions_none(as_json(call(b.tenant)), (*ALPHA.needles, a.tenant))

    # A write naming B's attribute fails in A in A's own words.
    with pytest.raises(NotFound) as undeclared:
        store.facts.expire(
            a.tenant, "mira", "loyalty_tier", at="2026-05-01T00:00:00Z", source_episode_id="e1"
        )
    assert (undeclared.value.detail, undeclared.value.field) == (
        "attribute 'loyalty_tier' is not declared",
        "attribute",
    )
    [invalid] = store.facts.apply_candidates(
        a.tenant,
        "e1",
        [
            {
                "evidence": "",
                "subject": "mira",
                "attribute": "loyalty_tier",
                "change": "update",
                "value": "gold",
            }
        ],
    )
    assert (invalid.status, invalid.field, invalid.reason) == (
        "invalid",
        "attribute",
        "attribute 'loyalty_tier' is not declared",
    )
    # And B's failed reads say nothing of A.
    with pytest.raises(NotFound) as before_may:
        store.facts.at(b.tenant, "mira", "passport_deadline", valid_at="2026-04-30T00:00:00Z")
    assert before_may.value.detail == "mira.passport_deadline is not known at that time"
    assert_mentions_none(str(before_may.value), (*ALPHA.needles, a.tenant))
