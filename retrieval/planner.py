"""Question planning (read path steps 1-3): which mode, which instants, subject and attributes.

Pure: no database and no model. Attribute similarity scores come in from the caller (see
``retrieval.routing``); this module only decides, and says why in ``QuestionPlan.reasons``.

The question's dates are found and resolved to instants by ``retrieval.dates`` (its docstring
has the rules). Known subject names are blanked first, so "account:2024" is never a year.

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
from datetime import datetime
from typing import Any, Literal

from retrieval.dates import DateMention, find_dates
from store.times import format_timestamp, parse_timestamp

Mode = Literal["current", "point_in_time", "known_at"]

ROUTING_THRESHOLD = 0.4
"""Least cosine similarity (routing text vs. an attribute's best text) to route to it.

Measured with all-MiniLM-L6-v2 on the ten-attribute support-bot schema of
``tests/test_routing.py``, scoring ``routing_text`` of each question: the right attribute of
all 40 paraphrases ranked first with at least 0.420 ("Does he prefer concise replies?"), while
the best attribute of 21 unrelated questions scored at most 0.369 ("What's 17 times 23?" ->
birthday). 0.4 sits in that gap; at 0.35 one unrelated question would route, at 0.42 one
paraphrase would not.
"""

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
