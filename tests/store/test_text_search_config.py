"""The episodes' full-text documents follow SGAM_TEXT_SEARCH_CONFIG, which ``migrate`` applies."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from retrieval.reader import Reader
from retrieval.search.embeddings import Embedder
from store.contract.reads import SearchRequest
from store.db.database import make_pool, temporary_database
from store.db.migrate import migrate
from store.db.text_search import DEFAULT_TEXT_SEARCH_CONFIG, current_config
from store.errors import DatabaseUnavailable
from store.service import MemoryStore


@pytest.fixture
def blank(server_conninfo: str) -> Iterator[str]:
    """A database of the test's own, not yet migrated."""
    with temporary_database(server_conninfo) as info:
        yield info


def _config(conninfo: str) -> str | None:
    with psycopg.connect(conninfo) as conn:
        return current_config(conn)


def _record(conninfo: str, embedder: Embedder) -> None:
    with make_pool(conninfo, max_size=1) as pool:
        pool.wait()
        store = MemoryStore(pool, embedder=embedder)
        store.admin.create_tenant("t")
        episode = {"id": "e1", "occurred_at": "2026-05-01T00:00:00Z", "text": "Two orders left."}
        store.episodes.record("t", episode)


def _found(conninfo: str, embedder: Embedder, config: str, query: str) -> list[str]:
    """The lexical hits for ``query`` of a reader that parses it with ``config``."""
    with make_pool(conninfo, max_size=1) as pool:
        pool.wait()
        reader = Reader(MemoryStore(pool, embedder=embedder), embedder, text_search_config=config)
        found = reader.search("t", SearchRequest(query=query, mode="lexical"))
    return [hit.episode_id for hit in found.results]


def test_the_documents_are_simple_by_default_and_follow_the_setting(
    blank: str, embedder: Embedder
) -> None:
    with psycopg.connect(blank) as conn:
        migrate(conn)
    assert _config(blank) == DEFAULT_TEXT_SEARCH_CONFIG == "simple"
    _record(blank, embedder)
    # "simple" keeps words as they are: "order" is not "orders".
    assert _found(blank, embedder, "simple", "order") == []
    assert _found(blank, embedder, "simple", "orders") == ["e1"]

    with psycopg.connect(blank) as conn:
        migrate(conn, text_search_config="english")
    assert _config(blank) == "english"
    # The stored documents were rebuilt: English stems meet.
    assert _found(blank, embedder, "english", "order") == ["e1"]

    with psycopg.connect(blank) as conn:
        migrate(conn)  # no setting given: left as it is
    assert _config(blank) == "english"


def test_an_unknown_configuration_is_refused_by_name(blank: str) -> None:
    with psycopg.connect(blank) as conn:
        migrate(conn)
        with pytest.raises(DatabaseUnavailable, match="SGAM_TEXT_SEARCH_CONFIG 'klingon'"):
            migrate(conn, text_search_config="klingon")
    assert _config(blank) == "simple"
