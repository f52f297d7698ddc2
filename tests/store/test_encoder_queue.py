"""The encoder's own thread: concurrent callers' texts batched, each caller its own rows in its
own order, a full queue refused at once, errors to the caller they belong to, a clean stop."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator

import numpy as np
import pytest
import torch

from evals.arms.vectors import SharedVectors
from retrieval.search.embeddings import Embedder, Vectors
from retrieval.search.encoder import EncoderBusy, EncoderQueue

WAIT_S = 30


class HeldEncoder:
    """The real model behind a gate: each batch is recorded, and waits until ``release``."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.batches: list[list[str]] = []
        self.started = threading.Event()
        self.gate = threading.Event()

    def __call__(self, texts: list[str]) -> Vectors:
        self.batches.append(list(texts))
        self.started.set()
        assert self.gate.wait(WAIT_S)
        if "fail" in texts:
            raise ValueError("this text cannot be encoded")
        return self.embedder.embed(texts)

    def release(self) -> None:
        self.gate.set()


@pytest.fixture
def held(embedder: Embedder) -> HeldEncoder:
    return HeldEncoder(embedder)


@pytest.fixture
def encoder(held: HeldEncoder) -> Iterator[EncoderQueue]:
    queue = EncoderQueue(held, batch_size=8, max_waiting=3)
    yield queue
    held.release()
    queue.close()


def _busy(encoder: EncoderQueue, held: HeldEncoder) -> None:
    """The thread is inside a batch (of one call), with nothing left queued."""
    encoder.submit(["hold the encoder"])
    assert held.started.wait(WAIT_S)


def test_callers_waiting_together_are_encoded_in_one_batch_each_with_its_own_rows(
    embedder: Embedder, encoder: EncoderQueue, held: HeldEncoder
) -> None:
    _busy(encoder, held)
    asked = [
        ["Her passport deadline is 2026-07-15.", "The weather in Paris is sunny."],
        ["The passport must be renewed by July 15."],
        ["It is raining in Lisbon today.", "Mira moved to Lisbon.", "She lives in Lisbon now."],
    ]
    futures = [encoder.submit(texts) for texts in asked]
    held.release()
    answers = [future.result(WAIT_S) for future in futures]

    assert held.batches == [["hold the encoder"], [text for texts in asked for text in texts]]
    assert encoder.batches == 2
    for texts, vectors in zip(asked, answers, strict=True):
        assert vectors.shape == (len(texts), 384)
        assert np.allclose(vectors, embedder.embed(texts), atol=1e-5)
    # Each caller's rows are its own texts' vectors, in its order: the paraphrase is closest
    # to the deadline, not to the weather.
    deadline, weather = answers[0]
    [paraphrase] = answers[1]
    assert float(paraphrase @ deadline) > float(paraphrase @ weather) + 0.2


def test_a_batch_takes_waiting_callers_only_while_it_has_room(
    encoder: EncoderQueue, held: HeldEncoder
) -> None:
    _busy(encoder, held)
    futures = [encoder.submit([f"text {n}.{i}" for i in range(5)]) for n in range(3)]
    held.release()
    for future in futures:
        assert future.result(WAIT_S).shape == (5, 384)
    # 8 texts a batch: the first call's 5 leave room, the second's make 10; the third waits.
    assert [len(batch) for batch in held.batches] == [1, 10, 5]


def test_a_full_queue_refuses_the_call_at_once_and_the_queued_calls_still_get_answers(
    encoder: EncoderQueue, held: HeldEncoder
) -> None:
    _busy(encoder, held)
    queued = [encoder.submit([f"queued {n}"]) for n in range(encoder.max_waiting)]
    assert encoder.waiting == 3
    with pytest.raises(EncoderBusy, match="3 calls waiting") as refused:
        encoder.submit(["one too many"])
    assert (refused.value.code, refused.value.field) == ("unavailable", None)
    held.release()
    assert [future.result(WAIT_S).shape for future in queued] == [(1, 384)] * 3
    assert encoder.submit(["room again"]).result(WAIT_S).shape == (1, 384)


class Watched:
    """An observer recording what the queue tells it."""

    def __init__(self) -> None:
        self.queued: list[int] = []
        self.runs: list[tuple[int, float]] = []
        self.refusals = 0

    def waiting(self, calls: int) -> None:
        self.queued.append(calls)

    def encoded(self, texts: int, seconds: float) -> None:
        self.runs.append((texts, seconds))

    def refused(self) -> None:
        self.refusals += 1


def test_the_observer_hears_each_call_queued_each_run_and_each_refusal(
    encoder: EncoderQueue, held: HeldEncoder
) -> None:
    watched = Watched()
    encoder.observer = watched
    _busy(encoder, held)  # queued (1), then taken (0)
    queued = [encoder.submit([f"queued {n}", "and more"]) for n in range(encoder.max_waiting)]
    with pytest.raises(EncoderBusy):
        encoder.submit(["one too many"])
    held.release()
    assert [future.result(WAIT_S).shape for future in queued] == [(2, 384)] * 3
    encoder.close()  # every run is told before the thread ends

    assert watched.refusals == 1
    # Told after each call queued and each batch taken: up to three waiting, none at the end.
    assert max(watched.queued) == 3
    assert watched.queued[-1] == 0
    # The call that held the encoder, then the three waiting ones in one batch of 6 texts.
    assert [texts for texts, _ in watched.runs] == [1, 6]
    assert all(seconds > 0 for _, seconds in watched.runs)
    assert sum(seconds for _, seconds in watched.runs) < WAIT_S * 2


