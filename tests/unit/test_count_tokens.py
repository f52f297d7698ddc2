"""Counting a block's tokens with the tokenizer's own engine gives what the model's tokenizer
gives, from the first count on: the engine a loaded model hands over may still cut and pad
every text to 128 tokens."""

from __future__ import annotations

import copy

from retrieval.search.embeddings import Embedder

TEXTS = [
    "",
    "Mira's home city is Lisbon (since 2026-05-01, e1).",
    "héllo wörld, 東京 and 🙂 don't count alike",
    " ".join(["word"] * 300),
    "Where does Mira live? " * 60,
]


def test_a_fresh_embedder_counts_as_the_models_tokenizer_does() -> None:
    embedder = Embedder().load()
    tokenizer = copy.deepcopy(embedder.model.tokenizer)

    def expected(text: str) -> int:
        return len(tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])

    # The long texts first: a count cut at 128 tokens would show at once.
    assert [embedder.count_tokens(text) for text in reversed(TEXTS)] == [
        expected(text) for text in reversed(TEXTS)
    ]
    assert embedder.count_tokens(TEXTS[3]) == 300
    # Judging truncation for the encoder leaves the counts as they were.
    assert embedder.truncated(TEXTS) == [False, False, False, True, True]
    assert [embedder.count_tokens(text) for text in TEXTS] == [expected(t) for t in TEXTS]
