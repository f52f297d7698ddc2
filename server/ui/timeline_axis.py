"""The valid-time axis the timelines share: its range, its ticks, its markers (now, known at),
and the instants at which belief changed as a page names them, to the second. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from server.ui.timeline_labels import NARROW_PX, WIDE_PX, WIDTH, LabelPlace, place_label
from store.contract.facts import Fact

TICKS = 5
MARGIN = 0.02
"""Share of the axis's span left empty before the first value and after its end."""


@dataclass(frozen=True, slots=True)
class Tick:
    """A labelled instant on the valid-time axis; ``narrow``: also shown on a phone."""

    x: float
    label: str
    anchor: str
    narrow: bool


@dataclass(frozen=True, slots=True)
class Marker:
    """A vertical line at an instant (now, known at), named on the line above the rows."""

    name: str
    x: float
    wide: LabelPlace
    narrow: LabelPlace


@dataclass(frozen=True, slots=True)
class Scale:
    """Valid time from ``start`` to ``end`` onto the drawing's ``WIDTH`` units."""

    start: datetime
    end: datetime

    def x(self, at: datetime) -> float:
        """Where ``at`` falls, clamped to the axis."""
        share = (at - self.start) / (self.end - self.start)
        return round(min(max(share, 0.0), 1.0) * WIDTH, 1)


def axis(shown: Sequence[Fact], *, known_at: datetime, now: datetime) -> Scale:
    """From the first value to the later of now and the last start or end (``known_at`` too,
    should every value start after it), a small margin either side."""
    starts = [v.valid_from for v in shown]
    low = min([*starts, known_at])
    high = max([*starts, *(v.valid_to for v in shown if v.valid_to), now, known_at])
    span = max(high - low, timedelta(days=1))
    return Scale(low - span * MARGIN, high + span * MARGIN)


def ticks(scale: Scale) -> tuple[Tick, ...]:
    """``TICKS`` evenly spaced dates (times on a short axis); every other one on a phone."""
    span = scale.end - scale.start
    text = "%Y-%m-%d" if span >= timedelta(days=4) else "%m-%d %H:%M"
    last = TICKS - 1
    found = []
    for n in range(TICKS):
        at = scale.start + span * (n / last)
        anchor = "start" if n == 0 else ("end" if n == last else "middle")
        found.append(Tick(scale.x(at), at.strftime(text), anchor, narrow=n % 2 == 0))
    return tuple(found)


def markers(scale: Scale, *, known_at: datetime, now: datetime) -> tuple[Marker, ...]:
    """A marker at now, and one at ``known_at`` before it when that is another instant."""
    at = [("known at", known_at)] if known_at != now else []
    return tuple(_marker(name, scale.x(instant)) for name, instant in [*at, ("now", now)])


def _marker(name: str, x: float) -> Marker:
    wide = place_label(name, x=x, width=0.0, chart_px=WIDE_PX)
    return Marker(name, x, wide, place_label(name, x=x, width=0.0, chart_px=NARROW_PX))


def by_second(instants: Iterable[datetime]) -> tuple[datetime, ...]:
    """The latest of ``instants`` in each second, oldest first: changes a page names to the
    second fold into one, read after the last of them."""
    latest: dict[datetime, datetime] = {}
    for instant in instants:
        second = instant.replace(microsecond=0)
        latest[second] = max(instant, latest.get(second, instant))
    return tuple(latest[second] for second in sorted(latest))