def test_a_failed_run_and_the_calls_encoded_alone_after_it_are_each_told(
    encoder: EncoderQueue, held: HeldEncoder
) -> None:
    watched = Watched()
    encoder.observer = watched
    _busy(encoder, held)
    good = encoder.submit(["Mira moved to Lisbon."])
    bad = encoder.submit(["fail"])
    held.release()
    assert good.result(WAIT_S).shape == (1, 384)
    with pytest.raises(ValueError, match="cannot be encoded"):
        bad.result(WAIT_S)
    encoder.close()
    # The held call, the failed batch of two, then each of its calls alone.
    assert [texts for texts, _ in watched.runs] == [1, 2, 1, 1]


def test_an_error_reaches_only_the_caller_whose_texts_failed(
    encoder: EncoderQueue, held: HeldEncoder
) -> None:
    _busy(encoder, held)
    good = encoder.submit(["Mira moved to Lisbon."])
    bad = encoder.submit(["fail"])
    also_good = encoder.submit(["The weather in Paris is sunny."])
    held.release()
    assert good.result(WAIT_S).shape == also_good.result(WAIT_S).shape == (1, 384)
    with pytest.raises(ValueError, match="cannot be encoded"):
        bad.result(WAIT_S)
    # The batch of three failed, then each call was encoded on its own.
    assert held.batches[1:] == [
        ["Mira moved to Lisbon.", "fail", "The weather in Paris is sunny."],
        ["Mira moved to Lisbon."],
        ["fail"],
        ["The weather in Paris is sunny."],
    ]
    # The thread goes on serving.
    assert encoder.submit(["after the error"]).result(WAIT_S).shape == (1, 384)


def test_a_thread_whose_setup_failed_still_serves(embedder: Embedder) -> None:
    def failing_setup() -> None:
        raise PermissionError("not allowed to lower this thread")

    encoder = EncoderQueue(embedder.embed, on_start=failing_setup)
    try:
        assert encoder.submit(["Mira moved to Lisbon."]).result(WAIT_S).shape == (1, 384)
    finally:
        encoder.close()


def test_a_call_cancelled_while_queued_is_never_encoded(
    encoder: EncoderQueue, held: HeldEncoder
) -> None:
    _busy(encoder, held)
    cancelled = encoder.submit(["nobody waits for this"])
    kept = encoder.submit(["Mira moved to Lisbon."])
    assert cancelled.cancel()
    held.release()
    assert kept.result(WAIT_S).shape == (1, 384)
    assert held.batches == [["hold the encoder"], ["Mira moved to Lisbon."]]


def test_close_answers_the_queued_calls_then_stops_and_a_later_call_starts_again(
    encoder: EncoderQueue, held: HeldEncoder
) -> None:
    _busy(encoder, held)
    queued = [encoder.submit([f"queued {n}"]) for n in range(2)]
    closing = threading.Thread(target=encoder.close)
    closing.start()
    held.release()
    closing.join(WAIT_S)
    assert not closing.is_alive()
    assert not encoder.running
    assert all(future.done() and future.result().shape == (1, 384) for future in queued)
    assert encoder.submit(["a new thread"]).result(WAIT_S).shape == (1, 384)
    assert encoder.running


def test_the_embedder_encodes_on_its_own_thread_with_its_torch_threads_and_priority(
    embedder: Embedder,
) -> None:
    texts = ["Her passport deadline is 2026-07-15.", "The weather in Paris is sunny."]
    limited = Embedder(torch_threads=1, nice=5)
    limited._model, limited._counter = embedder.model, embedder._tokenizer()
    seen: list[tuple[str, int, int]] = []
    real = limited._encode
    here = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    def recording(batch: list[str]) -> Vectors:
        thread = threading.get_native_id()
        niceness = os.getpriority(os.PRIO_PROCESS, thread) - here
        seen.append((threading.current_thread().name, torch.get_num_threads(), niceness))
        return real(batch)

    limited.encoder._encode = recording
    try:
        assert np.allclose(limited.embed(texts), embedder.embed(texts), atol=1e-5)
    finally:
        limited.close()
    assert seen == [("sgam-encoder", 1, 5)]
    # Only the encoder's thread is lowered and limited: the caller's are as they were.
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == here
    assert not limited.encoder.running


def test_an_embedder_sharing_a_loaded_model_encodes_on_the_owners_thread(
    embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The evaluation's cache of known texts shares the session's model: a second thread running
    # it beside the owner's would share its tokenizer, which refuses concurrent use.
    shared = SharedVectors(embedder, ["Mira moved to Lisbon."])
    threads: list[str] = []
    encode = embedder.encoder._encode

    def recording(texts: list[str]) -> Vectors:
        threads.append(threading.current_thread().name)
        return encode(texts)

    monkeypatch.setattr(embedder.encoder, "_encode", recording)
    known = shared.embed_later(["Mira moved to Lisbon."]).result(WAIT_S)
    fresh = shared.embed_later(["The weather in Paris is sunny."]).result(WAIT_S)
    assert np.allclose(known, shared.vectors["Mira moved to Lisbon."][None, :], atol=1e-6)
    assert np.allclose(fresh, embedder.embed(["The weather in Paris is sunny."]), atol=1e-5)
    assert threads == ["sgam-encoder", "sgam-encoder"]  # the fresh text, then the direct call
    assert not shared.encoder.running
