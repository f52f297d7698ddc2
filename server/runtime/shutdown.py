"""Stopping ``sgam serve`` on SIGTERM and SIGINT with its cleanup done (the embedded database).

uvicorn handles both signals while it serves, then restores the handlers it found and raises
the signal again. Left at their defaults, SIGTERM would end the process on the spot and skip
every ``finally`` and at-exit hook; here both become an exception that unwinds the stack, and
once it is unwound the process ends by the same signal, as a supervisor expects.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)

_failed: list[str] = []


def stop_failing(reason: str) -> None:
    """Stop the server as SIGTERM does, but end with exit code 1: something it needs is gone
    (the embedded database would not start again), and a supervisor should restart it."""
    _failed.append(reason)
    os.kill(os.getpid(), signal.SIGTERM)


class StopSignal(SystemExit):
    """A stop signal arrived: unwind (stopping what was started), then end by that signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signum = signum


def _raise_stop(signum: int, frame: FrameType | None) -> None:
    # A second Ctrl-C must not cut the cleanup short; kill -9 still can.
    for stop_signal in STOP_SIGNALS:
        signal.signal(stop_signal, signal.SIG_IGN)
    raise StopSignal(signum)


@contextmanager
def unwinding_on_stop_signals() -> Iterator[None]:
    """Within the block SIGTERM and SIGINT unwind it; after the unwinding the process ends so."""
    previous = {stop_signal: signal.getsignal(stop_signal) for stop_signal in STOP_SIGNALS}
    for stop_signal in STOP_SIGNALS:
        signal.signal(stop_signal, _raise_stop)
    try:
        yield
    except StopSignal as stop:
        sys.stdout.flush()
        sys.stderr.flush()
        if _failed:
            sys.stderr.write(f"error: {_failed[0]}\n")
            raise SystemExit(1) from stop
        signal.signal(stop.signum, signal.SIG_DFL)
        signal.raise_signal(stop.signum)
        raise  # only where the default action does not end the process
    finally:
        for stop_signal, handler in previous.items():
            signal.signal(stop_signal, handler)
