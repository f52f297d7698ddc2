"""Which valid-time range a question asks about, when it asks about one. Pure.

A range is half-open, ``[valid_from, valid_to)``; either end may be open (None). The words
that state one, each end read as the whole period it names (``DateMention.span``):

- two dates joined by a range word: "from Mar 1998 to Sep 2004" (1998-03-01 to 2004-10-01:
  the end month counts whole), "in 2005 to 2006", "between 2006 and 2009", "2004 through
  2005";
- one bare year or month, without a day: "in 1985", "during 2010", "in March 2014";
- "until 2012" or "till June 2": from an open start to the end of the named period;
- "since 2019": from the start of the named period, with an open end.

"before" and "after" stay instants (``retrieval.question.dates``), as does a full date ("on
2026-06-02"). A range is valid time only: it never sets known-at.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from retrieval.question.dates import DateMention
from store.contract.times import format_timestamp
from store.errors import InvalidInput

_JOIN = re.compile(r"^\s*(?:to|through|thru|till|until|-|\u2013)\s*$", re.IGNORECASE)
_AND = re.compile(r"^\s*and\s*$", re.IGNORECASE)
_BETWEEN = re.compile(r"\bbetween\s+$", re.IGNORECASE)
_UNTIL = re.compile(r"\b(?:until|till|up\s+to|up\s+until)\s+$", re.IGNORECASE)
_SINCE = re.compile(r"\bsince\s+$", re.IGNORECASE)


@dataclass(frozen=True)
class Period:
    """A valid-time range ``[valid_from, valid_to)`` (None: open), the dates it was read from,
    and why."""

    valid_from: datetime | None
    valid_to: datetime | None
    mentions: tuple[DateMention, ...]
    explanation: str


def find_range(question: str, dates: Sequence[DateMention]) -> Period | None:
    """The first range the question states by its words among ``dates`` (two dates joined,
    "until", "since"), or None. Such a range is never a belief date."""
    for first, second in itertools.pairwise(dates):
        between = question[first.end : second.start]
        joined = _JOIN.match(between) is not None or (
            _AND.match(between) is not None and _BETWEEN.search(question[: first.start]) is not None
        )
        start, end = first.span[0], second.span[1]
        if joined and start < end:
            text = question[first.start : second.end].strip()
            return Period(start, end, (first, second), _explain(text, start, end))
    for date in dates:
        lead = question[: date.start]
        text = date.text.strip()
        if _UNTIL.search(lead):
            return Period(
                None, date.span[1], (date,), _explain(f"until {text}", None, date.span[1])
            )
        if _SINCE.search(lead):
            return Period(
                date.span[0], None, (date,), _explain(f"since {text}", date.span[0], None)
            )
    return None


def whole_period(date: DateMention) -> Period | None:
    """The whole month or year a bare month or year names ("in 1985"), or None."""
    if not date.whole:
        return None
    return Period(*date.span, (date,), _explain(date.text.strip(), *date.span))


def _explain(text: str, start: datetime | None, end: datetime | None) -> str:
    return f"{text!r} means {range_text(start, end)}"


def range_text(start: datetime | None, end: datetime | None) -> str:
    """A range in words: "from X to Y", "from X on", "until Y" (Y itself not included)."""
    if start is None and end is None:
        return "any time"
    if start is None:
        assert end is not None
        return f"until {format_timestamp(end)} (not included)"
    if end is None:
        return f"from {format_timestamp(start)} on"
    return f"from {format_timestamp(start)} to {format_timestamp(end)} (not included)"


def check_period(
    valid_from: datetime | None, valid_to: datetime | None, *, valid_at: datetime | None
) -> None:
    """Refuse a period a read cannot ask: one that ends before it starts, or one beside an
    instant (InvalidInput naming the field at fault)."""
    if valid_from is None and valid_to is None:
        return
    if valid_at is not None:
        raise InvalidInput(
            "valid_at asks about one instant and valid_from/valid_to about a period: give one",
            field="valid_at",
        )
    if valid_from is not None and valid_to is not None and valid_to <= valid_from:
        raise InvalidInput("valid_to must be later than valid_from", field="valid_to")
