"""The encoder in a process of its own: the model runs there, and torch never loads here.

A server process starts one child (``EncoderProcess.start``), a fresh interpreter running
``main`` below (not a copy of the server, nor its main module re-run): it lowers its own priority by
``nice`` before anything else, limits torch to ``torch_threads`` and loads the model, then
answers the model's facts (its vector length, its input limit, its tokenizer, so tokens are
counted here). From then on each batch's texts go down a pipe and come back as rows. Queuing
and batching stay in the parent (``retrieval.search.encoder``), whose one thread is the pipe's
only user; exact reads never touch it, and the model neither holds the parent's GIL nor its cores
at the parent's priority.

A child that dies fails the batch it held with ``EncoderUnavailable`` (503 ``unavailable``); the
next batch starts a new one (and waits for its model). A child whose parent dies reads the end
of its pipe and exits.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from retrieval.search.encoder import EncoderUnavailable

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

Vectors = NDArray[np.float32]

START_TIMEOUT_S = 300.0
"""How long a child may take to load its model before it counts as failed."""
STOP_TIMEOUT_S = 10.0
"""How long ``close`` waits for the child to finish its batch and exit before killing it."""
DRAIN_TIMEOUT_S = 30.0
"""How long ``stopping`` lets the queue's calls be answered before the child is killed."""


@dataclass(frozen=True, slots=True)
class ModelFacts:
    """What the parent needs of a model it does not load: for vectors' length, and counting."""

    dimensions: int
    max_tokens: int
    tokenizer: Any


def load_model(source: str, *, torch_threads: int | None) -> SentenceTransformer:
    """The sentence-transformers model at ``source`` on the CPU (no hub download)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer  # noqa: PLC0415 - heavy
    from transformers.utils import logging as transformers_logging  # noqa: PLC0415

    # Its "Loading weights" bar would land in the server's log, one JSON object a line.
    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # untyped there
    limit_torch_threads(torch_threads)
    return SentenceTransformer(source, device="cpu")


def limit_torch_threads(threads: int | None) -> None:
    """Give torch ``threads`` threads, when set (per process, and per thread that encodes)."""
    if threads:
        import torch  # noqa: PLC0415 - only once a model is wanted

        torch.set_num_threads(threads)


def encode(model: SentenceTransformer, texts: list[str], *, batch_size: int) -> Vectors:
    """Unit-length vectors of ``texts``, one row each (a text past the input limit is cut)."""
    vectors = model.encode(
        texts,
        batch_size=batch_size,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    return np.asarray(vectors, dtype=np.float32)


def model_facts(model: SentenceTransformer) -> ModelFacts:
    """The model's vector length, input limit (special tokens included) and tokenizer."""
    loaded: Any = model
    # sentence-transformers 5.x renamed the method; keep both working.
    getter = getattr(loaded, "get_embedding_dimension", None) or (
        loaded.get_sentence_embedding_dimension
    )
    tokenizer: Any = model.tokenizer
    limit = model.max_seq_length
    if limit is None:  # the model sets none: its tokenizer's own limit applies
        limit = tokenizer.model_max_length
    return ModelFacts(dimensions=int(getter()), max_tokens=int(limit), tokenizer=tokenizer)


@dataclass(frozen=True, slots=True)
class ChildSpec:
    """How the child loads and runs its model."""

    source: str
    torch_threads: int | None
    nice: int
    batch_size: int


_CHILD_COMMAND = "from retrieval.search.encoder_process import main; main()"
"""The child's program: a fresh interpreter that imports this module (not the parent's main
module, as multiprocessing's spawn would), then serves its end of the pipe."""


def main() -> None:
    """The child's entry point: its end of the pipe is the file descriptor in ``argv[1]``."""
    # Ctrl-C reaches the whole process group: the server stops, then stops this process.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    pipe = Connection(int(sys.argv[1]))
    try:
        spec: ChildSpec = pipe.recv()
    except EOFError:
        return
    _child(pipe, spec)


def _child(pipe: Connection, spec: ChildSpec) -> None:
    """The child's life: lower itself, load the model, then answer batches until the pipe ends."""
    if spec.nice:
        os.nice(spec.nice)  # before torch's threads exist: they inherit it
    try:
        model = load_model(spec.source, torch_threads=spec.torch_threads)
        pipe.send(("ready", model_facts(model)))
    except Exception as error:  # noqa: BLE001 - told to the parent, which refuses the calls
        pipe.send(("failed", f"{type(error).__name__}: {error}"))
        return
    while True:
        try:
            texts = pipe.recv()
        except EOFError:  # the parent closed the pipe, or died
            return
        try:
            answer: tuple[str, Any] = ("ok", encode(model, texts, batch_size=spec.batch_size))
        except Exception as error:  # noqa: BLE001 - the caller's, raised in the parent
            answer = ("error", _sendable(error))
        pipe.send(answer)


