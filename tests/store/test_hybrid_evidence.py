"""Lexical and hybrid evidence: an exact token is found by its words, under the same walls.

Everything runs on the real embedding model and the embedded PostgreSQL: the vector path's
miss is the model's own, and the lexical path is the migrated ``episodes.text_search`` column
and its GIN index.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from retrieval.search.embeddings import Embedder
from store.contract.reads import DEFAULT_SEARCH_MODE, SearchMode, SearchPlan
from store.db.clock import ManualClock
from store.db.database import make_pool
from store.episodes.evidence import SearchScope
from store.episodes.lexical import TextQuery
from tests.conftest import ts
from tests.read_helpers import ReadPath, read_path
from tests.store.test_row_security import remove_tenant_filters

MODES: tuple[SearchMode, ...] = ("vector", "lexical", "hybrid")
WAREHOUSES = ("Lisbon", "Osaka", "Nairobi", "Toronto", "Krakow", "Austin")
NAMES = ("Dana Kim", "Omar Haddad", "Priya Patel", "Sven Eriksen", "Rosa Torres", "Hugo Vogel")
ASKED = "ORD-48213"
ASKED_TEXT = f"Order {ASKED} for Dana Kim left the Osaka warehouse on Tuesday, tracking by email."
QUESTION = f"Where is order {ASKED} now?"


def order_confirmations(count: int, *, seed: int = 7, **extra: object) -> list[dict[str, object]]:
    """``count`` confirmations of other orders, each a near-duplicate of the asked one's."""
    rng = random.Random(seed)
    numbers = [n for n in rng.sample(range(10_000, 99_999), count + 1) if n != 48213][:count]
    episodes = []
    for number in numbers:
        text = (
            f"Order ORD-{number} for {rng.choice(NAMES)} left the {rng.choice(WAREHOUSES)}"
            f" warehouse on {rng.choice(('Monday', 'Tuesday', 'Friday'))}, tracking by email."
        )
        episodes.append(
            {"id": f"o{number}", "occurred_at": "2026-05-01T09:00:00Z", "text": text, **extra}
        )
    return episodes


@pytest.fixture
def reader(pool: ConnectionPool, clock: ManualClock, embedder: Embedder) -> ReadPath:
    """A tenant of this test's own, with a store that embeds what it records."""
    return read_path(pool, clock, embedder)


@pytest.fixture
def owner_pool(conninfo: str) -> Iterator[ConnectionPool]:
    """A pool working as the tables' owner, whom row-level security does not hold."""
    with make_pool(conninfo, max_size=2, role=None) as opened:
        opened.wait()
        yield opened


def _orders(reader: ReadPath) -> None:
    """The asked order among 60 near-duplicates, recorded at 2026-05-02."""
    reader.at("2026-05-02T00:00:00Z")
    asked = {"id": "asked", "occurred_at": "2026-05-01T10:00:00Z", "text": ASKED_TEXT}
    reader.record_batch([*order_confirmations(60), asked])


def _limited_search(
    reader: ReadPath,
    text: str,
    mode: SearchMode,
    *,
    limit: int,
    k: int,
    scope: SearchScope | None = None,
) -> tuple[list[str], SearchPlan]:
    """The ids and plan of a search of ``text`` (also its vector) with the exact limit
    ``limit``, through the store's snapshot."""
    query = reader.embedder.embed([text])[0]
    hits, plan = reader.store.snapshots.read(
        reader.tenant,
        lambda snapshot: snapshot.search_evidence(
            query,
            model=reader.embedder.model_id,
            dimensions=reader.embedder.dimensions,
            k=k,
            exact_limit=limit,
            scope=scope or SearchScope(),
            words=TextQuery(text, mode),
        ),
    )
    return [hit.episode_id for hit in hits], plan


def _ids(reader: ReadPath, query: str, mode: SearchMode, k: int = 5) -> list[str]:
    return [hit.episode_id for hit in reader.search(query, k=k, mode=mode).results]


def test_an_order_number_the_vector_path_misses_is_found_by_its_words(reader: ReadPath) -> None:
    _orders(reader)

    found = {mode: _ids(reader, QUESTION, mode) for mode in MODES}

    assert "asked" not in found["vector"]  # among near-duplicates the number barely moves it
    assert found["lexical"][0] == "asked"
    assert found["lexical"] == ["asked"]  # the others share only commoner words with it
    assert "asked" in found["hybrid"][:2]
    # Hybrid keeps the vector path's best: its first hit is one of the two fused first.
    assert found["vector"][0] in found["hybrid"][:2]
    result = reader.search(QUESTION, k=5, mode="lexical")
    assert result.search == SearchPlan(
        method="full_text", scope_size=61, scope_size_capped=False, mode="lexical"
    )
    assert reader.search(QUESTION, k=5).search.mode == DEFAULT_SEARCH_MODE


