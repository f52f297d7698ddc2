"""The server's encoder leaves a core to the request threads and runs below them, in a process
of its own unless told to run on a thread; other commands use every core at the usual
priority, in their own process."""

from __future__ import annotations

import os

import pytest

from server.settings import Settings


def test_serving_leaves_a_core_and_lowers_the_encoder_unless_told_otherwise() -> None:
    settings = Settings(torch_threads=None, encoder_queue_size=5)
    served = settings.embedder(serving=True)
    cores = os.cpu_count() or 1
    assert (served.torch_threads, served.nice) == (max(1, cores - 1), 10)
    assert served.encoder.max_waiting == 5
    assert served.own_process
    other = settings.embedder()
    assert (other.torch_threads, other.nice, other.loaded) == (None, 0, False)
    assert not other.own_process
    told = Settings(torch_threads=3, encoder_nice=0, encoder="thread").embedder(serving=True)
    assert (told.torch_threads, told.nice, told.own_process) == (3, 0, False)


def test_the_encoder_runs_in_a_process_or_on_a_thread_and_nothing_else() -> None:
    assert Settings.model_validate({"encoder": "thread"}).encoder == "thread"
    with pytest.raises(ValueError, match="encoder"):
        Settings.model_validate({"encoder": "gpu"})


@pytest.mark.parametrize("field", ["encoder_queue_size", "encoder_nice"])
def test_an_encoder_setting_out_of_range_is_refused(field: str) -> None:
    with pytest.raises(ValueError, match=field):
        Settings.model_validate({field: -1})
