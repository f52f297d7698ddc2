"""A read is one snapshot and at most one encoder call.

A context's reads (subjects, the subject's memory, evidence) run in one REPEATABLE READ
transaction at one ``now``, so a write committing meanwhile is seen by none of them; the
question costs one call to the encoder at most, none when the caller names the attributes and
asks for no evidence; the attribute vectors are cached across the server's requests.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import psycopg
import pytest
from litestar import Litestar
from litestar.testing import TestClient
from psycopg_pool import ConnectionPool

from retrieval.reader import Reader
from retrieval.search.embeddings import Embedder
from server.runtime.resources import resources_of
from store.attributes import registry
from store.contract.facts import Fact
from store.contract.reads import ContextRequest, SearchRequest
from store.db import snapshot as snapshot_module
from store.db.clock import ManualClock
from store.db.database import make_pool
from store.db.snapshot import ReadSnapshot
from store.errors import DatabaseUnavailable
from store.service import MemoryStore
from store.subjects.reads import SubjectMemory
from tests.conftest import ApiTenant, ts
from tests.encoder_helpers import gold_member
from tests.http_helpers import declare
from tests.read_helpers import ReadPath, read_path

Client = TestClient[Litestar]


@pytest.fixture
def reader(pool: ConnectionPool, clock: ManualClock, embedder: Embedder) -> ReadPath:
    return read_path(pool, clock, embedder)


@pytest.fixture
def embed_calls(embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every batch the session's encoder is asked to embed during the test (``embed`` hands
    its texts to ``embed_later`` too); an empty one never reaches it and is not counted."""
    calls: list[list[str]] = []
    real = embedder.embed_later

    def counting(texts: Sequence[str]) -> Any:
        if texts:
            calls.append(list(texts))
        return real(texts)

    monkeypatch.setattr(embedder, "embed_later", counting)
    return calls


