"""A subject's keys as timelines, as believed at one instant: a pure layout the page draws.

Each version is a bar over its valid window on one axis of valid time shared by every key.
What the bars say is relative to ``known_at`` (the design's knowledge at S): a version not yet
recorded then is left out; one believed then is ``current`` (valid at S), ``future``,
``past`` or ``superseded`` (its valid window is over and a fact believed then supersedes its
fact); one no longer believed then is ``retired`` and keeps its system window. Arrows go from
a superseded fact to the fact that superseded it; a fact facing an open equal-start conflict
at S carries its challengers. What a bar or a challenger is called (``current · disputed``,
``in conflict``, ``past · unverified``) is ``store.contract.labels``' rule, as the API and the
context block name it; what each is at S, ``server.ui.timeline_states``'.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import cast
from uuid import UUID

from server.ui.timeline_states import (
    Challenge,
    State,
    bar_label,
    believed_at,
    challenges_at,
    display_value,
)
from store.contract.facts import ConflictRecord, Fact
from store.contract.labels import Label

WIDTH = 960.0
"""The drawing's width in SVG user units; a bar's ``x`` and ``width`` are within it."""
ROW = 30.0
"""Height of one version's row."""
BAR = 18.0
"""Height of a bar within its row."""
TICKS = 6


@dataclass(frozen=True, slots=True)
class Bar:
    """One version: where it is drawn and what it is at ``known_at``."""

    version: Fact
    value: str
    state: State
    label: Label
    """What the bar is called (its first word is ``state``)."""
    x: float
    width: float
    y: float
    open_ended: bool
    superseded_by: str | None
    challenges: tuple[Challenge, ...]


@dataclass(frozen=True, slots=True)
class Arrow:
    """From the end of a superseded fact's bar (its lower edge) to the start of the fact that
    superseded it (its upper edge)."""

    x1: float
    y1: float
    x2: float
    y2: float


@dataclass(frozen=True, slots=True)
class KeyTimeline:
    """One attribute of the subject: its bars in history order and its arrows."""

    attribute: str
    bars: tuple[Bar, ...]
    arrows: tuple[Arrow, ...]
    height: float
    believed: str | None
    """The value valid at ``known_at`` as believed then; None when none was."""


@dataclass(frozen=True, slots=True)
class Tick:
    """A labelled instant on the valid-time axis."""

    x: float
    label: str


@dataclass(frozen=True, slots=True)
class Timeline:
    """Every key of a subject as believed at ``known_at``, on one valid-time axis."""

    known_at: datetime
    start: datetime
    end: datetime
    ticks: tuple[Tick, ...]
    marker_x: float | None
    """Where ``known_at`` falls on the valid-time axis; None when outside it."""
    keys: tuple[KeyTimeline, ...]
    unrecorded: int
    """Versions recorded after ``known_at``, left out."""
    changes: tuple[datetime, ...]
    """Every instant at which what was believed changed, oldest first."""


def lay_out(
    versions: Sequence[Fact], conflicts: Sequence[ConflictRecord], *, known_at: datetime
) -> Timeline:
    """The timeline of ``versions`` (history order per attribute) as believed at ``known_at``."""
    # A version recorded and retired at one instant was never visible: it is never drawn.
    visible = [v for v in versions if v.retired_at is None or v.retired_at > v.recorded_at]
    shown = [v for v in visible if v.recorded_at <= known_at]
    start, end = _axis(shown, known_at)
    scale = _Scale(start, end)
    challenges = challenges_at(conflicts, known_at)
    attributes = list(dict.fromkeys(v.attribute for v in shown))
    keys = tuple(
        _key(
            attribute,
            [v for v in shown if v.attribute == attribute],
            known_at=known_at,
            scale=scale,
            challenges=challenges,
        )
        for attribute in attributes
    )
    changes = sorted(
        {v.recorded_at for v in visible}
        | {v.retired_at for v in visible if v.retired_at is not None}
        | {c.created_at for c in conflicts}
        | {c.resolved_at for c in conflicts if c.resolved_at is not None}
    )
    return Timeline(
        known_at=known_at,
        start=start,
        end=end,
        ticks=_ticks(scale),
        marker_x=scale.x(known_at) if start <= known_at <= end else None,
        keys=keys,
        unrecorded=len(visible) - len(shown),
        changes=tuple(changes),
    )


@dataclass(frozen=True, slots=True)
class _Scale:
    start: datetime
    end: datetime

    def x(self, at: datetime) -> float:
        share = (at - self.start) / (self.end - self.start)
        return round(min(max(share, 0.0), 1.0) * WIDTH, 1)


def _axis(shown: Sequence[Fact], known_at: datetime) -> tuple[datetime, datetime]:
    """The valid-time range drawn: every start and end shown, with a margin either side."""
    instants = [v.valid_from for v in shown] + [v.valid_to for v in shown if v.valid_to]
    low, high = (min(instants), max(instants)) if instants else (known_at, known_at)
    span = max(high - low, timedelta(days=1))
    # An open-ended value runs to the right edge: leave it room for its label.
    after = 0.6 if any(v.valid_to is None for v in shown) else 0.15
    return low - span * 0.15, high + span * after


def _ticks(scale: _Scale) -> tuple[Tick, ...]:
    span = scale.end - scale.start
    text = "%Y-%m-%d" if span >= timedelta(days=4) else "%Y-%m-%d %H:%M"
    instants = (scale.start + span * (n / (TICKS - 1)) for n in range(TICKS))
    return tuple(Tick(scale.x(at), at.strftime(text)) for at in instants)


def _key(
    attribute: str,
    versions: Sequence[Fact],
    *,
    known_at: datetime,
    scale: _Scale,
    challenges: dict[UUID, tuple[Challenge, ...]],
) -> KeyTimeline:
    believed = [v for v in versions if believed_at(v, known_at)]
    successors = {v.supersedes: v for v in believed if v.supersedes is not None}
    bars = []
    for row, version in enumerate(versions):
        x = scale.x(version.valid_from)
        end = scale.x(version.valid_to) if version.valid_to is not None else WIDTH
        successor = successors.get(version.fact_id)
        live = believed_at(version, known_at)
        faced = challenges.get(version.fact_id, ()) if live else ()
        label = bar_label(version, known_at, superseded=successor is not None, challenges=faced)
        bars.append(
            Bar(
                version=version,
                value=display_value(version.value),
                state=cast(State, label.state),
                label=label,
                x=x,
                width=max(end - x, 2.0),
                y=row * ROW + (ROW - BAR) / 2,
                open_ended=version.valid_to is None,
                superseded_by=display_value(successor.value) if successor else None,
                challenges=faced,
            )
        )
    return KeyTimeline(
        attribute=attribute,
        bars=tuple(bars),
        arrows=_arrows(bars, known_at),
        height=max(len(bars), 1) * ROW,
        believed=next((bar.value for bar in bars if bar.state == "current"), None),
    )


def _arrows(bars: Sequence[Bar], known_at: datetime) -> tuple[Arrow, ...]:
    """An arrow per believed fact that supersedes another, from the superseded fact's bar."""
    arrows = []
    for bar in bars:
        fact = bar.version
        if fact.supersedes is None or not believed_at(fact, known_at):
            continue
        before = [b for b in bars if b.version.fact_id == fact.supersedes]
        if not before:
            continue
        # The superseded fact as believed at the same time, else its latest version shown.
        live = [b for b in before if believed_at(b.version, known_at)]
        source = (live or before)[-1]
        arrows.append(Arrow(x1=source.x + source.width, y1=source.y + BAR, x2=bar.x, y2=bar.y))
    return tuple(arrows)