def test_past_the_exact_limit_the_hybrid_leg_walks_the_index_and_finds_the_same(
    reader: ReadPath,
) -> None:
    _orders(reader)

    def search(mode: SearchMode, limit: int) -> tuple[list[str], SearchPlan]:
        return _limited_search(reader, QUESTION, mode, limit=limit, k=5)

    walks: tuple[tuple[SearchMode, Any], ...] = (("hybrid", "hnsw"), ("lexical", "full_text"))
    for mode, method in walks:
        exact, _ = search(mode, 10_000)
        walked, plan = search(mode, 10)
        assert plan == SearchPlan(
            method=method, scope_size=11, scope_size_capped=True, mode=mode
        ), mode
        assert "asked" in walked[:2], mode
        assert walked == exact, mode  # this small store's index finds the exact neighbours


def test_a_rare_surname_and_an_email_are_found_whole(reader: ReadPath) -> None:
    _orders(reader)
    reader.record("surname", "2026-05-01T11:00:00Z", "Ms Wojciechowska called about a refund.")
    reader.record("mail", "2026-05-01T12:00:00Z", "Reply went to dana.kim42@inbox.test today.")

    assert _ids(reader, "what did Wojciechowska want?", "lexical") == ["surname"]
    assert _ids(reader, "who wrote from dana.kim42@inbox.test", "lexical") == ["mail"]
    assert "surname" in _ids(reader, "what did Wojciechowska want?", "hybrid", k=3)


def test_words_alone_find_nothing_when_no_episode_holds_them(reader: ReadPath) -> None:
    _orders(reader)

    assert _ids(reader, "zzyzx quux", "lexical") == []
    # Hybrid then is the vector path's order.
    assert _ids(reader, "zzyzx quux", "hybrid") == _ids(reader, "zzyzx quux", "vector")


def test_the_lexical_path_keeps_to_the_scope(reader: ReadPath) -> None:
    _orders(reader)
    reader.record("other", "2026-05-03T10:00:00Z", f"{ASKED} again, per Omar.", session_id="s2")

    # Both hold every word asked, as much as each other: a tie, in id order.
    assert _ids(reader, ASKED, "lexical") == ["asked", "other"]
    in_session = reader.search(ASKED, k=5, mode="lexical", session_id="s2").results
    assert [hit.episode_id for hit in in_session] == ["other"]
    before = reader.search(ASKED, k=5, mode="hybrid", occurred_to=ts("2026-05-02T00:00:00Z"))
    assert "other" not in [hit.episode_id for hit in before.results]
    assert "asked" in [hit.episode_id for hit in before.results]


def test_an_episode_recorded_after_known_at_is_no_lexical_hit(reader: ReadPath) -> None:
    reader.at("2026-05-02T00:00:00Z")
    reader.record_batch(order_confirmations(20))
    reader.at("2026-05-10T00:00:00Z")
    reader.record("asked", "2026-05-01T10:00:00Z", ASKED_TEXT)  # occurred early, recorded late
    reader.at("2026-05-20T00:00:00Z")

    for mode in ("lexical", "hybrid"):
        then = reader.context(QUESTION, known_at=ts("2026-05-05T00:00:00Z"), mode=mode)
        now = reader.context(QUESTION, mode=mode)
        assert "asked" not in [item.episode_id for item in then.evidence], mode
        assert [item.episode_id for item in now.evidence][:1] == ["asked"], mode


def test_tenants_never_see_each_others_words(pool: ConnectionPool, reader: ReadPath) -> None:
    _orders(reader)
    other = read_path(pool, reader.clock, reader.embedder)
    other.record("theirs", "2026-05-01T10:00:00Z", f"Order {ASKED} is ours, not theirs.")

    assert _ids(other, QUESTION, "lexical") == ["theirs"]
    assert "asked" not in _ids(other, QUESTION, "hybrid", k=50)
    assert "theirs" not in _ids(reader, QUESTION, "hybrid", k=50)


