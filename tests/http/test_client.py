"""The typed client against the real app: every route, blocking and async, and typed errors.

System time comes from the client's ``now`` (the ``X-SGAM-Now`` header the test app allows),
so every recorded_at, created_at and status below is exact.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from server.client import (
    AsyncSGAMClient,
    Conflict,
    InvalidInput,
    NotFound,
    SGAMClient,
    TooLarge,
    Unauthorized,
)
from server.settings import Settings
from store.contract.bodies import EpisodeBody, TenantCreated
from store.contract.facts import Attribute, Fact, MemoryUpdate
from store.contract.results import ApiKeyIssued, ApiKeyRevoked, ErasureResult
from tests.conftest import ADMIN_TOKEN, ts

_tenants = itertools.count(1)

SETUP = "2026-06-01T09:00:05Z"  # system time of the tenant, its key and its schema
E1_AT = "2026-06-01T09:00:10Z"  # system time of e1's write
E2_AT = "2026-06-03T10:00:10Z"  # system time of e2's write
NOW = "2026-06-04T00:00:00Z"  # system time of the reads
PASSPORT = ("mira", "passport_deadline")
E1_TEXT = "Mira prefers concise answers. Her passport deadline is 2026-07-15."
E2_TEXT = "Update from Mira: the consulate moved her passport deadline to 2026-06-30."


@dataclass(frozen=True)
class Tenant:
    """A tenant made through the client's admin calls, and a client on its new key."""

    name: str
    key: ApiKeyIssued
    admin: SGAMClient
    client: SGAMClient


@dataclass(frozen=True)
class Seed:
    """The seed trace recorded through the client: e1's fact, then e2's superseding it."""

    tenant: Tenant
    e1: Fact
    e2: Fact

    @property
    def reader(self) -> SGAMClient:
        """The tenant's client with system time at ``NOW``."""
        return self.tenant.client.with_now(NOW)


@pytest.fixture
def tenant(http: TestClient[Litestar]) -> Tenant:
    """A fresh tenant and API key, made with the admin client at ``SETUP``."""
    base_url = str(http.base_url)
    admin = SGAMClient(base_url, admin_token=ADMIN_TOKEN, now=SETUP, http=http)
    name = f"client-tenant-{next(_tenants)}"
    assert admin.create_tenant(name) == TenantCreated(tenant_id=name)
    key = admin.create_key(name)
    assert key == ApiKeyIssued(
        key_id=key.key_id,
        tenant_id=name,
        created_at=ts(SETUP),
        revoked_at=None,
        api_key=key.api_key,
    )
    return Tenant(name, key, admin, SGAMClient(base_url, key.api_key, now=SETUP, http=http))


def declare_passport(client: SGAMClient) -> Attribute:
    """Declare ``passport_deadline`` (a date)."""
    return client.declare_attribute(
        "passport_deadline",
        "date",
        description="Date by which the passport must be renewed",
        aliases=["passport renewal"],
    )


def seed_candidate(value: str, valid_from: str, evidence: str) -> MemoryUpdate:
    """A MemoryUpdate for Mira's passport deadline."""
    return MemoryUpdate(
        evidence=evidence,
        subject="mira",
        attribute="passport_deadline",
        change="update",
        value=value,
        valid_from=ts(valid_from),
    )


@pytest.fixture
def seed(tenant: Tenant) -> Seed:
    """The seed trace: e1 says 2026-07-15 from June 1, e2 says 2026-06-30 from June 3."""
    client = tenant.client
    declare_passport(client)
    e1 = client.with_now(E1_AT).record_episode(
        E1_TEXT,
        "2026-06-01T09:00:00Z",
        id="e1",
        subjects=["mira"],
        updates=[
            {
                "evidence": "Her passport deadline is 2026-07-15.",
                "subject": "mira",
                "attribute": "passport_deadline",
                "change": "new",
                "value": "2026-07-15",
                "valid_from": datetime(2026, 6, 1, 9, tzinfo=UTC),
            }
        ],
    )
    e2 = client.with_now(E2_AT).record_episode(
        E2_TEXT,
        datetime(2026, 6, 3, 10, tzinfo=UTC),
        id="e2",
        subjects=["mira"],
        updates=[
            seed_candidate(
                "2026-06-30", "2026-06-03T10:00:00Z", "moved her passport deadline to 2026-06-30"
            )
        ],
    )
    [first], [second] = e1.results, e2.results
    assert (first.status, second.status) == ("written", "written")
    assert first.fact is not None
    assert second.fact is not None
    return Seed(tenant, first.fact, second.fact)


