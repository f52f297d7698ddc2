"""Which questions a generated history asks: candidates per key, then a share per category.

Each family offers candidate questions per key (``customer_candidates`` here; the records family's
in ``evals.histories.records``), each with its gold answer and a category saying what it tests
("stale": a past value that is no longer current; "belief_differs": what was believed then is not
what is known now about then; ...). ``choose_questions`` takes, per tenant and kind, the categories
asked first up to their share, then fills the rest in order, spreading the questions over keys
before asking a key twice.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal

from evals.histories.timelines import (
    NOT_KNOWN,
    UNCERTAIN,
    Answer,
    KeyTimeline,
    believed,
    day_of,
    noon,
)

QuestionKind = Literal["current", "point_in_time", "known_at"]
Shares = tuple[tuple[tuple[str, float], ...], tuple[str, ...]]
"""Categories asked first, each up to a share of the kind's questions (at least one when there
is one), then the categories that fill the rest, in order."""
Candidates = Callable[[KeyTimeline, datetime, random.Random], "list[Asked]"]

CUSTOMER_SHARES: Mapping[QuestionKind, Shares] = {
    "current": ((("uncertain", 1 / 6), ("not_known", 1 / 6)), ("value",)),
    "point_in_time": ((("uncertain", 1 / 10), ("not_known", 1 / 6)), ("stale", "same")),
    "known_at": (
        (("belief_differs", 1 / 2), ("uncertain", 1 / 8), ("not_known", 1 / 8)),
        ("plain", "belief_differs"),
    ),
}


@dataclass(frozen=True)
class Asked:
    """One question before it is worded: kind, key, day (None: now), answer, category."""

    kind: QuestionKind
    timeline: KeyTimeline
    day: int | None
    answer: Answer
    category: str
    wording: int = 0  # phrasing and date style, drawn once


def category_of(kind: QuestionKind, answer: Answer, *, now: Answer, other: Answer) -> str:
    """What a question tests; ``now`` is the current answer, ``other`` the point-in-time one."""
    if kind == "known_at" and answer != other:
        return "belief_differs"  # a delayed extraction or a late challenger
    if answer.answer in (UNCERTAIN, NOT_KNOWN):
        return answer.answer.replace(" ", "_")
    if kind == "current":
        return "value"
    if kind == "point_in_time":
        return "stale" if answer != now else "same"
    return "plain"


def current_question(timeline: KeyTimeline, end: datetime) -> Asked:
    """The key's question about now."""
    now = believed(timeline, valid_at=end, known_at=end)
    return Asked("current", timeline, None, now, category_of("current", now, now=now, other=now))


def dated_question(kind: QuestionKind, timeline: KeyTimeline, day: int, *, end: datetime) -> Asked:
    """A point-in-time or known-at question about noon of ``day``, with its gold and category."""
    now = believed(timeline, valid_at=end, known_at=end)
    past = believed(timeline, valid_at=noon(day), known_at=end)
    then = believed(timeline, valid_at=noon(day), known_at=noon(day))
    answer = past if kind == "point_in_time" else then
    return Asked(kind, timeline, day, answer, category_of(kind, answer, now=now, other=past))


def quiet_days(breaks: Sequence[int], rng: random.Random) -> list[int]:
    """One day drawn strictly inside each stretch between consecutive breaks (days apart >= 2)."""
    return [
        rng.randint(low + 1, high - 1)
        for low, high in itertools.pairwise(sorted(breaks))
        if high - low >= 2
    ]


def customer_candidates(timeline: KeyTimeline, end: datetime, rng: random.Random) -> list[Asked]:
    """One candidate question per kind and per stretch of days on which the key is quiet."""
    found = [current_question(timeline, end)]
    for day in quiet_days(list(timeline.busy_days() | {0, day_of(end)}), rng):
        found.append(dated_question("point_in_time", timeline, day, end=end))
        found.append(dated_question("known_at", timeline, day, end=end))
    return found


def _spread_keys(items: list[Asked], rng: random.Random) -> list[Asked]:
    """Shuffled, then each key's first item before any key's second, and so on."""
    rng.shuffle(items)
    seen: Counter[int] = Counter()
    ranked = []
    for item in items:
        ranked.append((seen[id(item.timeline)], item))
        seen[id(item.timeline)] += 1
    return [item for _, item in sorted(ranked, key=lambda pair: pair[0])]


def _choose(groups: Mapping[str, list[Asked]], shares: Shares, total: int) -> list[Asked]:
    first, fill = shares
    chosen: list[Asked] = []
    taken: dict[str, int] = {}
    for category, share in first:
        want = min(len(groups.get(category, [])), max(1, round(total * share)))
        want = min(want, total - len(chosen))
        chosen += groups.get(category, [])[:want]
        taken[category] = want
    for category in (*fill, *(category for category, _ in first)):
        rest = groups.get(category, [])[taken.get(category, 0) :]
        room = total - len(chosen)
        chosen += rest[:room]
        taken[category] = taken.get(category, 0) + min(room, len(rest))
    return chosen


def choose_questions(
    timelines: Sequence[KeyTimeline],
    *,
    counts: Mapping[QuestionKind, int],
    shares: Mapping[QuestionKind, Shares],
    candidates: Candidates,
    end: datetime,
    rng: random.Random,
) -> list[Asked]:
    """Per tenant, ``counts`` questions of each kind; then all of them shuffled and worded."""
    by_tenant: dict[str, list[Asked]] = {}
    for timeline in timelines:
        by_tenant.setdefault(timeline.tenant, []).extend(candidates(timeline, end, rng))
    asked: list[Asked] = []
    for found in by_tenant.values():
        for kind, kind_shares in shares.items():
            groups: dict[str, list[Asked]] = {}
            for item in found:
                if item.kind == kind:
                    groups.setdefault(item.category, []).append(item)
            ordered = {name: _spread_keys(items, rng) for name, items in sorted(groups.items())}
            asked += _choose(ordered, kind_shares, counts[kind])
    rng.shuffle(asked)
    return [replace(item, wording=rng.randrange(1_000_000)) for item in asked]
