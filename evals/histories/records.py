"""The public-records family: who held each role of a country, a company or an organization.

Per tenant, places (the subjects) each hold one to three roles of the family (the keys, among
the tenant's many declared roles); each role had 5-15 successive holders since 1950, one
episode per change ("Baek Young-sam was sworn in as President of South Korea."), happening
when the holder took office. The episodes are an archive read during the history: recorded in
an order of their own, so a later change is often recorded before an earlier one and its
update fills only its gap (design section 4). At some places one person holds the first of
their roles and later the second (prime minister, then president): that name is current for
one key and stale for the other.

Gold answers are ``evals.histories.timelines.believed`` unchanged: a key's holders are distinct and
start on distinct days, with no conflict and no expiry, so its rule is exact here too. A
holder's name is never part of another name held at the same place, in any tenant.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping
from datetime import UTC, date, datetime, time, timedelta
from typing import Literal

from evals.histories.asking import (
    Asked,
    QuestionKind,
    Shares,
    current_question,
    dated_question,
    quiet_days,
)
from evals.histories.phrasings import TENANTS
from evals.histories.record_phrasings import (
    EASTERN_FAMILIES,
    EASTERN_GIVEN,
    FAMILY_ENDINGS,
    FAMILY_ROOTS,
    FIRST_YEARS,
    GIVEN_NAMES,
    PLACES,
    Place,
    role_spec,
)
from evals.histories.timelines import (
    START,
    Assertion,
    Episode,
    KeyTimeline,
    RecordsSpec,
    SizeSpec,
    day_of,
)

FLOOR = datetime(1950, 1, 1, tzinfo=UTC)
"""No role's history starts before this; point-in-time questions ask no earlier."""
LAST_START = datetime(2024, 10, 31, tzinfo=UTC)
RECORDED_DAYS = (2, 150)
"""Days of the history (from ``START``) over which the archive is recorded: before the customers
family's last write, so the time questions are asked at stays where that family puts it."""

RECORD_SHARES: Mapping[QuestionKind, Shares] = {
    "current": ((), ("value",)),
    "point_in_time": ((("not_known", 1 / 6), ("same", 1 / 8)), ("stale",)),
    "known_at": ((("belief_differs", 1 / 2),), ("plain", "belief_differs")),
}
"""A known-at "not known" (nothing recorded yet) differs from what is known now about then,
so it counts as ``belief_differs``."""

Disorder = Literal["in_order", "swapped", "shuffled"]
_DISORDERS: tuple[Disorder, ...] = ("in_order", "swapped", "shuffled", "shuffled")
_START_HOURS = (0, 0, 7, 9, 10, 11, 14, 15, 16, 19)  # midnight when only the day is on record
_RECORD_HOURS = (8, 9, 10, 11, 13, 14, 15, 16, 17)
_KINDS = ("event", "event", "tool_result", "message")
_KEYS_PER_PLACE = (2, 1, 1, 3, 1, 1)  # by the place's position in the shuffled pool
_SAME_PERSON = frozenset({0, 3, 6})  # positions (mod 12) whose first two roles share a person
_MIN_GAP_DAYS = 60

Plan = list[tuple[datetime, str]]  # a role's holders: when each took office, and who


def build_records(*, seed: int, size: SizeSpec) -> list[KeyTimeline]:
    """The family's keys, by tenant, then place, then role; same seed, same keys."""
    if size.records is None or size.records.subjects == 0:
        return []
    builder = _Records(seed, size.records)
    for number, tenant in enumerate(TENANTS[: size.tenants]):
        builder.tenant(tenant, number)
    return builder.timelines


def record_candidates(timeline: KeyTimeline, end: datetime, rng: random.Random) -> list[Asked]:
    """Now; a day in each quiet stretch since 1950 before the archive is read (point in time,
    "not known" before the first holder); a day in each stretch between its records (known
    at: what the archive had told by then)."""
    found = [current_question(timeline, end)]
    starts = {day_of(a.valid_from) for a in timeline.assertions}
    for day in quiet_days([*starts, day_of(FLOOR), 0], rng):
        found.append(dated_question("point_in_time", timeline, day, end=end))
    recorded = {day_of(a.recorded_at) for a in timeline.assertions}
    for day in quiet_days([*recorded, 0, day_of(end)], rng):
        found.append(dated_question("known_at", timeline, day, end=end))
    return found