def window(fact: Fact) -> tuple[Any, ...]:
    """What a version says, its own ids apart."""
    return (
        fact.value,
        fact.source_episode_id,
        fact.valid_from,
        fact.valid_to,
        fact.recorded_at,
        fact.retired_at,
        fact.status,
    )


# -- the seed trace through the client ------------------------------------------------------


def test_the_schema_calls_declare_list_and_describe_the_tenants_attributes(tenant: Tenant) -> None:
    declared = declare_passport(tenant.client)
    assert declared == Attribute(
        attribute="passport_deadline",
        value_type="date",
        description="Date by which the passport must be renewed",
        aliases=["passport renewal"],
        schema_version=1,
        created_at=ts(SETUP),
        updated_at=ts(SETUP),
    )
    tier = tenant.client.declare_attribute(
        "tier", "enum", enum_values=["gold", "platinum"], on_equal_start="reject"
    )
    assert (tier.value_type, tier.enum_values, tier.on_equal_start) == (
        "enum",
        ["gold", "platinum"],
        "reject",
    )
    assert tenant.client.attributes().attributes == [declared, tier]
    schema = tenant.client.memory_update_schema()
    assert schema["properties"]["attribute"]["enum"] == ["passport_deadline", "tier"]


def test_current_point_in_time_and_known_at_reads_follow_the_seed_trace(seed: Seed) -> None:
    reader = seed.reader
    assert seed.e2.supersedes == seed.e1.fact_id
    current = reader.fact(*PASSPORT)
    assert current == seed.e2.model_copy(update={"status": "current"})
    on_june_2 = reader.fact(*PASSPORT, valid_at=datetime(2026, 6, 2, tzinfo=UTC))
    assert window(on_june_2) == (
        "2026-07-15",
        "e1",
        ts("2026-06-01T09:00:00Z"),
        ts("2026-06-03T10:00:00Z"),
        ts(E2_AT),
        None,
        "past",
    )
    assert on_june_2.ended_by == seed.e2.fact_id
    believed_on_june_2 = reader.fact(*PASSPORT, known_at="2026-06-02T00:00:00+02:00")
    assert window(believed_on_june_2) == (
        "2026-07-15",
        "e1",
        ts("2026-06-01T09:00:00Z"),
        None,
        ts(E1_AT),
        ts(E2_AT),
        "retired",
    )
    assert [window(version) for version in reader.history(*PASSPORT)] == [
        window(believed_on_june_2),
        window(on_june_2),
        window(current),
    ]
    episode = reader.episode("e1")
    assert (episode.id, episode.text, episode.subjects, episode.recorded_at) == (
        "e1",
        E1_TEXT,
        ["mira"],
        ts(E1_AT),
    )


def test_context_search_profile_and_export_cite_the_current_value(seed: Seed) -> None:
    reader = seed.reader
    context = reader.context(question="When is Mira's passport deadline?", subject="mira")
    assert [fact.fact_id for fact in context.facts] == [seed.e2.fact_id]
    assert context.citations[0].model_dump(mode="json") == {
        "episode_id": "e2",
        "occurred_at": "2026-06-03T10:00:00Z",
        "role": "fact",
    }
    assert "passport_deadline: 2026-06-30 (from 2026-06-03; source e2)" in (context.block)
    assert (context.plan.mode, context.over_budget) == ("current", False)

    search = reader.search("passport deadline", subject="mira", k=2)
    assert sorted(item.episode_id for item in search.results) == ["e1", "e2"]
    assert [item.snippet for item in sorted(search.results, key=lambda item: item.episode_id)] == [
        E1_TEXT,
        E2_TEXT,
    ]

    profile = reader.profile("mira")
    assert (profile.subject, profile.valid_at, profile.known_at) == ("mira", ts(NOW), ts(NOW))
    assert profile.facts == [reader.fact(*PASSPORT)]
    on_june_2 = reader.profile("mira", valid_at="2026-06-02T00:00:00Z")
    assert [(fact.value, fact.status) for fact in on_june_2.facts] == [("2026-07-15", "past")]

    export = reader.export_subject("mira")
    assert (export.subject, export.exported_at, export.facts) == ("mira", ts(NOW), profile.facts)
    assert export.versions == reader.history(*PASSPORT)
    assert [(episode.id, episode.text) for episode in export.episodes] == [
        ("e1", E1_TEXT),
        ("e2", E2_TEXT),
    ]
    assert export.conflicts == []


