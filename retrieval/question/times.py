"""Which instants a question asks about: valid time and known-at, from the caller or its words.

Pure. Dates set valid time. Only belief wording in the past tense ("what did we believe on...",
"what did we know on...", "as we understood it on...", "what was on record on...") sets
known-at (system time); "what do we know" is about now. With two dates and belief wording,
the date nearest the belief words is the known-at date and the other one the valid time.
Explicit parameters win, each on its own axis: an explicit ``valid_at`` (or period) ignores the
question's dates for valid time but belief wording may still set known-at, and vice versa.

A range the question states ("from 2004 to 2005", "in 1985": ``retrieval.question.periods``) sets a
valid-time period, found before belief wording looks for its date: a range is never known-at.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from retrieval.question.dates import DateMention
from retrieval.question.periods import Period, find_range, range_text, whole_period
from store.contract.times import format_timestamp, parse_timestamp

_BELIEF = re.compile(
    r"\bdid\s+(?:we|i|you|the\s+\w+)\s+"
    r"(?:believe|know|think|understand|assume|record|have\s+on\s+(?:record|file))\b"
    r"|\b(?:we|i|you)\s+(?:\w+\s+)?"
    r"(?:believed|knew|thought|understood|assumed|recorded|had\s+on\s+(?:record|file))\b"
    r"|\b(?:was|were)\s+(?:known|believed|understood|recorded|on\s+record|on\s+file)\b",
    re.IGNORECASE,
)


def question_times(
    dates: Sequence[DateMention],
    *,
    question: str,
    now: datetime,
    valid_at: datetime | None,
    known_at: datetime | None,
    reasons: dict[str, str],
    period: Period | None = None,
) -> tuple[datetime | None, datetime | None, Period | None]:
    """Valid time, known-at and the valid-time period from the caller, else from the question
    (None: unset). ``period`` is the caller's, when given.

    Each choice is explained in ``reasons`` under ``valid_at`` or ``known_at``.
    """
    valid = parse_timestamp(valid_at) if valid_at is not None else None
    known = parse_timestamp(known_at) if known_at is not None else None
    if valid is not None:
        reasons["valid_at"] = "The caller gave valid_at."
    if period is not None:
        reasons["valid_at"] = (
            f"The caller gave a period: {range_text(period.valid_from, period.valid_to)}."
        )
    if known is not None:
        reasons["known_at"] = "The caller gave known_at."

    remaining = list(dates)
    stated = find_range(question, remaining)
    if stated is not None:
        remaining = [date for date in remaining if date not in stated.mentions]
        period = _stated_period(stated, valid=valid, period=period, now=now, reasons=reasons)
    known = _belief_time(question, remaining, known=known, now=now, reasons=reasons)
    whole = whole_period(remaining[0]) if remaining and stated is None else None
    if whole is not None:
        period = _stated_period(whole, valid=valid, period=period, now=now, reasons=reasons)
    elif remaining:
        date = remaining[0]
        if valid is None and period is None:
            valid = date.instant
            reasons["valid_at"] = (
                f"The question names a date, which sets valid time: {date.explanation},"
                f" resolved against now ({format_timestamp(now)})."
            )
            if len(remaining) > 1:
                ignored = ", ".join(repr(other.text.strip()) for other in remaining[1:])
                reasons["valid_at"] += f" Later dates ({ignored}) were not used."
        else:
            reasons["valid_at"] += f" The question's date {date.text.strip()!r} yields."
    return valid, known, period


def _belief_time(
    question: str,
    remaining: list[DateMention],
    *,
    known: datetime | None,
    now: datetime,
    reasons: dict[str, str],
) -> datetime | None:
    """Known-at from belief wording and the date nearest it, taken out of ``remaining``."""
    belief = _BELIEF.search(question)
    if belief is not None and remaining:
        nearest = min(remaining, key=lambda date: _gap(date, belief.start(), belief.end()))
        remaining.remove(nearest)
        if known is None:
            reasons["known_at"] = (
                f"Belief wording ({belief.group(0)!r}) asks what was known at a time, so the"
                f" date beside it sets known-at: {nearest.explanation}, resolved against now"
                f" ({format_timestamp(now)})."
            )
            return nearest.instant
        reasons["known_at"] += f" The question's belief date {nearest.text.strip()!r} yields."
    elif belief is not None and known is None:
        reasons["known_at"] = (
            f"Belief wording ({belief.group(0)!r}) names no date, so known-at is now."
        )
    return known


def _stated_period(
    stated: Period,
    *,
    valid: datetime | None,
    period: Period | None,
    now: datetime,
    reasons: dict[str, str],
) -> Period | None:
    """The question's period, unless the caller set valid time (then it yields)."""
    if valid is not None or period is not None:
        reasons["valid_at"] += f" The question's period ({stated.explanation}) yields."
        return period
    reasons["valid_at"] = (
        f"The question names a period, which sets valid time: {stated.explanation},"
        f" resolved against now ({format_timestamp(now)})."
    )
    return stated


def _gap(date: DateMention, start: int, end: int) -> int:
    return max(0, date.start - end, start - date.end)
