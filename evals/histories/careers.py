"""The careers family's subjects and keys: who holds which roles, with which values, since when.

Per history, ``CareersSpec.subjects`` subjects, half people and half organisations (about two in
three with diacritics in their names), each holding two or three roles of its line of work or kind
(``evals.histories.career_roles``). A key has three to six values, each starting on a day or at a
month (its precision: what the text can say), at least 400 days apart, over decades between 1890 and
2024. A subject's values are distinct across its keys, and none is written inside another or inside
the subject's name (after ``retrieval.context.folding``'s folding), so a sentence stating one value
never states another by accident.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Literal

from evals.histories.career_names import (
    FIELDS,
    GIVEN,
    HOLDER_GIVEN,
    HOLDER_SURNAMES,
    MIDDLE_NAMES,
    ORGANISATIONS,
    PLACES,
    SURNAMES,
    CareerSubject,
    organisation,
    person,
    spelled,
)
from evals.histories.career_roles import BY_ATTRIBUTE, GROUPS, PERSON_GROUPS, Role
from retrieval.context.folding import content_tokens, value_needle
from retrieval.context.snippets import value_pattern

CAREERS = "careers"
"""The family's name in gold answers and reports."""
LAST_START = date(2024, 10, 31)
_MIN_GAP_DAYS = 400
Precision = Literal["month", "day"]


@dataclass(frozen=True)
class CareersSpec:
    """How big the careers family is: subjects and questions (each asked with and without the
    subject named)."""

    subjects: int
    questions: int

    def __post_init__(self) -> None:
        if not 2 <= self.subjects <= len(SURNAMES):
            raise ValueError(f"careers subjects must be between 2 and {len(SURNAMES)}")
        if self.questions < 5:
            raise ValueError("careers questions must be at least 5")


CAREER_SIZES: Mapping[str, CareersSpec] = {
    "quick": CareersSpec(subjects=10, questions=40),
    "default": CareersSpec(subjects=30, questions=200),
}

POOLS: Mapping[str, tuple[str, ...]] = {
    "person": ("{given} {surname}",),
    "employer": (
        "University of {place}", "{place} University Hospital", "{place} Institute of Technology",
        "Institute of {field}, {place}", "University of {place}, {campus}",
        "{surname} Laboratories", "The {place} Observatory",
    ),
    "position": (
        "Research Fellow", "Senior Lecturer", "Head of Research", "Chief Scientist",
        "Associate Professor", "Laboratory Manager", "Chief Financial Officer",
        "Vice President of Operations", "Managing Director", "Head of Strategy",
        "Deputy Director", "Principal Engineer", "Dean of Science",
    ),
    "place": ("{place}", "{place}, {district}"),
    "club": ("{place} Athletic", "FK {place}", "{place} Rovers", "Sporting {place}",
             "The {place} Wanderers"),
    "party": (
        "Coastal Party", "Green Alliance", "Liberal Union", "Rural Centre Party",
        "Social Democratic League", "Progress and Reform", "The Independents",
        "Northern Labour Party",
    ),
    "office": ("Minister of {ministry}", "Mayor of {place}", "Deputy Mayor of {place}",
               "Speaker of the Assembly", "Leader of the Opposition"),
    "constituency": ("{place} North", "{place} South", "{place} Central", "{place} and District"),
    "label": ("Nordlys Records", "The Quiet Room", "Blue Harbour Music", "{surname} Records",
              "{place} Sound", "Saltwater Recordings", "The Lantern Label"),
    "publisher": ("{surname} & {other}", "{place} University Press", "Harbour Lane Press",
                  "The Owl House", "Éditions du Port", "Kestrel Publishing", "{surname} Forlag"),
    "company": ("{surname} Shipping", "{place} Energy", "Nordic Salmon Group", "The Fjord Bank",
                "{surname} & {other}", "{place} Telecom", "{surname} Holdings"),
    "auditor": ("{surname} & {other} Audit", "{surname} Partners", "Nordic Audit Group",
                "{surname} Revisjon"),
    "ground": ("{place} Stadium", "{surname} Park", "Harbour Arena", "The Meadows",
               "{place} Arena"),
    "league": ("First Division", "Premier Division", "Coastal League", "Northern Conference",
               "Second Division", "National League", "Elite Series", "Regional League North"),
    "venue": ("{place} Concert Hall", "The Harbour Hall", "{place} Cathedral", "{surname} Hall",
              "{place} Opera House"),
}  # fmt: skip
_DISTRICTS = ("Sentrum", "Old Harbour", "Vestre Kai", "Nørvasundet", "Sandviken", "Marieholm")
_CAMPUSES = ("North Campus", "Harbour Campus", "Old Town Campus", "Blåsenborg")
_MINISTRIES = ("Fisheries", "Health", "Transport", "Culture", "Education", "Trade")


@dataclass(frozen=True)
class Held:
    """One value of a key and when it started, as exactly as the text can say."""

    value: str
    start: date
    precision: Precision


@dataclass(eq=False)
class CareerKey:
    """One (subject, attribute) of the family: its values by start, each held until the next."""

    subject: CareerSubject
    role: Role
    held: list[Held] = field(default_factory=list)

    @property
    def values(self) -> list[str]:
        """Every value the key had, sorted."""
        return sorted(item.value for item in self.held)

    def window(self, index: int) -> tuple[date, date | None]:
        """When the index-th value held: from its start until the next one's (None: still)."""
        end = self.held[index + 1].start if index + 1 < len(self.held) else None
        return self.held[index].start, end


