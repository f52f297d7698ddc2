"""``SGAMStore`` against the real app: LangGraph's ``BaseStore`` as its docstrings describe it.

LangGraph ships no conformance suite for stores; these cases are written from ``BaseStore``'s
documented behaviour (put then get, overwrite, delete, search with a query and a filter,
list_namespaces with prefix, suffix and max_depth, batches mixing ops, the async methods),
and from what SGAM adds: every put goes through the write path, a delete expires and never
erases, and the tenant is the key's. Server and store both run on the wall clock.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    PutOp,
    SearchItem,
    SearchOp,
)
from litestar import Litestar
from litestar.testing import TestClient

from server.client import SGAMClient
from server.client.langchain import PutRefused, SGAMStore
from tests.langchain_helpers import async_twin, record_mira, tenant_client


@pytest.fixture
def client(http: TestClient[Litestar]) -> SGAMClient:
    """The client of a fresh tenant."""
    return tenant_client(http)


@pytest.fixture
def store(client: SGAMClient) -> SGAMStore:
    """The LangGraph store on that tenant."""
    return SGAMStore(client)


@pytest.fixture
def anyio_backend() -> str:
    """Async tests run on asyncio."""
    return "asyncio"


def current_versions(client: SGAMClient, subject: str, attribute: str) -> list[tuple[object, str]]:
    """The key's versions still believed (value and status), in history order."""
    return [
        (version.value, version.status)
        for version in client.history(subject, attribute)
        if version.retired_at is None
    ]


def test_put_then_get_returns_the_item_as_put(store: SGAMStore) -> None:
    before = datetime.now(UTC)
    store.put(("users", "u1"), "preferences", {"food": "pizza", "tone": "short"})
    item = store.get(("users", "u1"), "preferences")

    assert isinstance(item, Item)
    assert (item.namespace, item.key, item.value) == (
        ("users", "u1"),
        "preferences",
        {"food": "pizza", "tone": "short"},
    )
    assert before <= item.created_at == item.updated_at <= datetime.now(UTC)
    assert store.get(("users", "u1"), "missing") is None
    assert store.get(("users", "nobody"), "preferences") is None


def test_a_put_goes_through_the_write_path_as_an_episode_and_a_fact(
    store: SGAMStore, client: SGAMClient
) -> None:
    store.put(("users", "u1"), "preferences", {"tone": "short", "food": "pizza"})

    fact = client.fact("users.u1", "preferences")
    assert (fact.value, fact.status, fact.source_kind, fact.evidence_verified) == (
        {"food": "pizza", "tone": "short"},
        "current",
        "event",
        True,
    )
    episode = client.episode(fact.source_episode_id)
    assert (episode.text, episode.subjects, episode.kind, episode.metadata) == (
        '{"food":"pizza","tone":"short"}',
        ["users.u1"],
        "event",
        {"langgraph": {"op": "put", "namespace": ["users", "u1"], "key": "preferences"}},
    )
    [declared] = [one for one in client.attributes().attributes if one.attribute == "preferences"]
    assert declared.value_type == "json"


def test_a_put_indexes_the_fields_it_names(store: SGAMStore, client: SGAMClient) -> None:
    store.put(("notes",), "n1", {"text": "Renew the passport", "tags": ["travel"]}, index=["text"])
    default_fields = SGAMStore(client, index_fields=["tags[*]", "text"])
    default_fields.put(("notes",), "n2", {"text": "Call the bank", "tags": ["money", "home"]})

    texts = [
        client.episode(client.fact("notes", key).source_episode_id).text for key in ("n1", "n2")
    ]
    assert texts == ["Renew the passport", "money\nhome\nCall the bank"]


def test_an_overwrite_supersedes_the_value_and_keeps_the_old_one(
    store: SGAMStore, client: SGAMClient
) -> None:
    store.put(("users", "u2"), "preferences", {"food": "pizza"})
    first = store.get(("users", "u2"), "preferences")
    store.put(("users", "u2"), "preferences", {"food": "sushi"})
    second = store.get(("users", "u2"), "preferences")

    assert first is not None
    assert second is not None
    assert (first.value, second.value) == ({"food": "pizza"}, {"food": "sushi"})
    assert second.updated_at > first.updated_at
    assert current_versions(client, "users.u2", "preferences") == [
        ({"food": "pizza"}, "past"),
        ({"food": "sushi"}, "current"),
    ]
    old, new = (
        client.fact("users.u2", "preferences", valid_at=item.updated_at) for item in (first, second)
    )
    assert new.supersedes == old.fact_id