@pytest.fixture
def checkouts(pool: ConnectionPool, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """One entry per connection taken from the module's pool during the test."""
    taken: list[str] = []
    real: Callable[..., AbstractContextManager[psycopg.Connection[Any]]] = pool.connection

    def counting(*args: Any, **kwargs: Any) -> AbstractContextManager[psycopg.Connection[Any]]:
        taken.append("connection")
        return real(*args, **kwargs)

    monkeypatch.setattr(pool, "connection", counting)
    return taken


def _mira(reader: ReadPath) -> None:
    reader.at("2026-06-01T10:00:00Z")
    reader.declare("home_city", "The city where the person lives")
    reader.declare("passport_deadline", "Date by which the passport must be renewed")
    reader.record("e1", "2026-06-01T09:00:00Z", "Mira moved to Lisbon.")
    reader.assert_value("e1", "mira", "home_city", "Lisbon", "2026-06-01T09:00:00Z")
    reader.record("e2", "2026-06-01T09:30:00Z", "Her passport deadline is 2026-07-15.")
    reader.assert_value("e2", "mira", "passport_deadline", "2026-07-15", "2026-06-01T09:30:00Z")


def test_a_snapshot_does_not_see_a_write_committed_while_it_reads(reader: ReadPath) -> None:
    _mira(reader)
    reader.record("e3", "2026-06-02T09:00:00Z", "Mira moved to Porto.")
    seen: list[str] = []

    def work(snapshot: ReadSnapshot) -> str:
        first = snapshot.subject_memory("mira", valid_at=snapshot.now, known_at=snapshot.now)
        # Another transaction commits a new value between the snapshot's two reads.
        reader.assert_value("e3", "mira", "home_city", "Porto", "2026-06-02T09:00:00Z")
        again = snapshot.subject_memory("mira", valid_at=snapshot.now, known_at=snapshot.now)
        for memory in (first, again):
            fact = memory.fact("home_city")
            assert fact is not None
            seen.append(str(fact.value))
        # The snapshot's own connection, which it never hands to the read path.
        isolation = snapshot._conn.execute("SHOW transaction_isolation").fetchone()
        assert isolation is not None
        return str(isolation[0])

    reader.at("2026-06-03T00:00:00Z")
    assert reader.store.snapshots.read(reader.tenant, work) == "repeatable read"
    assert seen == ["Lisbon", "Lisbon"]
    assert reader.store.facts.current(reader.tenant, "mira", "home_city").value == "Porto"


def test_a_snapshot_reads_at_one_now_from_the_stores_clock(reader: ReadPath) -> None:
    reader.at("2026-06-05T12:00:00Z")
    now = reader.store.snapshots.read(reader.tenant, lambda snapshot: snapshot.now)
    assert now == reader.clock()


def test_a_context_is_one_transaction(reader: ReadPath, checkouts: list[str]) -> None:
    _mira(reader)
    checkouts.clear()
    result = reader.context("When is Mira's passport deadline?", evidence_k=2)
    assert "passport_deadline: 2026-07-15" in result.block
    assert [item.episode_id for item in result.evidence][:1] == ["e2"]
    assert checkouts == ["connection"]


@pytest.mark.parametrize(
    ("request_fields", "batches"),
    [
        # Routed, evidence asked: the routing text and the question in one batch.
        ({}, [2]),
        # Attributes named, evidence asked: the question alone.
        ({"attributes": ["passport_deadline"]}, [1]),
        # Attributes named, no evidence: nothing to embed.
        ({"attributes": ["passport_deadline"], "evidence_k": 0}, []),
        # Routed, no evidence: the routing text alone.
        ({"evidence_k": 0}, [1]),
    ],
)
def test_a_context_makes_one_encoder_call_at_most(
    reader: ReadPath,
    embed_calls: list[list[str]],
    request_fields: dict[str, Any],
    batches: list[int],
) -> None:
    _mira(reader)
    question = "When is Mira's passport deadline?"
    # The attribute vectors are cached from here on; this routing text is not the question's.
    reader.context("Where does Mira live?")
    embed_calls.clear()
    result = reader.context(question, **request_fields)
    assert "passport_deadline: 2026-07-15" in result.block
    assert [len(batch) for batch in embed_calls] == batches
    if batches == [2]:
        assert embed_calls[0][1] == question


def test_a_question_with_no_name_or_date_to_cut_is_embedded_once(
    reader: ReadPath, embed_calls: list[list[str]]
) -> None:
    _mira(reader)
    question = "When is the passport deadline?"  # its own routing text: nothing to cut
    reader.context("Where does she live?", subject="mira")  # the attributes' vectors cached
    named = "When is Mira's passport deadline?"
    embed_calls.clear()
    once = reader.context(question, subject="mira")
    twice = reader.context(named, subject="mira")
    assert embed_calls == [[question], ["When is passport deadline?", named]]
    assert "passport_deadline: 2026-07-15" in once.block
    # The one vector routed the question and found its evidence, as the two vectors do.
    assert once.plan.attributes == twice.plan.attributes == ("passport_deadline",)
    assert [e.episode_id for e in once.evidence][:1] == ["e2"]
    # Asked again, its cached vector routes it and searches for its evidence.
    embed_calls.clear()
    again = reader.context(question, subject="mira")
    assert embed_calls == []
    assert again.block == once.block
    assert [e.episode_id for e in again.evidence] == [e.episode_id for e in once.evidence]


def test_a_routing_text_seen_before_is_not_encoded_again(
    reader: ReadPath, embed_calls: list[list[str]]
) -> None:
    _mira(reader)
    reader.record("e3", "2026-06-01T09:45:00Z", "Noor's passport deadline is 2026-09-01.")
    reader.assert_value("e3", "noor", "passport_deadline", "2026-09-01", "2026-06-01T09:45:00Z")
    embed_calls.clear()
    mira = reader.context("When is Mira's passport deadline?")
    # Another subject, the same routing text ("When is passport deadline?"): only the question
    # is embedded, for its evidence; without evidence nothing is.
    noor = reader.context("When is Noor's passport deadline?")
    bare = reader.context("When is Noor's passport deadline?", evidence_k=0)
    assert [batch[:2] for batch in embed_calls] == [
        ["When is passport deadline?", "When is Mira's passport deadline?"],
        ["When is Noor's passport deadline?"],
    ]
    assert len(embed_calls[1]) == 1
    assert "passport_deadline: 2026-07-15" in mira.block
    assert "passport_deadline: 2026-09-01" in noor.block
    assert "passport_deadline: 2026-09-01" in bare.block
    assert mira.plan.attributes == noor.plan.attributes == bare.plan.attributes
    assert noor.plan.attributes == ("passport_deadline",)
    assert [e.episode_id for e in noor.evidence][:1] == ["e3"]


def test_a_context_reads_the_tenants_attributes_once(
    reader: ReadPath, monkeypatch: pytest.MonkeyPatch
) -> None:
    _mira(reader)
    reader.context("When is Mira's passport deadline?")  # routing caches the attribute vectors
    reads: list[str] = []

    def counting(conn: psycopg.Connection[Any], tenant_id: str) -> list[Any]:
        reads.append(tenant_id)
        return registry.current_attributes(conn, tenant_id)

    monkeypatch.setattr(snapshot_module, "current_attributes", counting)
    result = reader.context("When is Mira's passport deadline?")
    # Routing and the evidence's topics both ask for them: one read, in one snapshot.
    assert reads == [reader.tenant]
    assert "passport_deadline: 2026-07-15" in result.block
    assert result.evidence


def test_a_first_context_embeds_its_attributes_in_the_same_call(
    reader: ReadPath, embed_calls: list[list[str]]
) -> None:
    _mira(reader)
    embed_calls.clear()
    reader.context("When is Mira's passport deadline?")
    [batch] = embed_calls
    assert len(batch) > 2  # routing text, question, then the attributes' texts
    assert any("passport" in text for text in batch[2:])


def test_the_servers_requests_share_the_attribute_vectors(
    http: Client, api_tenant: ApiTenant, embed_calls: list[list[str]]
) -> None:
    headers = gold_member(http, api_tenant.headers)
    declare(http, headers, "seat_pref", "string", description="Preferred aircraft seat")
    body = {"question": "Which loyalty tier is Ada in?", "subject": "ada"}
    embed_calls.clear()
    first = http.post("/v1/context", json=body, headers=headers)
    second = http.post("/v1/context", json=body, headers=headers)
    assert (first.status_code, second.status_code) == (200, 200), second.text
    assert "loyalty_tier: gold" in second.json()["block"]
    texts_first, texts_second = embed_calls
    assert any("Loyalty programme tier" in text for text in texts_first)
    # The question alone: the attributes' vectors and the routing text's are cached.
    assert texts_second == ["Which loyalty tier is Ada in?"]
    assert len(resources_of(http.app).attributes) >= 2


def test_a_routing_text_is_kept_for_the_tenant_that_asked_it(
    http: Client, api_tenant: ApiTenant, admin: dict[str, str], embed_calls: list[list[str]]
) -> None:
    other = f"{api_tenant.name}-other"
    assert http.post("/v1/admin/tenants", json={"tenant_id": other}, headers=admin).is_success
    issued = http.post(f"/v1/admin/tenants/{other}/keys", headers=admin)
    other_headers = {"Authorization": f"Bearer {issued.json()['api_key']}"}
    for headers in (api_tenant.headers, other_headers):
        gold_member(http, headers)
    body = {"question": "Which loyalty tier is Ada in?", "subject": "ada", "evidence_k": 0}
    embed_calls.clear()
    asked = [
        http.post("/v1/context", json=body, headers=headers)
        for headers in (api_tenant.headers, other_headers, api_tenant.headers)
    ]
    assert [answer.status_code for answer in asked] == [200, 200, 200]
    assert all("loyalty_tier: gold" in answer.json()["block"] for answer in asked)
    # The other tenant's first question is encoded, though the first tenant asked its routing
    # text just before; the first tenant's second is not.
    routing_text = "Which loyalty tier is in?"
    assert [batch[:1] for batch in embed_calls] == [[routing_text], [routing_text]]


def test_search_and_context_report_an_unavailable_database_as_the_store_does(
    conninfo: str, embedder: Embedder
) -> None:
    """Reads go through the store's runner: a dead database is ``DatabaseUnavailable`` (503
    over HTTP, as for every other call), never a raw driver error (500)."""
    closed = make_pool(conninfo)  # never opened: every checkout fails
    reader = Reader(MemoryStore(closed, embedder=embedder), embedder)
    with pytest.raises(DatabaseUnavailable):
        reader.search("acme", SearchRequest(query="loyalty"))
    with pytest.raises(DatabaseUnavailable):
        reader.context("acme", ContextRequest(question="Which tier is Ada in?"))


def test_a_snapshots_disputes_are_the_stores(reader: ReadPath) -> None:
    """The subject's memory marks disputes from the conflicts it read; a profile asks SQL."""
    reader.at("2026-06-01T10:00:00Z")
    reader.declare("home_city", "The city", on_equal_start="source_precedence")
    reader.record("d1", "2026-06-01T09:00:00Z", "Mira lives in Lisbon.")
    reader.record("d2", "2026-06-01T09:00:00Z", "Mira lives in Porto.")
    reader.assert_value("d1", "mira", "home_city", "Lisbon", "2026-06-01T09:00:00Z")
    disputed = reader.assert_value("d2", "mira", "home_city", "Porto", "2026-06-01T09:00:00Z")
    assert disputed.status == "conflict"
    reader.tick()
    for known_at in ("2026-06-01T09:30:00Z", None):
        profile = reader.store.subjects.profile(reader.tenant, "mira", known_at=known_at)

        def memory_facts(snapshot: ReadSnapshot, known_at: str | None = known_at) -> list[Fact]:
            instant = ts(known_at) if known_at else snapshot.now
            return snapshot.subject_memory("mira", valid_at=instant, known_at=instant).facts

        assert reader.store.snapshots.read(reader.tenant, memory_facts) == profile.facts
    [fact] = reader.store.subjects.profile(reader.tenant, "mira").facts
    assert fact.disputed
    assert [challenger.value for challenger in fact.challengers] == ["Porto"]


def test_a_read_of_named_keys_holds_exactly_the_whole_reads_facts_of_those_keys(
    reader: ReadPath,
) -> None:
    # A context naming its keys and asking no evidence reads only those keys: their facts,
    # disputes and cited episodes are the ones the whole subject's read holds for them.
    _mira(reader)
    reader.declare(
        "nickname", "What the person likes to be called", on_equal_start="source_precedence"
    )
    reader.record("n1", "2026-06-01T09:40:00Z", "Call her Mimi.")
    reader.record("n2", "2026-06-01T09:40:00Z", "Call her Ra.")
    reader.assert_value("n1", "mira", "nickname", "Mimi", "2026-06-01T09:40:00Z")
    assert reader.assert_value("n2", "mira", "nickname", "Ra", "2026-06-01T09:40:00Z").status == (
        "conflict"
    )
    reader.tick()

    def both(snapshot: ReadSnapshot, names: list[str]) -> tuple[SubjectMemory, SubjectMemory]:
        now = snapshot.now
        whole = snapshot.subject_memory("mira", valid_at=now, known_at=now)
        named = snapshot.subject_memory(
            "mira", valid_at=now, known_at=now, history=False, attributes=names
        )
        return whole, named

    for names in (["nickname"], ["passport_deadline", "nickname"], ["unknown_key"]):
        whole, named = reader.store.snapshots.read(
            reader.tenant, functools.partial(both, names=names)
        )
        assert named.facts == [fact for fact in whole.facts if fact.attribute in names], names
        cited = {fact.source_episode_id for fact in named.facts} | {
            challenger.source_episode_id for fact in named.facts for challenger in fact.challengers
        }
        assert named.cited(names) == whole.cited(names) == cited, names
        assert (named.believed, named.conflicts) == ([], [])
    [nickname] = [fact for fact in whole.facts if fact.attribute == "nickname"]
    assert nickname.disputed is True

    def named_with_history(snapshot: ReadSnapshot) -> SubjectMemory:
        now = snapshot.now
        return snapshot.subject_memory("mira", valid_at=now, known_at=now, attributes=["nickname"])

    with pytest.raises(ValueError, match="history"):
        reader.store.snapshots.read(reader.tenant, named_with_history)