def test_subjects_come_in_pages_and_the_iterator_follows_next_cursor(tenant: Tenant) -> None:
    client = tenant.client
    client.declare_attribute("city", "string")
    names = [f"person-{number:02d}" for number in range(7)]
    batch = client.record_batch(
        [
            EpisodeBody(
                id=f"move-{name}",
                occurred_at=ts("2026-05-01T00:00:00Z"),
                text=f"{name} lives in Lisbon.",
                subjects=[name],
                updates=[
                    {
                        "evidence": "lives in Lisbon",
                        "subject": name,
                        "attribute": "city",
                        "change": "new",
                        "value": "Lisbon",
                    }
                ],
            )
            for name in names[:4]
        ]
        + [
            {
                "id": f"move-{name}",
                "occurred_at": "2026-05-01T00:00:00Z",
                "text": f"{name} lives in Porto.",
                "subjects": [name],
                "updates": [seed_city(name, "Porto")],
            }
            for name in names[4:]
        ]
    )
    assert [
        (episode.id, [result.status for result in episode.results]) for episode in batch.episodes
    ] == [(f"move-{name}", ["written"]) for name in names]

    first = client.subjects(limit=3)
    assert first.subjects == names[:3]
    assert first.next_cursor is not None
    second = client.subjects(limit=3, cursor=first.next_cursor)
    assert second.subjects == names[3:6]
    assert list(client.iter_subjects(page_size=3)) == names
    assert list(client.iter_subjects()) == names
    # ".." is a valid subject id: it reaches its own profile, not a shorter path.
    assert client.profile("..").model_dump(include={"subject", "facts"}) == {
        "subject": "..",
        "facts": [],
    }


def seed_city(name: str, city: str) -> MemoryUpdate:
    """A candidate saying where ``name`` lives."""
    return MemoryUpdate(
        evidence=f"lives in {city}", subject=name, attribute="city", change="new", value=city
    )


def test_the_conflict_iterator_follows_pages_of_every_status(tenant: Tenant) -> None:
    # Listing and resolving conflicts is a scenario of tests/conformance/test_conflicts.py.
    client = tenant.client
    client.declare_attribute("tier", "string", on_equal_start="reject")
    start = "2026-06-01T09:00:00Z"
    for episode_id, text in [("m1", "Account 42 is on gold."), ("m2", "Account 42 is on silver.")]:
        client.record_episode(text, start, id=episode_id, subjects=["account:42"])
    client.apply_candidates("m1", [tier_candidate("gold")])
    [silver] = client.apply_candidates("m2", [tier_candidate("silver")]).results
    [conflict] = client.conflicts().conflicts
    assert conflict.conflict_id == silver.conflict_id
    assert list(client.iter_conflicts()) == [conflict]
    client.with_now("2026-06-02T00:00:00Z").resolve_conflict(conflict.conflict_id, "challenger")
    reader = client.with_now("2026-06-03T00:00:00Z")
    assert list(reader.iter_conflicts()) == []
    assert [c.conflict_id for c in reader.iter_conflicts(status="all", page_size=1)] == [
        conflict.conflict_id
    ]


def tier_candidate(value: str) -> dict[str, Any]:
    """Account 42's tier from its episode's start."""
    return {
        "evidence": f"Account 42 is on {value}.",
        "subject": "account:42",
        "attribute": "tier",
        "change": "update",
        "value": value,
    }


