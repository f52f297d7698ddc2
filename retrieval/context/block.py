"""The block's own lines: the header, one line per key, uncertain keys, the evidence heading.

Pure. Instants print as dates; to the minute (``compact_time``) only where two instants of the
block fall on one day, the asked ones included. There is a header only when a time was asked
that differs from the read's clock: it names the subject and the asked instants. A period
read's header names its range ("ana from 2004-01-01 to 2006-01-01:", "ana until 2013-01-01:",
"ana from 2019-01-01:"), and its keys get one line per version valid in it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from retrieval.context.block_inputs import KeyFacts
from retrieval.context.snippets import one_line
from store.contract.facts import Challenger, Fact
from store.contract.labels import UNVERIFIED, version_label
from store.contract.reads import Mode
from store.contract.times import format_timestamp
from store.contract.values import display
from store.subjects.reads import ValidRange

UNVERIFIED_HEADING = "Evidence (unverified: no attribute matched the question):"


def utc_text(value: datetime) -> str:
    """An instant as RFC 3339 in UTC; a naive time, which names no instant, is refused."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{value.isoformat()} has no UTC offset")
    return format_timestamp(value)


def compact_time(value: datetime) -> str:
    """An instant as the block prints it: a date at midnight, minutes when seconds are zero."""
    text = utc_text(value)
    if text.endswith("T00:00:00Z"):
        return text[:10]
    if text.endswith(":00Z") and len(text) == len("2026-06-03T10:00:00Z"):
        return text[:-4] + "Z"
    return text


@dataclass(frozen=True)
class Instants:
    """How the block prints instants: a date, unless another instant of the block (the asked
    ones included) falls on the same day; then to the minute (``compact_time``)."""

    crowded: frozenset[str]

    @classmethod
    def of(cls, keys: Sequence[KeyFacts], *asked: datetime) -> Instants:
        """The printing rule for a block of ``keys`` asked at ``asked``."""
        instants = [*asked]
        for key in keys:
            for fact in key.facts():
                instants.append(fact.valid_from)
                if fact.valid_to is not None:
                    instants.append(fact.valid_to)
        days = [utc_text(instant)[:10] for instant in dict.fromkeys(instants)]
        return cls(frozenset(day for day in days if days.count(day) > 1))

    def __call__(self, instant: datetime) -> str:
        text = compact_time(instant)
        return text if text[:10] in self.crowded else text[:10]


def header(
    subject: str | None,
    mode: Mode,
    *,
    valid_at: datetime,
    known_at: datetime,
    now: datetime | None,
    when: Instants,
    period: ValidRange | None = None,
) -> str:
    """The first line: the subject and the asked instants (or period), or "" when nothing was
    asked."""
    if mode == "period" and period is not None:
        start, end = period
        if start is None:
            span = f"until {when(end)}" if end is not None else ""
        else:
            span = f"from {when(start)}" + (f" to {when(end)}" if end is not None else "")
        asked = [span, f"as known on {when(known_at)}" if known_at != now else ""]
        times = ", ".join(part for part in asked if part)
        return f"{subject} {times}:" if subject else f"{times[0].upper()}{times[1:]}:"
    asked = [
        f"as of {when(valid_at)}" if mode != "current" and valid_at != now else "",
        f"as known on {when(known_at)}" if mode == "known_at" and known_at != now else "",
    ]
    if mode == "known_at" and valid_at == known_at and known_at != now:
        asked = [f"as known on {when(known_at)}"]  # what was believed then about then
    times = ", ".join(part for part in asked if part)
    if not times:
        return ""
    return f"{subject} {times}:" if subject else f"{times[0].upper()}{times[1:]}:"


def key_lines(key: KeyFacts, when: Instants) -> list[str]:
    """The key's line, or for a period read one line per version valid in the period."""
    if not key.earlier:
        return [key_line(key, when)]
    return [key_line(KeyFacts(key.subject, key.attribute, fact), when) for fact in key.facts()]


def key_line(key: KeyFacts, when: Instants) -> str:
    """``attribute: value (from ... until ...; source e1)``, or ``attribute: not known``."""
    if key.fact is None:
        return f"{key.attribute}: not known"
    fact = key.fact
    source = fact.source_episode_id
    trust = _trust(fact)
    return f"{key.attribute}: {_value(fact.value)} ({trust}{_window(fact, when)}; source {source})"


def uncertain_line(key: KeyFacts, when: Instants) -> str:
    """A disputed key's line under "Uncertain:", citing every side."""
    fact = key.fact
    assert fact is not None
    sides = [f"{_value(fact.value)} ({_trust(fact)}source {fact.source_episode_id})"] + [
        f"{_value(challenger.value)} ({_trust(fact, challenger)}source"
        f" {challenger.source_episode_id})"
        for challenger in fact.challengers
    ]
    return f"- {key.attribute}: {' vs '.join(sides)}, disputed {_window(fact, when)}"


def evidence_heading(unverified: bool) -> str:
    """The line above the evidence lines; it says so when nothing vouches for them."""
    return UNVERIFIED_HEADING if unverified else "Evidence:"


def _trust(fact: Fact, challenger: Challenger | None = None) -> str:
    """What opens a side's parentheses: ``unverified; `` when its evidence was not found in its
    episode, as ``store.contract.labels`` names the fact, or the challenger disputing it."""
    if challenger is None:
        label = version_label(
            status=fact.status, disputed=fact.disputed, evidence_verified=fact.evidence_verified
        )
    else:
        label = version_label(
            status=fact.status,
            disputed=fact.disputed,
            role="challenger",
            conflict="open",
            evidence_verified=challenger.evidence_verified,
        )
    return f"{UNVERIFIED}; " if label.unverified else ""


def _window(fact: Fact, when: Instants) -> str:
    until = "" if fact.valid_to is None else f" until {when(fact.valid_to)}"
    return f"from {when(fact.valid_from)}{until}"


def _value(value: Any) -> str:
    return one_line(display(value))