def test_a_delete_expires_the_item_and_never_erases_it(
    store: SGAMStore, client: SGAMClient
) -> None:
    store.put(("users", "u3"), "plan", {"tier": "gold"})
    store.delete(("users", "u3"), "plan")

    assert store.get(("users", "u3"), "plan") is None
    assert store.search(("users", "u3")) == []
    [(value, status)] = current_versions(client, "users.u3", "plan")
    assert (value, status) == ({"tier": "gold"}, "past")
    [ended] = [one for one in client.history("users.u3", "plan") if one.retired_at is None]
    assert ended.ended_by_kind == "expiry"

    store.put(("users", "u3"), "plan", {"tier": "silver"})
    again = store.get(("users", "u3"), "plan")
    assert again is not None
    assert again.value == {"tier": "silver"}


def test_deleting_what_was_never_put_changes_nothing(store: SGAMStore, client: SGAMClient) -> None:
    store.put(("users", "u4"), "plan", {"tier": "gold"})
    store.delete(("users", "u4"), "never")
    store.delete(("nobody",), "plan")

    [put] = client.export_subject("users.u4").episodes
    assert put.metadata["langgraph"]["op"] == "put"
    assert client.subjects().subjects == ["users.u4"]


def test_search_filters_by_value_and_orders_the_most_recent_first(store: SGAMStore) -> None:
    store.put(("docs",), "d1", {"type": "article", "rank": 3})
    store.put(("docs",), "d2", {"type": "note", "rank": 5})
    store.put(("docs", "drafts"), "d3", {"type": "article", "rank": 9})
    store.put(("other",), "d4", {"type": "article", "rank": 1})

    def found(*prefix: str, **options: object) -> list[tuple[tuple[str, ...], str]]:
        return [(item.namespace, item.key) for item in store.search(prefix, **options)]  # type: ignore[arg-type]

    assert found("docs") == [(("docs", "drafts"), "d3"), (("docs",), "d2"), (("docs",), "d1")]
    assert found("docs", filter={"type": "article"}) == [
        (("docs", "drafts"), "d3"),
        (("docs",), "d1"),
    ]
    assert found("docs", filter={"rank": {"$gt": 3, "$lt": 9}}) == [(("docs",), "d2")]
    assert found("docs", filter={"type": {"$ne": "note"}, "rank": {"$lte": 3}}) == [
        (("docs",), "d1")
    ]
    assert found("docs", limit=1, offset=1) == [(("docs",), "d2")]
    assert found("docs", "drafts") == [(("docs", "drafts"), "d3")]
    assert found() == [
        (("other",), "d4"),
        (("docs", "drafts"), "d3"),
        (("docs",), "d2"),
        (("docs",), "d1"),
    ]
    assert all(item.score is None for item in store.search(("docs",)))


def test_search_with_a_query_ranks_the_items_by_their_episodes_similarity(
    store: SGAMStore,
) -> None:
    namespace = ("memories", "u1")
    store.put(namespace, "hobby", {"text": "I love hiking in the mountains every weekend"})
    store.put(namespace, "food", {"text": "My favourite food is spicy ramen with noodles"})
    store.put(namespace, "work", {"text": "I work as a nurse on night shifts"})

    results = store.search(("memories",), query="What does the user like to eat?")

    assert results[0].key == "food"
    scores = [item.score for item in results]
    assert all(isinstance(score, float) for score in scores)
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    [only] = store.search(
        namespace, query="night shifts at the hospital", filter={"text": {"$ne": ""}}, limit=1
    )
    assert only.key == "work"


def test_list_namespaces_as_langgraph_documents_it(store: SGAMStore) -> None:
    namespaces = [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
        ("a", "c", "f"),
    ]
    store.batch([PutOp(namespace, "k", {"n": 1}) for namespace in namespaces])

    assert store.list_namespaces() == sorted(namespaces)
    assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a",), suffix=("d", "*")) == [
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
    ]
    assert store.list_namespaces(max_depth=2) == [("a", "b"), ("a", "c")]
    assert store.list_namespaces(limit=2, offset=1) == [("a", "b", "d", "e"), ("a", "b", "d", "i")]
    assert store.list_namespaces(prefix=("z",)) == []