def test_expire_then_retract_reads_as_if_the_retracted_fact_never_was(seed: Seed) -> None:
    client = seed.tenant.client.with_now("2026-06-05T00:00:00Z")
    client.record_episode(
        "Mira no longer needs a passport: the trip is cancelled.",
        "2026-06-05T00:00:00Z",
        id="e3",
        subjects=["mira"],
    )
    expired = client.expire(*PASSPORT, at="2026-06-20T00:00:00Z", source_episode_id="e3")
    assert expired.status == "expired"
    assert expired.fact is not None
    assert (expired.fact.fact_id, expired.fact.valid_to, expired.fact.ended_by_kind) == (
        seed.e2.fact_id,
        ts("2026-06-20T00:00:00Z"),
        "expiry",
    )
    again = client.expire(*PASSPORT, at="2026-06-25T00:00:00Z", source_episode_id="e3")
    assert (again.status, again.fact) == ("unchanged", None)
    with pytest.raises(NotFound):
        client.fact(*PASSPORT, valid_at="2026-06-21T00:00:00Z")

    later = client.with_now("2026-06-06T00:00:00Z")
    retracted = later.retract(*PASSPORT, fact_id=seed.e2.fact_id)
    assert (retracted.status, retracted.fact_id, retracted.restored_fact_id) == (
        "retracted",
        seed.e2.fact_id,
        None,
    )
    # e1 holds again, up to the expiry e2 had met.
    restored = later.fact(*PASSPORT, valid_at="2026-06-10T00:00:00Z")
    assert (restored.fact_id, restored.value, restored.valid_to, restored.ended_by_kind) == (
        seed.e1.fact_id,
        "2026-07-15",
        ts("2026-06-20T00:00:00Z"),
        "expiry",
    )
    by_start = later.retract(*PASSPORT, valid_from="2026-06-01T11:00:00+02:00")
    assert (by_start.status, by_start.fact_id) == ("retracted", seed.e1.fact_id)
    with pytest.raises(NotFound):
        later.fact(*PASSPORT, valid_at="2026-06-10T00:00:00Z")


def test_erasing_an_episode_and_a_subject_leaves_tombstones_and_stubs(seed: Seed) -> None:
    client = seed.tenant.client.with_now("2026-06-05T00:00:00Z")
    erased = client.erase_episode("e2")
    assert erased == ErasureResult(
        tombstone_id=erased.tombstone_id,
        facts_retracted=1,
        episodes_deleted=1,
        episodes_stubbed=0,
        fact_versions_deleted=1,
        conflicts_deleted=0,
        expiries_deleted=0,
    )
    with pytest.raises(NotFound):
        client.episode("e2")
    assert client.fact(*PASSPORT).fact_id == seed.e1.fact_id

    client.declare_attribute("city", "string")
    [lisbon] = client.record_episode(
        "Mira and Noor share a flat in Lisbon.",
        "2026-06-04T12:00:00Z",
        id="e4",
        subjects=["mira", "noor"],
        updates=[seed_city("noor", "Lisbon")],
    ).results
    assert lisbon.status == "written"
    gone = client.erase_subject("mira")
    assert gone == ErasureResult(
        tombstone_id=gone.tombstone_id,
        episodes_deleted=1,
        episodes_stubbed=1,
        fact_versions_deleted=3,
        conflicts_deleted=0,
        expiries_deleted=0,
    )
    assert gone.tombstone_id != erased.tombstone_id
    # Noor's fact still cites e4: its source stays, without content.
    stub = client.episode("e4")
    assert (stub.id, stub.text, stub.metadata, stub.erased_at) == (
        "e4",
        None,
        {},
        ts("2026-06-05T00:00:00Z"),
    )
    assert client.fact("noor", "city").source_episode_id == "e4"
    assert list(client.iter_subjects()) == ["noor"]
    with pytest.raises(NotFound) as raised:
        client.fact(*PASSPORT)
    assert (raised.value.status, raised.value.code) == (404, "not_found")


def test_a_revoked_key_is_refused_as_unauthorized_on_its_next_call(seed: Seed) -> None:
    tenant = seed.tenant
    revoked = tenant.admin.with_now("2026-06-05T00:00:00Z").revoke_key(tenant.key.key_id)
    assert revoked == ApiKeyRevoked(
        status="revoked",
        key_id=tenant.key.key_id,
        tenant_id=tenant.name,
        created_at=ts(SETUP),
        revoked_at=ts("2026-06-05T00:00:00Z"),
    )
    with pytest.raises(Unauthorized) as raised:
        seed.reader.fact(*PASSPORT)
    assert (raised.value.status, raised.value.code, raised.value.field) == (
        401,
        "unauthorized",
        "Authorization",
    )
    assert seed.reader.healthz().status == "ok"


# -- typed errors ---------------------------------------------------------------------------


def test_an_unknown_fact_is_not_found_and_a_naive_timestamp_is_invalid_naming_its_field(
    seed: Seed,
) -> None:
    reader = seed.reader
    with pytest.raises(NotFound) as missing:
        reader.fact("nobody", "passport_deadline")
    assert (missing.value.status, missing.value.code) == (404, "not_found")

    with pytest.raises(InvalidInput) as naive_query:
        reader.fact(*PASSPORT, valid_at="2026-06-02T00:00:00")
    assert (naive_query.value.status, naive_query.value.code, naive_query.value.field) == (
        422,
        "invalid",
        "valid_at",
    )
    with pytest.raises(InvalidInput) as naive_body:
        reader.record_episode("no offset", datetime(2026, 6, 2), id="e9")  # noqa: DTZ001
    assert (naive_body.value.code, naive_body.value.field) == ("invalid", "occurred_at")
    with pytest.raises(InvalidInput) as naive_clock:
        reader.with_now("2026-06-04T00:00:00").fact(*PASSPORT)
    assert naive_clock.value.field == "X-SGAM-Now"


