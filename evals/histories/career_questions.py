"""The careers family's questions and their gold: periods, instants and now, in many phrasings.

A question asks about one key, over a period ("from 2004 to 2005", "in 2005 to 2006", "between
2006 and 2009", "from Mar 1998 to Sep 2004", "during 2010", "in 2013", "until 2012"), at an
instant ("as of 3 May 2001", "on 3 May 2001") or now. Its gold ``answers`` are the key's values
valid in the period (a value whose window ``[start, next start)`` overlaps it) or at the
instant (noon of that day), or the last value for now; every other value of the key is stale.
A period asked starts and ends at midnight UTC of the first day of a year or month and never
where a value of the key starts, and an instant day lies at least three days from any start,
so the gold does not hang on how an end is read. Every question has an answer and a stale
value.

Each question names its subject by one name form (``evals.histories.career_names.FORMS``), each form
taking an equal share of the questions (exactly, to one question), assigned by a matching of
questions to forms each subject can be named by.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import Literal

from evals.histories.career_names import FORMS, MIDDLE_NAMES
from evals.histories.careers import CareerKey

Kind = Literal["current", "point_in_time", "period"]
STYLES: tuple[str, ...] = (
    "from_years", "in_years", "between_years", "from_months", "during_year", "in_year",
    "until_year", "as_of_day", "on_day", "now",
)  # fmt: skip
"""Every phrasing, each asked about equally often (periods, then instants, then now)."""
_INSTANT = ("as_of_day", "on_day")
_LATEST = date(2025, 1, 1)
_INITIALS = tuple(middle for middle in MIDDLE_NAMES if middle.endswith("."))


@dataclass(frozen=True)
class Asked:
    """One question before its subject is named: key, phrasing, time words and gold."""

    key: CareerKey
    style: str
    when: str  # the time words ("from 2004 to 2005"; "" for now)
    valid_from: date | None  # a period's start (None: open)
    valid_to: date | None  # a period's end, exclusive (None: open)
    answers: tuple[str, ...]
    day: date | None = None  # an instant's day (its noon is asked about)
    form: str = ""

    @property
    def kind(self) -> Kind:
        """Current, point in time or period."""
        if self.style == "now":
            return "current"
        return "point_in_time" if self.style in _INSTANT else "period"


def choose(keys: Sequence[CareerKey], *, count: int, rng: random.Random) -> list[Asked]:
    """``count`` questions, the phrasings in turn over keys in turn, each with a name form."""
    order = list(keys)
    rng.shuffle(order)
    asked: list[Asked] = []
    turn = 0
    for number in range(count):
        style = STYLES[number % len(STYLES)]
        for _ in range(len(order)):
            key = order[turn % len(order)]
            turn += 1
            found = _ASK[style](key, rng)
            if found is not None:
                asked.append(found)
                break
        else:
            raise ValueError(f"no key can be asked {style!r}")
    rng.shuffle(asked)
    return _named(asked, rng)


def question_text(asked: Asked, rng: random.Random) -> str:
    """The question in words, its subject named in the question's form."""
    role, subject = asked.key.role, asked.key.subject
    initial = rng.choice(_INITIALS)
    name = subject.written(asked.form, initial=initial)
    template = rng.choice(role.now if asked.kind == "current" else role.asked)
    when = asked.when
    return template.format(name=name, period=when, Period=when[:1].upper() + when[1:])


def stale(asked: Asked) -> list[str]:
    """The key's values that are no answer to the question."""
    return [value for value in asked.key.values if value not in asked.answers]


# -- phrasings ------------------------------------------------------------------------------


def _overlapping(key: CareerKey, start: date | None, end: date | None) -> tuple[str, ...]:
    """The values whose windows overlap ``[start, end)`` (None: open), in time order."""
    found = []
    for index, held in enumerate(key.held):
        since, until = key.window(index)
        if (end is None or since < end) and (start is None or until is None or until > start):
            found.append(held.value)
    return tuple(found)


def _period(key: CareerKey, style: str, when: str, start: date | None, end: date) -> Asked | None:
    """The question if its period is fair: ends where no value starts, has an answer and a
    stale value."""
    starts = {held.start for held in key.held}
    if start in starts or end in starts or end > _LATEST:
        return None
    answers = _overlapping(key, start, end)
    if not answers or len(answers) == len(key.held):
        return None
    return Asked(key, style, when, start, end, answers)


def _years(key: CareerKey, rng: random.Random, *, longest: int) -> tuple[int, int]:
    """Two years around a start of the key, at most ``longest`` apart."""
    year = rng.choice(key.held).start.year + rng.randint(-1, 1)
    first = year - rng.randint(0, longest)
    return first, first + rng.randint(1, longest)


