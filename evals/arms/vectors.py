"""The embedding model shared by an evaluation's arms, with the known texts embedded once."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

import numpy as np

from retrieval.search.embeddings import Embedder, Vectors


class SharedVectors(Embedder):
    """The loaded model, with the vectors of known texts embedded in one batch beforehand.

    Loads record every episode once per system; one batch up front gives them the model's own
    vectors several times faster. Only those texts are cached: a question is embedded by the
    model every time it is asked, so latencies include it.
    """

    def __init__(self, base: Embedder, texts: Sequence[str]) -> None:
        super().__init__(base.source, torch_threads=base.torch_threads)
        self.base = base.load()
        self.model_id = base.model_id
        unique = list(dict.fromkeys(texts))
        self.vectors = dict(zip(unique, base.embed(unique), strict=True))

    def load(self) -> SharedVectors:
        """The base model is loaded already."""
        return self

    @property
    def loaded(self) -> bool:
        """Always: the base model was loaded on construction."""
        return self.base.loaded

    @property
    def model(self) -> Any:
        """The base's model."""
        return self.base.model

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Cached vectors for known texts, the model's for the rest (not cached)."""
        if not texts or any(text not in self.vectors for text in texts):
            return self.base.embed(texts)
        return np.stack([self.vectors[text] for text in texts])

    def embed_later(self, texts: Sequence[str]) -> Future[Vectors]:
        """As ``embed``, on the base's encoder thread: the one thread that runs the model."""
        if not texts or any(text not in self.vectors for text in texts):
            return self.base.embed_later(texts)
        done: Future[Vectors] = Future()
        done.set_result(self.embed(texts))
        return done

    def count_tokens(self, text: str) -> int:
        """The base model's token count."""
        return self.base.count_tokens(text)
