"""A subject's keys as timelines, as believed at one instant: a pure layout the page draws.

Each version believed at ``known_at`` (the design's knowledge at S) is a bar over its valid
window on one axis of valid time shared by every key; the axis runs from the first value to
the later of now and the last start or end, with a marker at now and one at ``known_at``. A
version not yet recorded then is left out; one believed then is ``current`` (valid at S),
``future``, ``past`` or ``superseded`` (its valid window is over and a fact believed then
supersedes its fact). One no longer believed then is ``retired``: it is folded under the bar of
its fact (the value it belonged to) rather than drawn. Arrows go from a superseded fact to the
fact that superseded it; a fact facing an open equal-start conflict at S carries its
challengers. What a bar or a challenger is called (``current · disputed``, ``in conflict``,
``past · unverified``) is ``store.contract.labels``' rule, as the API and the context block
name it; what each is at S, ``server.ui.timeline_states``'.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import cast
from uuid import UUID

from server.ui.timeline_axis import Marker, Scale, Tick, axis, by_second, markers, ticks
from server.ui.timeline_labels import NARROW_PX, WIDE_PX, WIDTH, LabelPlace, place_label
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

__all__ = ["WIDTH", "Timeline", "lay_out"]

ROW = 30.0
"""Height of one bar's row, in pixels."""
BAR = 18.0
"""Height of a bar within its row."""
MARKS = 32.0
"""Height of the two lines above the rows that name the markers (known at, now)."""
AXIS = 22.0
"""Height of the axis under the rows."""
MIN_WIDTH = 0.012 * WIDTH
"""The narrowest bar drawn: a value valid for an hour on a year's axis stays visible."""


@dataclass(frozen=True, slots=True)
class Bar:
    """One version: where it is drawn, what it is at ``known_at``, and its label's place on a
    wide and on a narrow screen."""

    version: Fact
    value: str
    state: State
    label: Label
    """What the bar is called (its first word is ``state``)."""
    words: str
    """The label as the page says it (``current then`` when ``known_at`` is not now)."""
    x: float
    width: float
    y: float
    open_ended: bool
    superseded_by: str | None
    challenges: tuple[Challenge, ...]
    wide: LabelPlace
    narrow: LabelPlace
    retired: tuple[Bar, ...] = ()
    """Earlier beliefs of this bar's fact, retired by ``known_at``: folded under it."""


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
    retired: tuple[Bar, ...]
    """Retired beliefs whose fact has no version believed at ``known_at``."""

    @property
    def rows_end(self) -> float:
        """Where the rows end and the axis begins."""
        return self.height - AXIS


@dataclass(frozen=True, slots=True)
class Timeline:
    """Every key of a subject as believed at ``known_at``, on one valid-time axis."""

    known_at: datetime
    now: datetime
    start: datetime
    end: datetime
    ticks: tuple[Tick, ...]
    markers: tuple[Marker, ...]
    """Now, and known at when it is not now."""
    keys: tuple[KeyTimeline, ...]
    unrecorded: int
    """Versions recorded after ``known_at``, left out."""
    first_recorded: datetime | None
    """When the server first recorded a version of this subject; None when it never did."""
    changes: tuple[datetime, ...]
    """When what was believed changed, oldest first: the last change of each second."""


def lay_out(
    versions: Sequence[Fact],
    conflicts: Sequence[ConflictRecord],
    *,
    known_at: datetime,
    now: datetime,
) -> Timeline:
    """The timeline of ``versions`` (history order per attribute) as believed at ``known_at``."""
    # A version recorded and retired at one instant was never visible: it is never drawn.
    visible = [v for v in versions if v.retired_at is None or v.retired_at > v.recorded_at]
    shown = [v for v in visible if v.recorded_at <= known_at]
    scale = axis(shown, known_at=known_at, now=now)
    challenges = challenges_at(conflicts, known_at)
    attributes = list(dict.fromkeys(v.attribute for v in shown))
    keys = tuple(
        _key(
            attribute,
            [v for v in shown if v.attribute == attribute],
            at=(known_at, now),
            scale=scale,
            challenges=challenges,
        )
        for attribute in attributes
    )
    changes = (
        {v.recorded_at for v in visible}
        | {v.retired_at for v in visible if v.retired_at is not None}
        | {c.created_at for c in conflicts}
        | {c.resolved_at for c in conflicts if c.resolved_at is not None}
    )
    return Timeline(
        known_at=known_at,
        now=now,
        start=scale.start,
        end=scale.end,
        ticks=ticks(scale),
        markers=markers(scale, known_at=known_at, now=now),
        keys=keys,
        unrecorded=len(visible) - len(shown),
        first_recorded=min((v.recorded_at for v in visible), default=None),
        changes=by_second(changes),
    )