def test_conflicting_oversized_and_unauthenticated_requests_raise_their_own_errors(
    tenant: Tenant, api_settings: Settings
) -> None:
    with pytest.raises(Conflict) as exists:
        tenant.admin.create_tenant(tenant.name)
    assert (exists.value.status, exists.value.code) == (409, "conflict")

    text = "x" * api_settings.max_body_bytes
    with pytest.raises(TooLarge) as too_large:
        tenant.client.record_episode(text, "2026-06-01T00:00:00Z")
    assert (too_large.value.status, too_large.value.code) == (413, "too_large")

    anonymous = tenant.client.with_now(None)
    anonymous.api_key = None
    with pytest.raises(Unauthorized) as no_key:
        anonymous.attributes()
    assert no_key.value.field == "Authorization"
    wrong_admin = tenant.admin.with_now(None)
    wrong_admin.admin_token = "not-the-token"
    with pytest.raises(Unauthorized):
        wrong_admin.create_tenant("never-made")


def test_health_and_readiness_need_no_key(http: TestClient[Litestar]) -> None:
    with SGAMClient(str(http.base_url), http=http) as client:
        assert client.healthz().status == "ok"
        ready = client.readyz()
        assert (ready.status, ready.database, ready.migrations_pending, ready.model_loaded) == (
            "ready",
            True,
            0,
            True,
        )
    # The client did not open the test client, so it left it open.
    assert http.get("/healthz").status_code == 200


# -- async ----------------------------------------------------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    """Async tests run on asyncio."""
    return "asyncio"


@pytest.mark.anyio
async def test_the_async_client_records_and_reads_the_seed_trace(
    http: TestClient[Litestar],
) -> None:
    # The module's app, already started; a second app cannot start beside it in one process
    # (its pool gauges would register twice with Prometheus).
    transport = httpx.ASGITransport(app=http.app)
    async with httpx.AsyncClient(transport=transport) as asgi:
        base_url = "http://sgam.test"
        async with AsyncSGAMClient(
            base_url, admin_token=ADMIN_TOKEN, now=SETUP, http=asgi
        ) as admin:
            name = f"client-async-{next(_tenants)}"
            await admin.create_tenant(name)
            key = await admin.create_key(name)
        async with AsyncSGAMClient(base_url, key.api_key, now=SETUP, http=asgi) as client:
            await client.declare_attribute("passport_deadline", "date")
            await client.with_now(E1_AT).record_episode(
                E1_TEXT,
                "2026-06-01T09:00:00Z",
                id="e1",
                subjects=["mira"],
                updates=[seed_candidate("2026-07-15", "2026-06-01T09:00:00Z", "2026-07-15")],
            )
            await client.with_now(E2_AT).record_episode(E2_TEXT, "2026-06-03T10:00:00Z", id="e2")
            recorded = await client.with_now(E2_AT).apply_candidates(
                "e2", [seed_candidate("2026-06-30", "2026-06-03T10:00:00Z", "2026-06-30")]
            )
            assert [result.status for result in recorded.results] == ["written"]

            reader = client.with_now(NOW)
            current = await reader.fact(*PASSPORT)
            past = await reader.fact(*PASSPORT, valid_at="2026-06-02T00:00:00Z")
            assert [
                (fact.value, fact.source_episode_id, fact.status) for fact in (current, past)
            ] == [
                ("2026-06-30", "e2", "current"),
                ("2026-07-15", "e1", "past"),
            ]
            assert current.supersedes == past.fact_id
            assert len(await reader.history(*PASSPORT)) == 3
            context = await reader.context("When is Mira's passport deadline?", subject="mira")
            assert [fact.fact_id for fact in context.facts] == [current.fact_id]
            assert [subject async for subject in reader.iter_subjects(page_size=1)] == ["mira"]
            with pytest.raises(NotFound):
                await reader.fact("nobody", "passport_deadline")
            assert (await reader.readyz()).status == "ready"
        assert not asgi.is_closed
