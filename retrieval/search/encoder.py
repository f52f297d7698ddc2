"""The encoder's own thread: texts from concurrent callers queue, and are encoded together.

Callers never run the model themselves. Each hands its texts to a bounded queue and gets a
future; one thread takes what is waiting (up to a batch of texts), encodes it in one call and
gives each caller its own rows, in its own order. A caller whose future was cancelled while it
waited costs nothing. When the queue is full the caller is refused at once (``EncoderBusy``,
503 ``unavailable`` over HTTP) rather than left waiting without bound.

A request that only reads exact facts never touches this queue, so it never waits behind it.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from store.contract.problems import ErrorCode
from store.errors import StoreError

log = logging.getLogger(__name__)

Vectors = NDArray[np.float32]
Encode = Callable[[list[str]], Vectors]


class EncoderBusy(StoreError):
    """The encoder's queue is full: the call is refused at once, to be tried again shortly."""

    code = ErrorCode.UNAVAILABLE


class EncoderUnavailable(StoreError):
    """The encoder cannot answer now (its process died, or would not start): every call of the
    batch gets it, and a later call tries again."""

    code = ErrorCode.UNAVAILABLE


class EncoderObserver(Protocol):
    """What the queue tells whoever watches it (the server's metrics): every call is cheap and
    made on the thread where it happens."""

    def waiting(self, calls: int) -> None:
        """``calls`` are queued now (after a call was queued or a batch taken)."""
        ...

    def encoded(self, texts: int, seconds: float) -> None:
        """One run of the encoder embedded ``texts`` texts in ``seconds``, failed or not."""
        ...

    def refused(self) -> None:
        """A call was refused: ``max_waiting`` calls were queued already."""
        ...


@dataclass(slots=True)
class _Job:
    texts: list[str]
    future: Future[Vectors] = field(default_factory=Future)


_STOP = _Job([])
"""Put on the queue by ``close``: the thread finishes what came before it, then ends."""


class EncoderQueue:
    """One thread that owns the encoder, fed by a queue of at most ``max_waiting`` calls.

    ``encode`` gets the texts of every call taken together (up to ``batch_size`` texts, or
    one call's texts when that call alone has more) and returns one row per text. ``on_start``
    runs first on the thread (torch's thread count is set per thread). ``observer``, when set,
    hears of every call queued, run and refused.
    """

    def __init__(
        self,
        encode: Encode,
        *,
        batch_size: int = 64,
        max_waiting: int = 64,
        on_start: Callable[[], Any] | None = None,
        name: str = "sgam-encoder",
    ) -> None:
        self._encode = encode
        self.batch_size = batch_size
        self.max_waiting = max_waiting
        self._on_start = on_start
        self._name = name
        self._jobs: queue.Queue[_Job] = queue.Queue(max_waiting)
        self._thread: threading.Thread | None = None
        self._starting = threading.Lock()
        self.batches = 0
        """Runs of the encoder so far (each serving one or more callers)."""
        self.observer: EncoderObserver | None = None
        # Each count of the waiting calls is read and told under it, so that the last told is
        # read after the queue's last change (two told out of order would leave a stale count).
        self._telling = threading.Lock()

    def submit(self, texts: Sequence[str]) -> Future[Vectors]:
        """The texts' vectors, later: rows in the order of ``texts``, or the encoder's error.

        Raises ``EncoderBusy`` when ``max_waiting`` calls are already queued.
        """
        job = _Job(list(texts))
        with self._starting:
            self._start()
            try:
                self._jobs.put_nowait(job)
            except queue.Full:
                if self.observer is not None:
                    self.observer.refused()
                raise EncoderBusy(
                    f"the encoder has {self.max_waiting} calls waiting already; try again shortly"
                ) from None
        self._tell_waiting()
        return job.future

    def close(self) -> None:
        """Answer every call already queued, then stop the thread (a later ``submit`` starts
        a new one)."""
        with self._starting:
            thread, self._thread = self._thread, None
            if thread is None:
                return
            self._jobs.put(_STOP)  # blocks only while the thread drains a full queue
        thread.join()

    @property
    def waiting(self) -> int:
        """Calls queued and not yet taken into a batch."""
        return self._jobs.qsize()

    @property
    def running(self) -> bool:
        """Whether the thread is running."""
        return self._thread is not None and self._thread.is_alive()

    def _start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        if self._on_start is not None:
            try:
                self._on_start()
            except Exception:  # a thread that died here would leave every caller waiting
                log.warning(
                    "the encoder's thread could not be set up; it encodes as it is", exc_info=True
                )
        while True:
            jobs, stop = self._take()
            self._tell_waiting()
            self._serve(jobs)
            if stop:
                return

    def _tell_waiting(self) -> None:
        if self.observer is not None:
            with self._telling:
                self.observer.waiting(self._jobs.qsize())

    def _take(self) -> tuple[list[_Job], bool]:
        """The first waiting call, then more already waiting while the batch has room."""
        first = self._jobs.get()
        if first is _STOP:
            return [], True
        jobs, count = [first], len(first.texts)
        while count < self.batch_size:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                break
            if job is _STOP:
                return jobs, True
            jobs.append(job)
            count += len(job.texts)
        return jobs, False

    def _serve(self, jobs: list[_Job]) -> None:
        """Encode the calls' texts together and give each call its rows."""
        live = [job for job in jobs if job.future.set_running_or_notify_cancel()]
        if not live:
            return
        texts = [text for job in live for text in job.texts]
        try:
            vectors = self._encode_counted(texts)
        except EncoderUnavailable as error:  # the encoder's failure, not one caller's texts
            for job in live:
                job.future.set_exception(error)
            return
        except Exception as error:  # noqa: BLE001 - it belongs to the callers, not this thread
            if len(live) == 1:
                live[0].future.set_exception(error)
                return
            # One caller's texts may be what failed: each gets its own answer.
            for job in live:
                self._serve_alone(job)
            return
        start = 0
        for job in live:
            job.future.set_result(vectors[start : start + len(job.texts)])
            start += len(job.texts)

    def _serve_alone(self, job: _Job) -> None:
        try:
            job.future.set_result(self._encode_counted(job.texts))
        except Exception as error:  # noqa: BLE001 - handed to the caller
            job.future.set_exception(error)

    def _encode_counted(self, texts: list[str]) -> Vectors:
        """One run of the encoder, counted and told to the observer, failed or not."""
        began = time.perf_counter()
        try:
            return self._encode(texts)
        finally:
            self.batches += 1
            if self.observer is not None:
                self.observer.encoded(len(texts), time.perf_counter() - began)