def _key(
    attribute: str,
    versions: Sequence[Fact],
    *,
    at: tuple[datetime, datetime],
    scale: Scale,
    challenges: dict[UUID, tuple[Challenge, ...]],
) -> KeyTimeline:
    known_at, now = at
    believed = [v for v in versions if believed_at(v, known_at)]
    successors = {v.supersedes: v for v in believed if v.supersedes is not None}
    drawn: list[Bar] = []
    for version in versions:
        successor = successors.get(version.fact_id)
        live = believed_at(version, known_at)
        faced = challenges.get(version.fact_id, ()) if live else ()
        label = bar_label(version, known_at, superseded=successor is not None, challenges=faced)
        drawn.append(
            _bar(
                version,
                label,
                row=len(drawn),
                scale=scale,
                then=known_at != now,
                superseded_by=display_value(successor.value) if successor else None,
                challenges=faced,
            )
        )
    live_bars = [bar for bar in drawn if bar.state != "retired"]
    retired = [bar for bar in drawn if bar.state == "retired"]
    owners = {bar.version.fact_id for bar in live_bars}
    bars = tuple(
        _replace_row(
            bar,
            row=row,
            retired=tuple(r for r in retired if r.version.fact_id == bar.version.fact_id),
        )
        for row, bar in enumerate(live_bars)
    )
    return KeyTimeline(
        attribute=attribute,
        bars=bars,
        arrows=_arrows(bars),
        height=MARKS + max(len(bars), 1) * ROW + AXIS,
        believed=next((bar.value for bar in bars if bar.state == "current"), None),
        retired=tuple(r for r in retired if r.version.fact_id not in owners),
    )


def _bar(
    version: Fact,
    label: Label,
    *,
    row: int,
    scale: Scale,
    then: bool,
    superseded_by: str | None,
    challenges: tuple[Challenge, ...],
) -> Bar:
    """A version's bar at least ``MIN_WIDTH`` wide, kept within the axis."""
    x = scale.x(version.valid_from)
    end = scale.x(version.valid_to) if version.valid_to is not None else WIDTH
    width = max(end - x, MIN_WIDTH)
    x = min(x, WIDTH - width)
    value = display_value(version.value)
    state = cast(State, label.state)
    words = " · ".join(("current then" if then and state == "current" else state, *label.marks))
    text = f"{value} · {words}"
    return Bar(
        version=version,
        value=value,
        state=state,
        label=label,
        words=words,
        x=x,
        width=width,
        y=_row_y(row),
        open_ended=version.valid_to is None,
        superseded_by=superseded_by,
        challenges=challenges,
        wide=place_label(text, x=x, width=width, chart_px=WIDE_PX),
        narrow=place_label(text, x=x, width=width, chart_px=NARROW_PX),
    )


def _row_y(row: int) -> float:
    return MARKS + row * ROW + (ROW - BAR) / 2


def _replace_row(bar: Bar, *, row: int, retired: tuple[Bar, ...]) -> Bar:
    return replace(bar, y=_row_y(row), retired=retired)


def _arrows(bars: Sequence[Bar]) -> tuple[Arrow, ...]:
    """An arrow per believed fact that supersedes another, from the superseded fact's bar."""
    arrows = []
    for bar in bars:
        fact = bar.version
        source = next((b for b in bars if b.version.fact_id == fact.supersedes), None)
        if fact.supersedes is None or source is None:
            continue
        arrows.append(Arrow(x1=source.x + source.width, y1=source.y + BAR, x2=bar.x, y2=bar.y))
    return tuple(arrows)