def _from_years(key: CareerKey, rng: random.Random) -> Asked | None:
    first, last = _years(key, rng, longest=4)
    when = f"from {first} to {last}"
    return _period(key, "from_years", when, date(first, 1, 1), date(last + 1, 1, 1))


def _in_years(key: CareerKey, rng: random.Random) -> Asked | None:
    first, last = _years(key, rng, longest=2)
    when = f"in {first} to {last}"
    return _period(key, "in_years", when, date(first, 1, 1), date(last + 1, 1, 1))


def _between_years(key: CareerKey, rng: random.Random) -> Asked | None:
    first, last = _years(key, rng, longest=5)
    when = f"between {first} and {last}"
    return _period(key, "between_years", when, date(first, 1, 1), date(last + 1, 1, 1))


def _from_months(key: CareerKey, rng: random.Random) -> Asked | None:
    middle = rng.choice(key.held).start + timedelta(days=rng.randint(-500, 500))
    start = date(middle.year, middle.month, 1)
    last = start + timedelta(days=rng.randint(60, 2500))
    end = date(last.year + last.month // 12, last.month % 12 + 1, 1)
    when = f"from {start.strftime('%b')} {start.year} to {last.strftime('%b')} {last.year}"
    return _period(key, "from_months", when, start, end)


def _year(style: str, words: str) -> Callable[[CareerKey, random.Random], Asked | None]:
    def ask(key: CareerKey, rng: random.Random) -> Asked | None:
        year = rng.choice(key.held).start.year + rng.choice((-1, 0, 0, 1))
        return _period(key, style, f"{words} {year}", date(year, 1, 1), date(year + 1, 1, 1))

    return ask


def _until_year(key: CareerKey, rng: random.Random) -> Asked | None:
    year = rng.choice(key.held[:-1]).start.year + rng.randint(0, 2)
    return _period(key, "until_year", f"until {year}", None, date(year + 1, 1, 1))


def _instant(style: str, words: str) -> Callable[[CareerKey, random.Random], Asked | None]:
    def ask(key: CareerKey, rng: random.Random) -> Asked | None:
        index = rng.randrange(len(key.held))
        since, until = key.window(index)
        last = (until or _LATEST) - timedelta(days=3)
        if (last - since).days < 7:
            return None
        day = since + timedelta(days=rng.randint(3, (last - since).days))
        phrase = f"{day.day} {day.strftime('%B')} {day.year}"
        answers = (key.held[index].value,)
        return Asked(key, style, f"{words} {phrase}", None, None, answers, day=day)

    return ask


def _now(key: CareerKey, rng: random.Random) -> Asked | None:
    del rng  # every key has a value now
    return Asked(key, "now", "", None, None, (key.held[-1].value,))


_ASK: dict[str, Callable[[CareerKey, random.Random], Asked | None]] = {
    "from_years": _from_years,
    "in_years": _in_years,
    "between_years": _between_years,
    "from_months": _from_months,
    "during_year": _year("during_year", "during"),
    "in_year": _year("in_year", "in"),
    "until_year": _until_year,
    "as_of_day": _instant("as_of_day", "as of"),
    "on_day": _instant("on_day", "on"),
    "now": _now,
}


# -- name forms -----------------------------------------------------------------------------


def _named(asked: list[Asked], rng: random.Random) -> list[Asked]:
    """Each question with a name form: every form on ``len // 5`` questions (the first
    ``len % 5`` forms on one more), each question on a form its subject can be named by."""
    quotas = {form: len(asked) // len(FORMS) for form in FORMS}
    for form in FORMS[: len(asked) % len(FORMS)]:
        quotas[form] += 1
    slots = [form for form in FORMS for _ in range(quotas[form])]
    holder: dict[int, int] = {}  # slot -> question
    order_of = []  # each question's slots in an order of its own
    for _ in asked:
        order = list(range(len(slots)))
        rng.shuffle(order)
        order_of.append(order)

    def place(question: int, seen: set[int]) -> bool:
        allowed = asked[question].key.subject.forms()
        for slot in order_of[question]:
            if slots[slot] not in allowed or slot in seen:
                continue
            seen.add(slot)
            if slot not in holder or place(holder[slot], seen):
                holder[slot] = question
                return True
        return False

    for question in range(len(asked)):
        if not place(question, set()):
            raise ValueError("these subjects cannot be named in every form's share")
    form_of = {question: slots[slot] for slot, question in holder.items()}
    return [replace(item, form=form_of[number]) for number, item in enumerate(asked)]
