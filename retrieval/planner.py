"""Question planning (read path steps 1-3): which mode, which instants, subject and attributes.

Pure: no database and no model. Attribute similarity scores come in from the caller (see
``retrieval.routing``); this module only decides, and says why in ``QuestionPlan.reasons``.

How the question's words become instants, resolved against ``now`` (the decision's clock):

- A date without a time of day ("on June 2", "2026-06-02") means noon UTC of that day, so a
  fact that started that morning (in UTC or in most offsets) counts as valid on that day.
- A month ("in March 2025") means noon UTC on its 15th; a year ("in 1980") noon UTC on July 1.
  Both are the middle of the period, not a boundary where a change is as likely as not.
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
  word ("in May", "in 1980", "during summer 2024", "before 1980"). "on the 2nd" (no month),
  abbreviated months without a day ("Jan" may be a name) and times without a date are not
  dates. Known subject names are blanked first, so "account:2024" is never a year.

Dates set valid time. Only belief wording in the past tense ("what did we believe on...",
"what did we know on...", "as we understood it on...", "what was on record on...") sets
known-at (system time); "what do we know" is about now. With two dates and belief wording,
the date nearest the belief words is the known-at date and the other one the valid time.
Explicit parameters win, each on its own axis: an explicit ``valid_at`` ignores the question's
dates for valid time but belief wording may still set known-at, and vice versa.

``attributes`` that is empty counts as naming none, so the question is routed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from dateparser.date import DateDataParser

from store.times import format_timestamp, parse_timestamp

Mode = Literal["current", "point_in_time", "known_at"]
Period = Literal["time", "day", "week", "month", "year"]

ROUTING_THRESHOLD = 0.4
"""Least cosine similarity (routing text vs. an attribute's best text) to route to it.

Measured with all-MiniLM-L6-v2 on the ten-attribute support-bot schema of
``tests/test_routing.py``, scoring ``routing_text`` of each question: the right attribute of
all 40 paraphrases ranked first with at least 0.420 ("Does he prefer concise replies?"), while
the best attribute of 21 unrelated questions scored at most 0.369 ("What's 17 times 23?" ->
birthday). 0.4 sits in that gap; at 0.35 one unrelated question would route, at 0.42 one
paraphrase would not.
"""

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
        "through", "throughout", "early", "late", "mid", "around", "circa", "summer", "winter",
        "spring", "autumn", "fall",
    }
)  # fmt: skip
_WORD_BEFORE = re.compile(r"([A-Za-z]+)[^A-Za-z0-9]*$")
_BEFORE = re.compile(r"\b(?:before|prior\s+to|earlier\s+than)\s*$", re.IGNORECASE)
_AFTER = re.compile(r"\b(?:after|later\s+than)\s*$", re.IGNORECASE)
_DATE_LEAD = re.compile(
    r"\b(?:on|in|at|of|as\s+of|since|before|after|by|during|until|till|from|prior\s+to"
    r"|earlier\s+than|later\s+than|early|late|mid|around|summer|winter|spring|autumn|fall)"
    r"(?:\s+(?:summer|winter|spring|autumn|fall))?\s+$",
    re.IGNORECASE,
)
_POSSESSIVE = re.compile(r"(?:['\u2019]s\b|['\u2019])")
_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([,.;:?!])")
_PUNCTUATION_RUN = re.compile(r"([,;:])(?:\s*[,;:])+")

_BELIEF = re.compile(
    r"\bdid\s+(?:we|i|you|the\s+\w+)\s+"
    r"(?:believe|know|think|understand|assume|record|have\s+on\s+(?:record|file))\b"
    r"|\b(?:we|i|you)\s+(?:\w+\s+)?"
    r"(?:believed|knew|thought|understood|assumed|recorded|had\s+on\s+(?:record|file))\b"
    r"|\b(?:was|were)\s+(?:known|believed|understood|recorded|on\s+record|on\s+file)\b",
    re.IGNORECASE,
)
_SEPARATORS = re.compile(r"[\s_\-.:]+")


@dataclass(frozen=True)
class KnownSubject:
    """A subject the question may name: its id and other names for it."""

    subject: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class AttributeScore:
    """How similar the question is to one attribute's description and aliases."""

    attribute: str
    score: float


@dataclass(frozen=True)
class DateMention:
    """A date the question names, resolved to one instant."""

    text: str
    start: int
    end: int
    instant: datetime
    explanation: str


@dataclass(frozen=True)
class SubjectMention:
    """Where the question names a known subject."""

    subject: str
    text: str
    start: int
    end: int
    alias: bool


@dataclass(frozen=True)
class QuestionPlan:
    """The read a question asks for, with the reason for every choice."""

    mode: Mode
    valid_at: datetime
    known_at: datetime
    subject: str | None
    attributes: tuple[str, ...]
    routed: bool
    reasons: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The plan in JSON's words, timestamps as RFC 3339 with ``Z``."""
        return {
            "mode": self.mode,
            "valid_at": format_timestamp(self.valid_at),
            "known_at": format_timestamp(self.known_at),
            "subject": self.subject,
            "attributes": list(self.attributes),
            "routed": self.routed,
            "reasons": dict(self.reasons),
        }


def plan_question(
    question: str,
    *,
    now: datetime,
    subject: str | None = None,
    attributes: Sequence[str] | None = None,
    valid_at: datetime | None = None,
    known_at: datetime | None = None,
    known_subjects: Sequence[KnownSubject] = (),
    attribute_scores: Sequence[AttributeScore] = (),
    threshold: float = ROUTING_THRESHOLD,
    max_attributes: int = 3,
) -> QuestionPlan:
    """Decide mode, instants, subject and attributes for a question; explicit parameters win."""
    if max_attributes < 1:
        raise ValueError("max_attributes must be at least 1")
    now = parse_timestamp(now)
    reasons: dict[str, str] = {}

    mentions = find_subject_mentions(question, known_subjects)
    if subject is not None:
        reasons["subject"] = f"The caller named subject {subject!r}."
        mentions = (*mentions, *find_subject_mentions(question, [KnownSubject(subject)]))
    else:
        subject = _choose_subject(mentions, reasons)

    dates = find_dates(_blank(question, mentions), now=now)
    valid, known = _times(
        dates,
        question=question,
        now=now,
        valid_at=valid_at,
        known_at=known_at,
        reasons=reasons,
    )
    mode: Mode
    if known is not None:
        mode = "known_at"
        reasons["mode"] = (
            "Known-at: a known-at time was set (see known_at), so the read sees only what was"
            " recorded by then (system time)."
        )
        if valid is None:
            valid = known
            reasons["valid_at"] = (
                "Nothing set valid time, so it defaults to the known-at time:"
                " what was believed then about then."
            )
    elif valid is not None:
        mode = "point_in_time"
        reasons["mode"] = (
            "Point in time: a valid time was set (see valid_at), so the read asks what was true"
            " at that instant, as known now."
        )
        reasons.setdefault("known_at", "Nothing asks about past belief, so known-at is now.")
    else:
        mode = "current"
        reasons["mode"] = (
            "Current: no date in the question and no valid_at or known_at given,"
            " so the read asks what is true now."
        )
        reasons["valid_at"] = "No date was given, so valid time is now."
        reasons.setdefault("known_at", "Nothing asks about past belief, so known-at is now.")

    chosen, routed = _choose_attributes(
        attributes,
        attribute_scores,
        threshold=threshold,
        max_attributes=max_attributes,
        reasons=reasons,
    )
    return QuestionPlan(
        mode=mode,
        valid_at=valid if valid is not None else now,
        known_at=known if known is not None else now,
        subject=subject,
        attributes=chosen,
        routed=routed,
        reasons=reasons,
    )


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
        if kind in _NEEDS_LEAD_IN and not _lead_in(question, match.start()):
            continue
        if kind == "month" and _SHORT_MONTH.fullmatch(text):
            continue
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
        if mention is not None:
            mentions.append(mention)
    return tuple(mentions)


def routing_text(
    question: str,
    *,
    now: datetime,
    subject: str | None = None,
    known_subjects: Sequence[KnownSubject] = (),
) -> str:
    """The question without subject names and dates: the words attribute routing compares."""
    names = [*known_subjects, *([KnownSubject(subject)] if subject is not None else [])]
    mentions = find_subject_mentions(question, names)
    cuts: list[tuple[int, int]] = []
    for mention in mentions:
        possessive = _POSSESSIVE.match(question, mention.end)
        cuts.append((mention.start, possessive.end() if possessive else mention.end))
    for date in find_dates(_blank(question, mentions), now=now):
        lead = _DATE_LEAD.search(question[: date.start])
        cuts.append((lead.start() if lead else date.start, date.end))
    kept: list[str] = []
    cursor = 0
    for start, end in sorted(cuts):
        kept.append(question[cursor:start] if start > cursor else "")
        cursor = max(cursor, end)
    kept.append(question[cursor:])
    text = " ".join("".join(kept).split())
    text = _PUNCTUATION_RUN.sub(r"\1", _SPACE_BEFORE_PUNCTUATION.sub(r"\1", text))
    text = text.strip(" ,;:")
    return text if any(char.isalnum() for char in text) else question


def find_subject_mentions(
    question: str, known_subjects: Sequence[KnownSubject]
) -> tuple[SubjectMention, ...]:
    """Every place the question names a known subject by id or alias, in order."""
    mentions: list[SubjectMention] = []
    for known in known_subjects:
        names = [(known.subject, False)] + [(alias, True) for alias in known.aliases]
        for name, alias in names:
            pattern = _name_pattern(name)
            if pattern is None:
                continue
            mentions.extend(
                SubjectMention(known.subject, match.group(0), match.start(), match.end(), alias)
                for match in pattern.finditer(question)
            )
    mentions.sort(key=lambda mention: (mention.start, -(mention.end - mention.start)))
    return tuple(mentions)


def _name_pattern(name: str) -> re.Pattern[str] | None:
    parts = [part for part in _SEPARATORS.split(name.strip()) if part]
    if not parts:
        return None
    body = r"[\s_\-.:]+".join(re.escape(part) for part in parts)
    return re.compile(rf"(?<![A-Za-z0-9]){body}(?![A-Za-z0-9])", re.IGNORECASE)


def _choose_subject(mentions: Sequence[SubjectMention], reasons: dict[str, str]) -> str | None:
    if not mentions:
        reasons["subject"] = "The question names no known subject, and the caller gave none."
        return None
    best = max(mentions, key=lambda mention: (len(mention.text), -mention.start))
    how = "an alias of" if best.alias else "the id of"
    reason = f"The question names {best.text!r}, {how} subject {best.subject!r}."
    others = sorted({mention.subject for mention in mentions} - {best.subject})
    if others:
        reason += (
            f" It also names {', '.join(repr(other) for other in others)};"
            " the longest name (then the first) wins."
        )
    reasons["subject"] = reason
    return best.subject


def _blank(question: str, mentions: Sequence[SubjectMention]) -> str:
    """The question with subject names replaced by spaces, so ids are never read as dates."""
    chars = list(question)
    for mention in mentions:
        chars[mention.start : mention.end] = " " * (mention.end - mention.start)
    return "".join(chars)


def _lead_in(question: str, position: int) -> bool:
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
    return DateMention(text, start, start + len(text), instant, explanation)


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


def _times(
    dates: Sequence[DateMention],
    *,
    question: str,
    now: datetime,
    valid_at: datetime | None,
    known_at: datetime | None,
    reasons: dict[str, str],
) -> tuple[datetime | None, datetime | None]:
    """Valid time and known-at time from the caller, else from the question (None: unset)."""
    valid = parse_timestamp(valid_at) if valid_at is not None else None
    known = parse_timestamp(known_at) if known_at is not None else None
    if valid is not None:
        reasons["valid_at"] = "The caller gave valid_at."
    if known is not None:
        reasons["known_at"] = "The caller gave known_at."

    remaining = list(dates)
    belief = _BELIEF.search(question)
    if belief is not None and remaining:
        nearest = min(remaining, key=lambda date: _gap(date, belief.start(), belief.end()))
        remaining.remove(nearest)
        if known is None:
            known = nearest.instant
            reasons["known_at"] = (
                f"Belief wording ({belief.group(0)!r}) asks what was known at a time, so the"
                f" date beside it sets known-at: {nearest.explanation}, resolved against now"
                f" ({format_timestamp(now)})."
            )
        else:
            reasons["known_at"] += f" The question's belief date {nearest.text.strip()!r} yields."
    elif belief is not None and known is None:
        reasons["known_at"] = (
            f"Belief wording ({belief.group(0)!r}) names no date, so known-at is now."
        )
    if remaining:
        date = remaining[0]
        if valid is None:
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
    return valid, known


def _gap(date: DateMention, start: int, end: int) -> int:
    return max(0, date.start - end, start - date.end)


def _choose_attributes(
    attributes: Sequence[str] | None,
    scores: Sequence[AttributeScore],
    *,
    threshold: float,
    max_attributes: int,
    reasons: dict[str, str],
) -> tuple[tuple[str, ...], bool]:
    if attributes:
        named = tuple(dict.fromkeys(attributes))
        reasons["attributes"] = f"The caller named {', '.join(named)}."
        return named, True
    best: dict[str, float] = {}
    for item in scores:
        best[item.attribute] = max(item.score, best.get(item.attribute, item.score))
    ranked = sorted(best.items(), key=lambda pair: (-pair[1], pair[0]))
    passed = [(name, score) for name, score in ranked if score >= threshold]
    if not passed:
        closest = f" (closest: {ranked[0][0]} at {ranked[0][1]:.2f})" if ranked else ""
        reasons["attributes"] = (
            f"No attribute is similar enough to the question (threshold {threshold:.2f})"
            f"{closest}, so no attribute was routed and any evidence is unverified."
        )
        return (), False
    chosen = passed[:max_attributes]
    listed = ", ".join(f"{name} ({score:.2f})" for name, score in chosen)
    reason = f"Routed by similarity at or above {threshold:.2f}, best first: {listed}."
    if len(passed) > max_attributes:
        reason += f" {len(passed) - max_attributes} more passed; at most {max_attributes} are used."
    reasons["attributes"] = reason
    return tuple(name for name, _ in chosen), True
