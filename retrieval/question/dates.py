"""Date finding for question planning: which instants a question's words name.

Pure: no database and no model. Words are resolved against ``now`` (the decision's clock):

- A date without a time of day ("on June 2", "2026-06-02") means noon UTC of that day, so a
  fact that started that morning (in UTC or in most offsets) counts as valid on that day.
- A month ("in March 2025") or a year ("in 1980") names a whole period: its ``span`` is the
  half-open range it covers (``retrieval.question.periods`` reads it as a valid-time range). Its
  ``instant``, the middle of the period (noon UTC on the 15th, or on July 1), is what a
  belief date ("what did we know in March 2025") resolves to, known-at being an instant.
- A date with a time of day ("at 2026-06-02T10:00:00Z") is that instant.
- A relative phrase ("yesterday", "last week", "3 days ago") counts back from ``now`` and keeps
  its time of day: "yesterday" is ``now`` minus one day.
- "before X" is one second before X starts; "after X" is the first instant after X ends.
- "today" and "now" are not dates: such a question asks about the current state.
- Candidate dates are found by a whitelist of patterns, then resolved by dateparser (English,
  UTC, relative to ``now``, preferring the past when the year is missing: "on June 2" asked
  on June 1 is last year's). dateparser's own ``search_dates`` is not used: it reads "we" as
  Wednesday, "now", "May I", "a second" and "sat" as dates, turns "before June 2" into "June"
  (the 4th, today's day) and "account 42 on Monday" into 1942. The patterns: ISO dates and
  timestamps, month/day/year with slashes (US order), a month name with a day or a year,
  a relative phrase (yesterday, tomorrow, last/next week/month/year, N units ago, N units from
  now, in N units), a full weekday name, and a bare month name or year only after a lead-in
  word ("in May", "in 1980", "during summer 2024", "before 1980"), or after a range word
  ("to", "and", "through", "until") that follows a date: "from 2004 to 2005". "on the 2nd"
  (no month), abbreviated months without a day ("Jan" may be a name) and times without a date
  are not dates. The planner blanks known subject names first, so "account:2024" is never a year.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from dateparser.date import DateDataParser

from store.contract.times import format_timestamp, parse_timestamp

Period = Literal["time", "day", "week", "month", "year"]

_LANGUAGES = ["en"]
_PERIODS: dict[str, Period] = {
    "time": "time",
    "day": "day",
    "week": "week",
    "month": "month",
    "year": "year",
}
_ONE_SECOND = timedelta(seconds=1)

_NUMBER = r"\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
_UNIT = r"(?:second|minute|hour|day|week|fortnight|month|year)s?"
_MONTH = (
    r"(?:january|february|march|april|may|june|july|august|september|october|november"
    r"|december|(?:jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\.?)"
)
_DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?(?!\d)"
_YEAR = r"[12]\d{3}(?!\d)"
_CANDIDATES = re.compile(
    r"\b(?:"
    r"(?P<iso>\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?)"
    r"|(?P<slashed>\d{1,2}/\d{1,2}/(?:\d{4}|\d{2})(?!\d))"
    rf"|(?P<month_day>{_MONTH}\s+{_DAY}(?:,?\s+{_YEAR})?|{_DAY}\s+(?:of\s+)?{_MONTH}(?:,?\s+{_YEAR})?)"
    rf"|(?P<month_year>{_MONTH},?\s+{_YEAR})"
    rf"|(?P<relative>yesterday|tomorrow|(?:last|next)\s+(?:week|month|year)"
    rf"|(?:{_NUMBER})\s+{_UNIT}\s+(?:ago|from\s+now)|in\s+(?:{_NUMBER})\s+{_UNIT})"
    r"|(?P<weekday>(?:last\s+)?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))"
    rf"|(?P<month>{_MONTH})"
    rf"|(?P<year>{_YEAR})"
    r")(?![\w-])",
    re.IGNORECASE,
)
_NEEDS_LEAD_IN = frozenset({"month", "year"})
_SHORT_MONTH = re.compile(r"(?:jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\.?", re.IGNORECASE)
_LEAD_INS = frozenset(
    {
        "in", "on", "of", "since", "before", "after", "by", "during", "until", "till", "from",
        "between", "through", "throughout", "early", "late", "mid", "around", "circa", "summer",
        "winter", "spring", "autumn", "fall",
    }
)  # fmt: skip
_WORD_BEFORE = re.compile(r"([A-Za-z]+)[^A-Za-z0-9]*$")
_BEFORE = re.compile(r"\b(?:before|prior\s+to|earlier\s+than)\s*$", re.IGNORECASE)
_AFTER = re.compile(r"\b(?:after|later\s+than)\s*$", re.IGNORECASE)
_RANGE_WORD = re.compile(r"^\s*(?:to|and|through|thru|till|until|-|\u2013)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class DateMention:
    """A date the question names, resolved to one instant."""

    text: str
    start: int
    end: int
    instant: datetime
    explanation: str
    span: tuple[datetime, datetime]
    """The period the words name, half-open: a day, a month, a year (an instant: itself)."""
    whole: bool = False
    """A bare month or year, without a day and without "before" or "after": a whole period."""


def find_dates(question: str, *, now: datetime) -> tuple[DateMention, ...]:
    """Dates and relative dates the question names, in order, each resolved against ``now``."""
    now = parse_timestamp(now)
    parser = DateDataParser(
        languages=_LANGUAGES,
        settings={
            "RELATIVE_BASE": now.replace(tzinfo=None),
            "TIMEZONE": "UTC",
            "TO_TIMEZONE": "UTC",
            "RETURN_AS_TIMEZONE_AWARE": True,
            "PREFER_DATES_FROM": "past",
            "RETURN_TIME_AS_PERIOD": True,
        },
    )
    mentions: list[DateMention] = []
    for match in _CANDIDATES.finditer(question):
        kind = match.lastgroup or ""
        text = match.group(0)
        previous = mentions[-1].end if mentions else None
        if kind in _NEEDS_LEAD_IN and not _lead_in(question, match.start(), previous):
            continue
        if kind == "month" and _SHORT_MONTH.fullmatch(text):
            continue
        try:
            data = parser.get_date_data(text)
            if data.date_obj is None:
                continue
            mention = _resolve(
                text,
                start=match.start(),
                parsed=data.date_obj.astimezone(UTC),
                period="time" if kind == "relative" else _period(data.period or "day"),
                relative=kind == "relative",
                before=_BEFORE.search(question[: match.start()]) is not None,
                after=_AFTER.search(question[: match.start()]) is not None,
            )
        except OverflowError:  # outside years 1-9999 in UTC: no instant to read at
            continue
        if mention is not None:
            mentions.append(mention)
    return tuple(mentions)


def _lead_in(question: str, position: int, previous: int | None) -> bool:
    if previous is not None and _RANGE_WORD.match(question[previous:position]):
        return True  # the second end of a range: "from 2004 to 2005"
    before = question[:position]
    if _BEFORE.search(before) or _AFTER.search(before):
        return True
    word = _WORD_BEFORE.search(before)
    return word is not None and word.group(1).lower() in _LEAD_INS


def _resolve(
    text: str,
    *,
    start: int,
    parsed: datetime,
    period: Period,
    relative: bool,
    before: bool,
    after: bool,
) -> DateMention | None:
    """One instant for a matched date, following the rules in the module docstring."""
    span = period
    first, last = _bounds(parsed, span)
    try:
        if before:
            instant, how = first - _ONE_SECOND, "one second before it starts"
        elif after:
            instant, how = (last, "the first instant after it ends")
            if span == "time":
                instant, how = last + _ONE_SECOND, "one second after it"
        elif span == "time":
            how = "counted from now" if relative else "the instant it names"
            instant = first
        else:
            instant, how = _middle(first, span)
    except OverflowError:
        return None
    explanation = f"{text.strip()!r} means {format_timestamp(instant)} ({how})"
    whole = span in ("month", "year") and not before and not after
    return DateMention(
        text, start, start + len(text), instant, explanation, (first, last), whole=whole
    )


def _period(name: str) -> Period:
    return _PERIODS.get(name, "day")


def _bounds(parsed: datetime, span: Period) -> tuple[datetime, datetime]:
    """The first instant of the named period and the first instant after it."""
    if span == "time":
        return parsed, parsed
    if span == "year":
        first = datetime(parsed.year, 1, 1, tzinfo=UTC)
        return first, first.replace(year=parsed.year + 1)
    if span == "month":
        first = datetime(parsed.year, parsed.month, 1, tzinfo=UTC)
        following = (first + timedelta(days=32)).replace(day=1)
        return first, following
    first = datetime(parsed.year, parsed.month, parsed.day, tzinfo=UTC)
    return first, first + timedelta(days=1)


def _middle(first: datetime, span: Period) -> tuple[datetime, str]:
    if span == "year":
        return first.replace(month=7, hour=12), "noon UTC on July 1, the middle of the year"
    if span == "month":
        return first.replace(day=15, hour=12), "noon UTC on the 15th, the middle of the month"
    return first.replace(hour=12), "noon UTC of that day"
