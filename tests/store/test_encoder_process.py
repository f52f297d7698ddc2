"""The encoder in its own process: the vectors and token counts of the model run here; a child
killed is replaced by the next call, and the call it held answers ``unavailable``; a child
outlives neither ``close`` nor its parent's death; the process that asks never loads torch."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import numpy as np
import pytest

from retrieval.search.embeddings import Embedder
from retrieval.search.encoder import EncoderUnavailable
from retrieval.search.encoder_process import DRAIN_TIMEOUT_S
from tests.encoder_helpers import WAIT_S, batch_started, child_pid, wait_until_gone

TEXTS = ["Her passport deadline is 2026-07-15.", "The weather in Paris is sunny."]


@pytest.fixture(scope="module")
def remote() -> Iterator[Embedder]:
    """The real model in its own process, at a lower priority, one torch thread."""
    embedder = Embedder(own_process=True, torch_threads=1, nice=5).load()
    yield embedder
    embedder.close()


def test_the_encoders_process_gives_the_vectors_and_token_counts_of_the_model_run_here(
    embedder: Embedder, remote: Embedder
) -> None:
    assert np.allclose(remote.embed(TEXTS), embedder.embed(TEXTS), atol=1e-5)
    assert (remote.dimensions, remote.max_tokens) == (embedder.dimensions, embedder.max_tokens)
    long = "the passport deadline " * 200
    assert remote.truncated([long, TEXTS[0]]) == embedder.truncated([long, TEXTS[0]])
    assert remote.truncated([long, TEXTS[0]]) == [True, False]
    assert remote.count_tokens(long) == embedder.count_tokens(long) == 600
    # The child runs below the caller, with the model; the caller holds none.
    here = os.getpriority(os.PRIO_PROCESS, 0)
    assert os.getpriority(os.PRIO_PROCESS, child_pid(remote)) == here + 5
    with pytest.raises(RuntimeError, match="own process"):
        _ = remote.model


def test_a_child_that_died_between_calls_is_replaced_by_the_next_call(
    embedder: Embedder, remote: Embedder
) -> None:
    assert remote.process is not None
    dead, starts = child_pid(remote), remote.process.starts
    os.kill(dead, signal.SIGKILL)
    while remote.process.pid == dead:  # reaped by the check itself
        time.sleep(0.05)
    assert np.allclose(remote.embed(TEXTS[:1]), embedder.embed(TEXTS[:1]), atol=1e-5)
    assert child_pid(remote) != dead
    assert remote.process.starts == starts + 1


def test_the_call_a_dying_child_held_answers_unavailable_and_the_queued_one_is_served(
    embedder: Embedder, remote: Embedder
) -> None:
    child = child_pid(remote)
    os.kill(child, signal.SIGSTOP)  # the child takes the batch and never answers
    with batch_started(remote) as started:
        held = remote.embed_later(["held by a stopped child"])
        assert started.wait(WAIT_S)
        queued = remote.embed_later(["queued behind it"])
        assert not held.done()
        assert not queued.done()
        os.kill(child, signal.SIGKILL)
        with pytest.raises(EncoderUnavailable, match="stopped during this call") as refused:
            held.result(WAIT_S)
        assert refused.value.code == "unavailable"
        vectors = queued.result(WAIT_S)  # the next batch started a new child
    assert np.allclose(vectors, embedder.embed(["queued behind it"]), atol=1e-5)
    assert child_pid(remote) != child


def test_close_stops_the_child_and_a_later_call_starts_another(remote: Embedder) -> None:
    child = child_pid(remote)
    remote.close()
    assert wait_until_gone(child) == "gone"  # reaped by close: no zombie either
    assert remote.process is not None
    assert remote.process.pid is None
    assert remote.embed(TEXTS[:1]).shape == (1, 384)
    assert child_pid(remote) != child


def test_close_kills_a_child_that_does_not_answer_and_the_call_it_held_answers_unavailable(
    remote: Embedder,
) -> None:
    assert remote.process is not None
    child = child_pid(remote)
    os.kill(child, signal.SIGSTOP)  # stuck: it takes the batch and never answers
    remote.process.drain_timeout_s = 1.0
    try:
        with batch_started(remote) as started:
            held = remote.embed_later(["held by a stuck child"])
            assert started.wait(WAIT_S)
            queued = remote.embed_later(["queued behind it"])
        remote.close()
    finally:
        remote.process.drain_timeout_s = DRAIN_TIMEOUT_S
    for refused in (held, queued):
        with pytest.raises(EncoderUnavailable):
            refused.result(WAIT_S)
    assert wait_until_gone(child) == "gone"
    assert not remote.encoder.running
    assert remote.embed(TEXTS[:1]).shape == (1, 384)  # a later call starts them again


ASKER = """
import json, sys
from retrieval.search.embeddings import Embedder
embedder = Embedder(own_process=True, torch_threads=1).load()
rows = embedder.embed(["Mira moved to Lisbon."]).shape[0]
loaded = sorted(name for name in ("torch", "sentence_transformers") if name in sys.modules)
print(json.dumps({"child": embedder.process.pid, "rows": rows, "loaded": loaded}), flush=True)
sys.stdin.read()
"""


def test_a_process_that_asks_never_loads_torch_and_its_child_ends_when_it_is_killed() -> None:
    with subprocess.Popen(
        [sys.executable, "-c", ASKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    ) as asker:
        try:
            assert asker.stdout is not None
            said = json.loads(asker.stdout.readline())
        finally:
            asker.kill()  # no chance to close anything
    assert (said["rows"], said["loaded"]) == (1, [])
    assert wait_until_gone(said["child"]) in {"gone", "zombie"}


LOADER = """
from retrieval.search.embeddings import Embedder
for own_process in (False, True):
    embedder = Embedder(own_process=own_process, torch_threads=1).load()
    embedder.embed(["Mira moved to Lisbon."])
    embedder.close()
"""


def test_loading_the_model_draws_no_progress_bar_into_the_servers_log() -> None:
    # A served log is one JSON object a line; a progress bar on stderr breaks that.
    loaded = subprocess.run(
        [sys.executable, "-c", LOADER], capture_output=True, text=True, timeout=300, check=True
    )
    assert "Loading weights" not in loaded.stderr
    assert "it/s]" not in loaded.stderr