def test_with_the_tenant_filters_removed_the_wall_still_holds_the_words(
    reader: ReadPath,
    clock: ManualClock,
    embedder: Embedder,
    owner_pool: ConnectionPool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _orders(reader)
    other = ReadPath(reader.store, reader.reader, clock, embedder, f"{reader.tenant}-walled")
    reader.store.admin.create_tenant(other.tenant)
    other.record("own", "2026-05-01T10:00:00Z", "Nothing about orders here.")
    removed = remove_tenant_filters(monkeypatch)

    for mode in ("lexical", "hybrid"):
        assert "asked" not in _ids(other, QUESTION, mode, k=50), mode
    assert removed[0] > 0  # the statements ran without the application's tenant filters

    # As the tables' owner, whom no policy holds, the same search reaches the other tenant.
    owner = read_path(owner_pool, clock, embedder)
    leaked = ReadPath(owner.store, owner.reader, clock, embedder, other.tenant)
    assert "asked" in _ids(leaked, QUESTION, "lexical", k=50)


def test_a_lexical_hit_stating_a_superseded_value_is_marked_as_a_vector_hit_is(
    reader: ReadPath,
) -> None:
    reader.declare("ship_to", "The city an order ships to", aliases=["destination"])
    reader.at("2026-05-01T00:00:00Z")
    # e1, the old value's source, names no city: the note below is the one line stating it.
    reader.record("e1", "2026-04-30T09:00:00Z", "Acme picked a delivery city for its orders.")
    reader.record("e2", "2026-05-01T09:00:00Z", f"Order {ASKED} now ships to Quito.")
    reader.record_batch(order_confirmations(40, subjects=["acme"]))
    assert reader.assert_value("e1", "acme", "ship_to", "Porto", "2026-04-30T09:00:00Z").status == (
        "written"
    )
    reader.at("2026-05-02T00:00:00Z")
    assert reader.assert_value("e2", "acme", "ship_to", "Quito", "2026-05-01T09:00:00Z").status == (
        "written"
    )
    # A note that is no fact's source, found by the order number alone, with the old city.
    reader.record(
        "note", "2026-05-01T12:00:00Z", f"Reminder: {ASKED} to Porto, gate 4.", subjects=["acme"]
    )
    question = f"Where does {ASKED} ship?"

    lexical = reader.context(question, subject="acme", attributes=["ship_to"], mode="lexical")
    vector = reader.context(question, subject="acme", attributes=["ship_to"], mode="vector")
    # The note's own words, asked by vector: there the vector path finds it.
    echoed = reader.context(
        reader.texts["note"], subject="acme", attributes=["ship_to"], mode="vector"
    )

    assert [fact.value for fact in lexical.facts] == ["Quito"]
    assert "note" not in [item.episode_id for item in vector.evidence]  # a lexical-only hit
    [note] = [item for item in lexical.evidence if item.episode_id == "note"]
    assert note.superseded
    assert re.search(
        r"^\[note\] superseded \(from 2026-04-30 until 2026-05-01\): ", lexical.block, re.M
    )
    # Judged by the same rule as when the vector path found it: the same line, the same marks.
    [found] = [item for item in echoed.evidence if item.episode_id == "note"]
    assert (note.snippet, note.superseded, note.mark) == (
        found.snippet,
        found.superseded,
        found.mark,
    )
    line = [text for text in lexical.block.splitlines() if text.startswith("[note]")]
    assert line == [text for text in echoed.block.splitlines() if text.startswith("[note]")]


def test_a_subjects_words_rank_the_same_read_in_memory_as_looked_up_per_word(
    reader: ReadPath, owner_pool: ConnectionPool
) -> None:
    # A subject's episodes are matched against its words in memory when they number at most
    # the exact limit, and per word through the GIN index when more do. Episodes without a
    # vector (recorded before a re-embed) are in the lexical scope but not in the statement's
    # count: 30 of the subject's 36 are left without, so a limit of 10 counts 6 vectors (the
    # first statement runs) and still finds 11 episodes or more: the index path.
    reader.at("2026-05-02T00:00:00Z")
    reader.record_batch(order_confirmations(35, subjects=["acme"]))
    reader.record("asked", "2026-05-01T10:00:00Z", ASKED_TEXT, subjects=["acme"])
    reader.record_batch(order_confirmations(20, seed=8))  # other subjects' words
    with owner_pool.connection() as conn:
        rows = conn.execute(
            "SELECT episode_id FROM episode_subjects WHERE tenant_id = %s AND subject = 'acme'",
            (reader.tenant,),
        ).fetchall()
        conn.execute(
            "DELETE FROM episode_vectors WHERE tenant_id = %s AND episode_id IN ("
            " SELECT episode_id FROM episode_subjects WHERE tenant_id = %s AND subject = 'acme'"
            " AND episode_id <> 'asked' ORDER BY episode_id LIMIT 30)",
            (reader.tenant, reader.tenant),
        )

    def search(text: str, mode: SearchMode, limit: int) -> tuple[list[str], SearchPlan]:
        scope = SearchScope(subject="acme")
        return _limited_search(reader, text, mode, limit=limit, k=8, scope=scope)

    questions = (QUESTION, "Osaka warehouse Tuesday", "tracking by email", "zzyzx", "Order")
    for text in questions:
        for mode in ("lexical", "hybrid"):
            in_memory, plan = search(text, mode, 10_000)
            per_word, walked = search(text, mode, 10)
            assert per_word == in_memory, (text, mode)
            assert plan.scope_size == walked.scope_size == 6, (text, mode)
            assert not walked.scope_size_capped, (text, mode)
    found, _ = search(QUESTION, "lexical", 10_000)
    assert found[:1] == ["asked"]
    assert len(rows) == 36
    assert set(search("Osaka warehouse Tuesday", "lexical", 10_000)[0]) <= {row[0] for row in rows}