def build_careers(*, seed: int, spec: CareersSpec) -> list[CareerKey]:
    """The family's keys, by subject then role; same seed and spec, same keys."""
    rng = random.Random(f"careers-{seed}")
    subjects = _subjects(spec.subjects, rng)
    keys: list[CareerKey] = []
    for subject in subjects:
        roles = GROUPS[subject.group]
        chosen = rng.sample(roles, min(len(roles), rng.choice((2, 3, 3))))
        taken: list[str] = [subject.display_name, subject.short]
        first, last = _span(subject, rng)
        for attribute in sorted(chosen, key=roles.index):
            key = CareerKey(subject, BY_ATTRIBUTE[attribute])
            starts = _starts(rng, first, last, count=rng.randint(3, 6))
            for start in starts:
                value = _fresh(key.role.pool, rng, taken)
                taken.append(value)
                precision: Precision = "day" if rng.random() < 0.4 else "month"
                day = start.replace(day=1) if precision == "month" else start
                key.held.append(Held(value, day, precision))
            keys.append(key)
    return keys


def _subjects(count: int, rng: random.Random) -> list[CareerSubject]:
    """Half people, half organisations; names, short names and acronyms distinct."""
    subjects: list[CareerSubject] = []
    seen: set[str] = set()
    for index in range(count):
        accented = index % 3 != 2
        while True:
            subject = _person(rng, accented) if index % 2 == 0 else _organisation(rng, accented)
            names = {value_needle(subject.display_name), value_needle(subject.short)}
            names |= {subject.subject, *([subject.acronym] if subject.acronym else [])}
            if not names & seen and len(subject.acronym or "abc") >= 3:
                seen |= names
                subjects.append(subject)
                break
    return subjects


def _person(rng: random.Random, accented: bool) -> CareerSubject:
    while True:
        given, pronoun = rng.choice(GIVEN)
        surname = rng.choice(SURNAMES)
        middle = rng.choice(MIDDLE_NAMES) if rng.random() < 0.4 else None
        plain = spelled(f"{given} {surname}") == f"{given} {surname}"
        if plain != accented:
            group = rng.choice(PERSON_GROUPS)
            return person(given, surname, pronoun=pronoun, group=group, middle=middle)


def _organisation(rng: random.Random, accented: bool) -> CareerSubject:
    while True:
        template = rng.choice(ORGANISATIONS)
        subject = organisation(template, place=rng.choice(PLACES), field=rng.choice(FIELDS))
        if subject.has_diacritics == accented:
            return subject


def _span(subject: CareerSubject, rng: random.Random) -> tuple[date, date]:
    """When a subject's keys may start: a person's working life, an organisation's history."""
    if subject.kind == "person":
        born = rng.randint(1940, 1988)
        return date(born + rng.randint(22, 28), 1, 1), min(LAST_START, date(born + 68, 1, 1))
    return date(rng.randint(1890, 1985), 1, 1), LAST_START


def _starts(rng: random.Random, first: date, last: date, *, count: int) -> list[date]:
    """``count`` days from ``first`` to ``last``, at least ``_MIN_GAP_DAYS`` apart (fewer
    when the span is too short for them)."""
    span = (last - first).days
    count = max(2, min(count, span // (2 * _MIN_GAP_DAYS)))
    begin = first + timedelta(days=rng.randrange(0, max(1, span // (3 * count))))
    room = (last - begin).days
    while True:
        offsets = sorted(rng.sample(range(_MIN_GAP_DAYS, room), count - 1))
        gaps = [b - a for a, b in zip([0, *offsets], offsets, strict=False)]
        if min(gaps) >= _MIN_GAP_DAYS:
            break
    return [begin, *(begin + timedelta(days=offset) for offset in offsets)]


def _fresh(pool: str, rng: random.Random, taken: Iterable[str]) -> str:
    """A value of the pool that clashes with none of ``taken`` (the subject's values and
    names)."""
    taken = list(taken)
    for _ in range(1000):
        value = _draw(pool, rng)
        if not any(clashes(value, other) for other in taken):
            return value
    raise RuntimeError(f"no fresh value left in pool {pool!r}")  # pragma: no cover


def _draw(pool: str, rng: random.Random) -> str:
    surname, other = rng.sample(HOLDER_SURNAMES, 2)
    return rng.choice(POOLS[pool]).format(
        given=rng.choice(HOLDER_GIVEN),
        surname=surname,
        other=other,
        place=rng.choice(PLACES),
        field=rng.choice(FIELDS),
        district=rng.choice(_DISTRICTS),
        campus=rng.choice(_CAMPUSES),
        ministry=rng.choice(_MINISTRIES),
    )


def clashes(first: str, second: str) -> bool:
    """Whether one text would be read as stating the other: equal or written inside it after
    folding, or all of one's distinctive words among the other's."""
    needles = (value_needle(first), value_needle(second))
    for needle, other in (needles, needles[::-1]):
        pattern = value_pattern(needle)
        if pattern is not None and pattern.search(other):
            return True
        words = content_tokens(needle)
        if len(words) >= 2 and set(words) <= set(content_tokens(other)):
            return True
    return False
