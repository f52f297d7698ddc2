"""Where a bar's label goes: inside the bar when it fits, else beside it, never past an edge.

Positions are in the drawing's units (``WIDTH`` of them across the axis); the page draws them
as shares of the chart's width, so bars stretch with the screen while text keeps its size. A
label is placed for a chart ``chart_px`` pixels wide, assuming ``CHAR_PX`` per character: the
page places each label twice, for a wide and a narrow screen, and the stylesheet shows one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

WIDTH = 960.0
"""The drawing's width in units; a bar's ``x`` and ``width`` are within it."""
WIDE_PX = 1000.0
"""The chart's width on a desktop screen (1280 px), in CSS pixels."""
NARROW_PX = 340.0
"""The chart's width on a phone (390 px), in CSS pixels."""
CHAR_PX = 7.0
"""A generous average width of one character of the 12 px labels."""
PAD_PX = 4.0
"""Space between a label and the bar's edge."""
ELLIPSIS = "…"

Anchor = Literal["start", "end"]
Place = Literal["inside", "after", "before"]


@dataclass(frozen=True, slots=True)
class LabelPlace:
    """A label as drawn: its text (shortened when no side holds it), where it is anchored, and
    whether it sits on the bar (light text) or beside it (dark text)."""

    text: str
    x: float
    anchor: Anchor
    place: Place


def place_label(text: str, *, x: float, width: float, chart_px: float) -> LabelPlace:
    """Inside the bar when the text fits there, else after its end, else before its start,
    else on the roomier side shortened to fit: a label never runs past either edge."""
    per_px = WIDTH / chart_px
    pad = PAD_PX * per_px
    need = len(text) * CHAR_PX * per_px
    end = x + width
    if need + 2 * pad <= width:
        return LabelPlace(text, x + pad, "start", "inside")
    after, before = WIDTH - end - pad, x - pad
    if need <= after:
        return LabelPlace(text, end + pad, "start", "after")
    if need <= before:
        return LabelPlace(text, x - pad, "end", "before")
    room = max(after, before)
    short = shorten(text, int(room / (CHAR_PX * per_px)))
    if room == after:
        return LabelPlace(short, end + pad, "start", "after")
    return LabelPlace(short, x - pad, "end", "before")


def shorten(text: str, chars: int) -> str:
    """``text`` cut to ``chars`` characters, an ellipsis marking the cut."""
    if len(text) <= chars:
        return text
    return text[: max(chars - 1, 0)].rstrip() + ELLIPSIS if chars > 0 else ""