class _Records:
    """Draws the family's keys from one random stream of its own, in a fixed order."""

    def __init__(self, seed: int, spec: RecordsSpec) -> None:
        self.rng = random.Random(f"records-{seed}")
        self.spec = spec
        self.pool = list(PLACES)
        self.rng.shuffle(self.pool)
        self.roles: dict[int, tuple[str, ...]] = {}  # by position in the pool
        self.taken: set[str] = set()  # every holder's name in the history
        self.held: dict[str, list[str]] = {}  # subject -> its holders' names, every tenant
        self.timelines: list[KeyTimeline] = []

    def tenant(self, tenant: str, number: int) -> None:
        """The tenant's places: the previous tenant's last ``shared`` ones, then new ones."""
        step = self.spec.subjects - self.spec.shared
        for offset in range(self.spec.subjects):
            position = (number * step + offset) % len(self.pool)
            place = self.pool[position]
            keys = [
                KeyTimeline(tenant, place.subject, place.name, role_spec(place, role))
                for role in self._roles(position)
            ]
            plans = [self._plan(place) for _ in keys]
            if len(plans) > 1 and position % 12 in _SAME_PERSON:
                self._same_person(plans[0], plans[1])
            for timeline, plan in zip(keys, plans, strict=True):
                self._record(timeline, plan)
            self.timelines += keys

    def _roles(self, position: int) -> tuple[str, ...]:
        """The place's roles, drawn once: every tenant holding the place holds the same keys."""
        if position not in self.roles:
            names = self.pool[position].role_names
            count = _KEYS_PER_PLACE[position % len(_KEYS_PER_PLACE)]
            self.roles[position] = names[:count] if count > 1 else (self.rng.choice(names),)
        return self.roles[position]

    def _plan(self, place: Place) -> Plan:
        """5-15 holders, taking office on days spread from the first start to 2024."""
        subject, rng = place.subject, self.rng
        first_year, last_year = FIRST_YEARS[place.kind]
        first = date(first_year, 1, 1)
        first += timedelta(days=rng.randrange((date(last_year, 12, 31) - first).days))
        span = (LAST_START.date() - first).days
        count = rng.randint(5, 15)
        while True:
            offsets = sorted(rng.sample(range(_MIN_GAP_DAYS, span), count - 1))
            gaps = [b - a for a, b in itertools.pairwise([0, *offsets])]
            if min(gaps) >= _MIN_GAP_DAYS:
                break
        days = [first + timedelta(days=offset) for offset in (0, *offsets)]
        return [(self._took_office(day), self._name(subject)) for day in days]

    def _took_office(self, day: date) -> datetime:
        hour = self.rng.choice(_START_HOURS)
        minute = 0 if hour == 0 else self.rng.randrange(60)
        return datetime.combine(day, time(hour, minute), UTC)

    def _name(self, subject: str) -> str:
        """A new person: never a name of the history already, nor part of (or containing) a
        name held at the same place."""
        held = self.held.setdefault(subject, [])
        while True:
            name = self._draw_name()
            folded = name.casefold()
            if name in self.taken:
                continue
            if any(folded in other.casefold() or other.casefold() in folded for other in held):
                continue
            self.taken.add(name)
            held.append(name)
            return name

    def _draw_name(self) -> str:
        rng = self.rng
        if rng.random() < 0.2:
            first, second = EASTERN_GIVEN
            given = f"{rng.choice(first)}-{rng.choice(second)}"
            return f"{rng.choice(EASTERN_FAMILIES)} {given}"
        family = rng.choice(FAMILY_ROOTS) + rng.choice(FAMILY_ENDINGS)
        return f"{rng.choice(GIVEN_NAMES)} {family}"

    def _same_person(self, first: Plan, second: Plan) -> None:
        """A holder of the first role, once out of it, later takes the second (mostly as its
        current holder)."""
        last_start = second[-1][0]
        ended = [i for i in range(len(first) - 1) if first[i + 1][0] < last_start]
        if not ended:
            return
        index = self.rng.choice(ended)
        left = first[index + 1][0]
        later = [j for j, (start, _) in enumerate(second) if start > left]
        turn = later[-1] if self.rng.random() < 0.7 else self.rng.choice(later)
        second[turn] = (second[turn][0], first[index][1])

    def _record(self, timeline: KeyTimeline, plan: Plan) -> None:
        """One episode and update per change, on distinct days of the archive's reading, in
        chronological order, with a swap or two, or shuffled."""
        rng = self.rng
        days = sorted(rng.sample(range(*RECORDED_DAYS), len(plan)))
        instants = [
            START + timedelta(days=day, hours=rng.choice(_RECORD_HOURS), minutes=rng.randrange(50))
            for day in days
        ]
        order = list(range(len(plan)))  # order[k]: the holder recorded k-th
        disorder = rng.choice(_DISORDERS)
        if disorder == "swapped":
            for _ in range(rng.randint(1, 2)):
                i = rng.randrange(len(order) - 1)
                order[i], order[i + 1] = order[i + 1], order[i]
        elif disorder == "shuffled":
            rng.shuffle(order)
        recorded = {holder: instants[k] for k, holder in enumerate(order)}
        for index, (start, name) in enumerate(plan):
            sentence = rng.choice(timeline.spec.changes).format(value=name)
            episode = Episode(
                timeline.tenant,
                timeline.subject,
                sentence,
                rng.choice(_KINDS),
                start,
                recorded=recorded[index],
            )
            late = any(recorded[later] < recorded[index] for later in range(index + 1, len(plan)))
            timeline.assertions.append(
                Assertion(name, start, recorded[index], episode, sentence, "change", delayed=late)
            )