def _sendable(error: Exception) -> Exception:
    """A built-in error as it is (it crosses the pipe intact), another as its words."""
    if type(error).__module__ == "builtins":
        return error
    return RuntimeError(f"{type(error).__name__}: {error}")


class EncoderProcess:
    """One child process that owns the model; ``encode`` is called from one thread at a time."""

    def __init__(
        self,
        source: str,
        *,
        torch_threads: int | None = None,
        nice: int = 0,
        batch_size: int = 64,
    ) -> None:
        self.spec = ChildSpec(source, torch_threads, nice, batch_size)
        self.starts = 0
        """Children started so far (a restart after a death adds one)."""
        self._process: subprocess.Popen[bytes] | None = None
        self._pipe: Connection | None = None
        self._lock = threading.Lock()
        self._stopping = False
        self.drain_timeout_s = DRAIN_TIMEOUT_S

    @property
    def pid(self) -> int | None:
        """The running child's process id, or None."""
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    def start(self) -> ModelFacts:
        """Start a child and wait for its model (a few seconds); its facts.

        Raises ``EncoderUnavailable`` when it exits or fails before its model is loaded.
        """
        with self._lock:
            self._stop()
            ours, theirs = socket.socketpair()  # neither end is inherited unless passed
            with ours, theirs:
                process = subprocess.Popen(  # noqa: S603 - this interpreter, our own module
                    [sys.executable, "-c", _CHILD_COMMAND, str(theirs.fileno())],
                    pass_fds=[theirs.fileno()],
                )
                # The child's end lives there only: its death reads as EOF here, and ours
                # closing (this process's end) reads as EOF there.
                parent = Connection(ours.detach())
            self._process, self._pipe = process, parent
            self.starts += 1
            try:
                parent.send(self.spec)
                if not parent.poll(START_TIMEOUT_S):
                    raise EncoderUnavailable("the encoder's process did not load its model")
                kind, found = parent.recv()
            except (EOFError, OSError):
                self._stop()
                raise EncoderUnavailable("the encoder's process exited while starting") from None
            except EncoderUnavailable:
                self._stop()
                raise
            if kind != "ready":
                self._stop()
                raise EncoderUnavailable(f"the encoder's process could not start: {found}")
            facts: ModelFacts = found
            return facts

    def encode(self, texts: Sequence[str]) -> Vectors:
        """The texts' rows from the child; a dead child fails this call and is replaced by the
        next (``EncoderUnavailable``)."""
        if self.pid is None:  # never started, closed, or found dead since the last call
            if self._stopping:
                raise EncoderUnavailable("the encoder is stopping; try again shortly")
            self.start()
        pipe = self._pipe
        assert pipe is not None
        try:
            pipe.send(list(texts))
            kind, found = pipe.recv()
        except (EOFError, OSError):
            code = self._process.poll() if self._process is not None else None
            log.warning("the encoder's process is gone (exit %s); the next call starts one", code)
            with self._lock:
                self._stop()
            raise EncoderUnavailable(
                "the encoder's process stopped during this call; try again shortly"
            ) from None
        if kind == "error":
            raise found
        vectors: Vectors = found
        return vectors

    def close(self) -> None:
        """Stop the child once its batch is done (a later ``encode`` starts another)."""
        with self._lock:
            self._stop()

    @contextmanager
    def stopping(self) -> Iterator[None]:
        """Stop the child after the block, in which the caller answers what is queued.

        Meanwhile no child is started (calls answer ``EncoderUnavailable``), and a child that
        has not let the block end after ``drain_timeout_s`` (stopped, or stuck) is killed, so
        its batch answers ``EncoderUnavailable`` too: a server's shutdown never hangs on it.
        """
        self._stopping = True
        watchdog = threading.Timer(self.drain_timeout_s, self._kill)
        watchdog.daemon = True
        watchdog.start()
        try:
            yield
        finally:
            watchdog.cancel()
            self.close()
            self._stopping = False

    def _kill(self) -> None:
        process = self._process
        if process is not None:
            log.warning("the encoder's process did not answer in time; killing it")
            process.kill()

    def _stop(self) -> None:
        process, pipe = self._process, self._pipe
        self._process = self._pipe = None
        if pipe is not None:
            pipe.close()  # the child reads EOF and exits
        if process is None:
            return
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:  # stuck (or stopped): it is killed
            process.kill()
            process.wait()
