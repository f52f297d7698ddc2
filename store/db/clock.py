"""System time for the write path: the wall clock by default, injectable for replays and tests."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def wall_clock() -> datetime:
    """The current UTC time."""
    return datetime.now(UTC)


class ManualClock:
    """A clock that says what it was last set to; replays move it forward line by line."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def set(self, now: datetime) -> None:
        """Move the clock to ``now`` (any direction: callers enforce monotonic writes)."""
        self.now = now
