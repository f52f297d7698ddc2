"""A text longer than the model reads is embedded from its start, and its episode says so.

all-MiniLM-L6-v2 reads 256 tokens, special tokens included. A longer episode's vector is that
of its first 254 word pieces; ``embedding_truncated`` marks the episode, recorded over HTTP or
imported and embedded after; the tokenizer's warning about long sequences never fires.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import numpy as np
import pytest
from psycopg_pool import ConnectionPool

from retrieval.search.embeddings import Embedder
from store.db.clock import ManualClock
from store.service import MemoryStore
from tests.conftest import ts
from tests.http_helpers import Client, make_tenant, record
from tests.store.test_import import episode_line, import_text, new_tenant

READ = 256 - 2
"""Word pieces the model reads of a text: its input limit less the two special tokens."""


def words(count: int) -> str:
    """A text of ``count`` word pieces ("word" is one)."""
    return " ".join(["word"] * count)


@pytest.fixture
def tokenizer_warnings(embedder: Embedder) -> Iterator[list[logging.LogRecord]]:
    """What the tokenizer warns while the test runs (transformers' log does not propagate)."""
    tokenizer = embedder.model.tokenizer
    # It warns once per tokenizer, and an earlier test of the session may have made it.
    tokenizer.deprecation_warnings.pop("sequence-length-is-longer-than-the-specified-maximum", None)
    records: list[logging.LogRecord] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Collect(logging.WARNING)
    transformers_log = logging.getLogger("transformers")
    transformers_log.addHandler(handler)
    try:
        yield records
    finally:
        transformers_log.removeHandler(handler)


def truncation(store: MemoryStore, tenant: str) -> dict[str, bool]:
    """``embedding_truncated`` of the episodes ``short`` and ``long``."""
    return {
        name: store.episodes.get(tenant, name).embedding_truncated for name in ("short", "long")
    }


def test_texts_past_the_models_input_are_named_and_embedded_from_their_start(
    embedder: Embedder, tokenizer_warnings: list[logging.LogRecord]
) -> None:
    assert embedder.max_tokens == 256
    texts = [words(READ), words(READ + 1), words(READ) + " and then the rest, which is lost"]
    assert embedder.truncated(texts) == [False, True, True]
    assert embedder.truncated([]) == []
    vectors = embedder.embed(texts)
    assert np.allclose(vectors[0], vectors[2], atol=1e-6)
    # A context block's budget counts any length: that is no mistake to warn of.
    assert embedder.count_tokens(words(3 * READ)) == 3 * READ
    assert tokenizer_warnings == []


def test_a_long_episode_says_its_embedding_was_truncated_and_a_short_one_does_not(
    http: Client, tokenizer_warnings: list[logging.LogRecord]
) -> None:
    tenant = make_tenant(http, "long")
    long_text = "Mira wrote a long letter. " + words(3 * READ)
    recorded = {
        "short": record(http, tenant.headers, "short", "Mira prefers concise answers."),
        "long": record(http, tenant.headers, "long", long_text),
    }
    read = {
        name: http.get(f"/v1/episodes/{name}", headers=tenant.headers).json() for name in recorded
    }
    assert {name: episode["embedding_truncated"] for name, episode in recorded.items()} == {
        "short": False,
        "long": True,
    }
    assert {name: episode["embedding_truncated"] for name, episode in read.items()} == {
        "short": False,
        "long": True,
    }
    assert [record.getMessage() for record in tokenizer_warnings] == []


def test_imported_episodes_embedded_after_say_which_were_truncated(
    pool: ConnectionPool, embedder: Embedder, tokenizer_warnings: list[logging.LogRecord]
) -> None:
    store = MemoryStore(pool, clock=ManualClock(ts("2026-06-10T00:00:00Z")), embedder=embedder)
    tenant = new_tenant(store, "imported")
    lines = [
        episode_line("short", "2026-06-01T09:00:00Z"),
        episode_line("long", "2026-06-01T09:00:00Z", text=words(2 * READ)),
    ]
    outcome = store.episodes.import_lines(import_text(tenant, lines))
    before = truncation(store, tenant)
    assert store.episodes.embed(outcome.recorded) == 2
    assert (before, truncation(store, tenant)) == (
        {"short": False, "long": False},
        {"short": False, "long": True},
    )
    assert tokenizer_warnings == []