def test_a_batch_reads_before_it_writes_and_the_last_write_of_an_item_wins(
    store: SGAMStore, client: SGAMClient
) -> None:
    namespace = ("batch", "u1")
    store.put(namespace, "old", {"v": 1})

    results = store.batch(
        [
            PutOp(namespace, "new", {"v": 2}),
            GetOp(namespace, "new"),
            GetOp(namespace, "old"),
            SearchOp(namespace),
            ListNamespacesOp(),
            PutOp(namespace, "old", None),
            PutOp(namespace, "twice", {"v": 3}),
            PutOp(namespace, "twice", {"v": 4}),
        ]
    )

    put, new, old, searched, listed, *writes = results
    assert (put, new, writes) == (None, None, [None, None, None])
    assert isinstance(old, Item)
    assert old.value == {"v": 1}
    assert searched == [SearchItem(namespace, "old", {"v": 1}, old.created_at, old.updated_at)]
    assert listed == [namespace]
    after = {key: store.get(namespace, key) for key in ("new", "old", "twice")}
    assert {key: item.value if item else None for key, item in after.items()} == {
        "new": {"v": 2},
        "old": None,
        "twice": {"v": 4},
    }
    assert current_versions(client, "batch.u1", "twice") == [({"v": 4}, "current")]


def test_a_key_the_tenant_declared_holds_its_typed_value(
    store: SGAMStore, client: SGAMClient
) -> None:
    client.declare_attribute("passport_deadline", "date")
    recorded = record_mira(
        client,
        "e1",
        "2026-06-01T09:00:00Z",
        "Her passport deadline is 2026-07-15.",
        attribute="passport_deadline",
        evidence="Her passport deadline is 2026-07-15.",
        value="2026-07-15",
    )
    assert recorded.status == "written"
    first = store.get(("mira",), "passport_deadline")
    assert first is not None
    assert first.value == {"value": "2026-07-15"}

    store.put(("mira",), "passport_deadline", {"value": "2026-06-30"})
    assert client.fact("mira", "passport_deadline").value == "2026-06-30"
    second = store.get(("mira",), "passport_deadline")
    assert second is not None
    assert second.value == {"value": "2026-06-30"}

    with pytest.raises(ValueError, match="attribute of type date"):
        store.put(("mira",), "passport_deadline", {"date": "2026-06-30"})
    with pytest.raises(PutRefused, match="invalid"):
        store.put(("mira",), "passport_deadline", {"value": "soon"})


def test_the_tenant_is_the_keys_and_another_sees_nothing(
    http: TestClient[Litestar], store: SGAMStore
) -> None:
    store.put(("users", "u5"), "secret", {"pin": "1234"})
    other = SGAMStore(tenant_client(http))

    assert other.get(("users", "u5"), "secret") is None
    assert other.search(("users",)) == []
    assert other.list_namespaces() == []


def test_what_sgam_cannot_address_is_refused_before_any_call(store: SGAMStore) -> None:
    with pytest.raises(InvalidNamespaceError, match="A-Z a-z 0-9"):
        store.put(("has space",), "k", {"a": 1})
    with pytest.raises(InvalidNamespaceError, match="periods"):
        store.get(("a.b",), "k")
    with pytest.raises(ValueError, match="key 'bad key'"):
        store.put(("ok",), "bad key", {"a": 1})
    with pytest.raises(NotImplementedError, match="TTL"):
        store.put(("ok",), "k", {"a": 1}, ttl=5)
    assert store.list_namespaces() == []


@pytest.mark.anyio
async def test_the_async_methods_answer_as_the_blocking_ones(
    http: TestClient[Litestar], client: SGAMClient
) -> None:
    namespace = ("async", "u1")
    async with async_twin(http, client) as async_client:
        store = SGAMStore(client, async_client=async_client)
        await store.aput(namespace, "food", {"text": "My favourite food is spicy ramen"})
        await store.aput(namespace, "hobby", {"text": "I love hiking in the mountains"})
        item = await store.aget(namespace, "food")
        assert item is not None
        assert item.value == {"text": "My favourite food is spicy ramen"}
        found = await store.asearch(("async",), query="What does the user like to eat?")
        assert found[0].key == "food"
        assert await store.alist_namespaces(prefix=("async",)) == [namespace]
        await store.adelete(namespace, "hobby")
        assert await store.aget(namespace, "hobby") is None
        results = await store.abatch(
            [GetOp(namespace, "food"), PutOp(namespace, "food", {"text": "Ramen no more"})]
        )
        assert isinstance(results[0], Item)
        assert results[0].value == item.value
        assert results[1] is None

    threaded = SGAMStore(client)  # no async client: the blocking one, on a thread
    latest = await threaded.aget(namespace, "food")
    assert latest is not None
    assert latest.value == {"text": "Ramen no more"}
    assert await threaded.alist_namespaces() == [namespace]
