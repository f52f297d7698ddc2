"""Reading a question's words: the subject it names, and what is left to route.

Pure. ``retrieval.question.names`` scores the names the question's words may be; here the best one
is chosen (or none, on a tie), and a subject named by its id or an alias is matched whole and
case-insensitively, with any of ``_ - . :`` or spaces between its parts ("account 42" names
``account:42``). Known subject names are blanked before dates are looked for, so "account:2024" is
never a year.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from retrieval.question.dates import find_dates

_DATE_LEAD = re.compile(
    r"\b(?:on|in|at|of|as\s+of|since|before|after|by|during|until|till|from|prior\s+to"
    r"|between|to|and|through|thru|throughout"
    r"|earlier\s+than|later\s+than|early|late|mid|around|summer|winter|spring|autumn|fall)"
    r"(?:\s+(?:summer|winter|spring|autumn|fall))?\s+$",
    re.IGNORECASE,
)
_POSSESSIVE = re.compile(r"(?:['\u2019]s\b|['\u2019])")
_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([,.;:?!])")
_PUNCTUATION_RUN = re.compile(r"([,;:])(?:\s*[,;:])+")
_SEPARATORS = re.compile(r"[\s_\-.:]+")


@dataclass(frozen=True)
class KnownSubject:
    """A subject the question may name: its id and other names for it."""

    subject: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class SubjectMention:
    """Where the question names a known subject, and how well (``retrieval.question.names``)."""

    subject: str
    text: str
    start: int
    end: int
    alias: bool
    score: float = 1.0
    how: str = ""
    """How the words name it ("the last word of the name"); empty for an id or alias."""
    name: str = ""
    """The name the words were matched to, when not the id."""


MIN_SCORE = 0.4
"""A mention scoring less (a faint trigram likeness) is only weighed, never chosen."""
TIE = 0.05
"""Another subject scoring within this of the best, for the same words, makes a tie."""


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


@functools.lru_cache(maxsize=8192)
def _name_pattern(name: str) -> re.Pattern[str] | None:
    # Cached: re's own cache holds 512 patterns, fewer than a tenant's subjects.
    parts = [part for part in _SEPARATORS.split(name.strip()) if part]
    if not parts:
        return None
    body = r"[\s_\-.:]+".join(re.escape(part) for part in parts)
    return re.compile(rf"(?<![A-Za-z0-9]){body}(?![A-Za-z0-9])", re.IGNORECASE)


def choose_subject(
    mentions: Sequence[SubjectMention],
) -> tuple[str | None, str, tuple[SubjectMention, ...]]:
    """The subject the question is about, why, and the mentions weighed when none is chosen.

    The best mention wins: highest score, then the longest name, then the first. Another
    subject as good (within ``TIE``) for overlapping words at least as long is a tie ("Berg"
    for two Bergs; never "Mira" inside "Mira Lopez"), and a tie chooses none;
    so does a question whose best mention scores under ``MIN_SCORE``.
    """
    chosen = [mention for mention in mentions if mention.score >= MIN_SCORE]
    if not chosen:
        reason = "The question names no known subject, and the caller gave none."
        weighed = _weighed(mentions)
        if weighed:
            reason += f" Names weighed and found too unlike: {_listed(weighed)}."
        return None, reason, weighed
    best = max(chosen, key=lambda m: (m.score, m.end - m.start, -m.start))
    rivals = [
        mention
        for mention in chosen
        if mention.subject != best.subject
        and mention.score >= best.score - TIE
        and mention.end - mention.start >= best.end - best.start
        and mention.start < best.end
        and best.start < mention.end
    ]
    if rivals:
        weighed = _weighed([best, *rivals])
        reason = (
            f"The question's {best.text!r} fits several subjects about equally:"
            f" {_listed(weighed)}. None was chosen; name one with subject."
        )
        return None, reason, weighed
    if best.how:
        how = f"{best.how} {best.name!r} of"
    else:
        how = "an alias of" if best.alias else "the id of"
    reason = f"The question names {best.text!r}, {how} subject {best.subject!r}."
    others = sorted({mention.subject for mention in chosen} - {best.subject})
    if others:
        listed = ", ".join(repr(other) for other in others[:_LISTED])
        more = f" and {len(others) - _LISTED} more" if len(others) > _LISTED else ""
        reason += (
            f" It also names {listed}{more}; the best fit (then the longest name, then the"
            " first) wins."
        )
    return best.subject, reason, ()


_LISTED = 10
"""How many subjects a plan names or lists at most (a common surname can fit hundreds)."""


def _weighed(mentions: Sequence[SubjectMention]) -> tuple[SubjectMention, ...]:
    best: dict[str, SubjectMention] = {}
    for mention in mentions:
        if mention.subject not in best or mention.score > best[mention.subject].score:
            best[mention.subject] = mention
    return tuple(sorted(best.values(), key=lambda m: (-m.score, m.subject))[:_LISTED])


def _listed(mentions: Sequence[SubjectMention]) -> str:
    return ", ".join(f"{m.subject!r} ({(m.name or m.subject)!r}, {m.score:.2f})" for m in mentions)


def blank_mentions(question: str, mentions: Sequence[SubjectMention]) -> str:
    """The question with subject names replaced by spaces, so ids are never read as dates."""
    chars = list(question)
    for mention in mentions:
        chars[mention.start : mention.end] = " " * (mention.end - mention.start)
    return "".join(chars)


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
    for date in find_dates(blank_mentions(question, mentions), now=now):
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
