"""Key timelines for generated histories: what each key's values are, and when they are known.

Per tenant, every subject's attributes change several times. On top of plain changes a key
may get a correction ("it is actually ..."; an update from the correction's time), a delayed
extraction (the update for an episode arrives days later, after other changes were recorded),
an equal-start conflict on its last value (two episodes of equal rank, one start: the key
reads ``disputed``), an expiry (the value stops being true and none follows) and distractor
episodes that mention an old value in passing. Tenants share subject ids and attribute names
but draw different values while the attribute has values left, so a value from the wrong
tenant is recognisable. These keys are the customers family; ``evals.histories.records`` builds the
public-records family's keys in the same shapes (``KeyTimeline``, ``Assertion``, ``Episode``).

Gold answers follow the design's temporal semantics (section 4), written here as a rule over
the key's timeline rather than as a replay of the write path: at valid time V, as known at
system time K, the answer is the value of the assertion recorded by K that starts last at or
before V; "not known" when there is none, or when an expiry recorded by K ended it by V;
"uncertain" when an equal-start challenger of that value was recorded by K. The timelines keep
that rule exact: a key's values are distinct (so no write is ``unchanged``), no two of its
assertions share a start except a conflict's pair (of one episode kind, so equal rank), and an
expiry is written after every assertion of its key (so it always finds the value it ends).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal, TypeVar

from evals.histories.phrasings import (
    ATTRIBUTES,
    FILLERS,
    TENANTS,
    AttributeSpec,
    day_in_words,
    subject_name,
)
from evals.histories.record_phrasings import PLACES

START = datetime(2025, 1, 6, tzinfo=UTC)
"""Day 0 of every history; attributes are defined the day before."""

NOT_KNOWN = "not known"
UNCERTAIN = "uncertain"

Role = Literal["change", "correction", "incumbent", "challenger"]
Shape = Literal["open", "expire", "conflict"]
_HOURS = (8, 9, 10, 11, 13, 14, 15, 16, 17)  # things happen in office hours, not at noon
_T = TypeVar("_T")
_CHANGE_KINDS = ("message", "message", "ticket", "tool_result", "event", "user_confirmation")
# A conflict's challenger takes its incumbent's kind: equal rank, so the key is disputed.
_KINDS: Mapping[str, tuple[str, ...]] = {
    "correction": ("message", "user_confirmation"),
    "incumbent": ("message", "ticket"),
}


@dataclass(frozen=True)
class RecordsSpec:
    """The public-records family's part of a history: subjects and questions per tenant.

    Each tenant holds ``subjects`` places; the first ``shared`` of them are also the previous
    tenant's last ``shared`` ones (same keys, other holders), so another tenant's holder is
    recognisable. Places are taken in turn from a shuffled pool that wraps around, so many
    tenants share more.
    """

    subjects: int
    shared: int
    current: int
    point_in_time: int
    known_at: int

    def __post_init__(self) -> None:
        if not 0 <= self.shared <= self.subjects:
            raise ValueError("shared must be between 0 and subjects")
        if min(self.subjects, self.current, self.point_in_time, self.known_at) < 0:
            raise ValueError("records counts must not be negative")


@dataclass(frozen=True)
class SizeSpec:
    """How big a history is: tenants, subjects and attributes, and questions per tenant."""

    tenants: int
    subjects: int
    attributes: int
    current: int
    point_in_time: int
    known_at: int
    records: RecordsSpec | None = None
    """The public-records family beside the customers one (None: customers only)."""

    def __post_init__(self) -> None:
        if not 1 <= self.tenants <= len(TENANTS):
            raise ValueError(f"tenants must be between 1 and {len(TENANTS)}")
        if not 1 <= self.attributes <= len(ATTRIBUTES):
            raise ValueError(f"attributes must be between 1 and {len(ATTRIBUTES)}")
        if self.subjects < 1:
            raise ValueError("subjects must be at least 1")
        if min(self.current, self.point_in_time, self.known_at) < 0:
            raise ValueError("question counts must not be negative")
        if self.records is not None and self.records.subjects > len(PLACES):
            raise ValueError(f"records subjects must be at most {len(PLACES)}")


SIZES: Mapping[str, SizeSpec] = {
    "quick": SizeSpec(
        tenants=2,
        subjects=6,
        attributes=4,
        current=12,
        point_in_time=10,
        known_at=8,
        records=RecordsSpec(subjects=6, shared=2, current=6, point_in_time=8, known_at=4),
    ),
    "default": SizeSpec(
        tenants=2,
        subjects=40,
        attributes=4,
        current=120,
        point_in_time=100,
        known_at=80,
        records=RecordsSpec(subjects=40, shared=10, current=60, point_in_time=60, known_at=40),
    ),
}


@dataclass(eq=False)
class Episode:
    """A generated episode; its id is given when the writes are put in system-time order."""

    tenant: str
    subject: str
    text: str
    kind: str
    occurred_at: datetime
    recorded: datetime | None = None
    """When it is recorded, if not a minute after it happened (an archive read later)."""

    @property
    def recorded_at(self) -> datetime:
        """A minute after it happened, unless it is recorded at another time."""
        return self.occurred_at + timedelta(minutes=1) if self.recorded is None else self.recorded


@dataclass(frozen=True, eq=False)
class Assertion:
    """One candidate value of a key: when it starts, when its update line is written."""

    value: str
    valid_from: datetime
    recorded_at: datetime
    episode: Episode
    evidence: str
    role: Role
    delayed: bool = False


@dataclass(frozen=True, eq=False)
class Expiry:
    """The key's value stops being true at ``at``; written at ``recorded_at``."""

    at: datetime
    recorded_at: datetime
    episode: Episode


@dataclass(eq=False)
class KeyTimeline:
    """Everything a history says about one (tenant, subject, attribute)."""

    tenant: str
    subject: str
    name: str
    spec: AttributeSpec
    assertions: list[Assertion] = field(default_factory=list)  # by valid_from
    expiry: Expiry | None = None
    distractors: list[Episode] = field(default_factory=list)

    @property
    def values(self) -> list[str]:
        """Every value the key ever had (challengers too), sorted."""
        return sorted({assertion.value for assertion in self.assertions})

    def busy_days(self) -> set[int]:
        """Days on which this key starts, ends or records something: never asked about."""
        instants = [a.valid_from for a in self.assertions]
        instants += [a.recorded_at for a in self.assertions]
        instants += [a.episode.occurred_at for a in self.assertions]
        if self.expiry is not None:
            instants += [self.expiry.at, self.expiry.recorded_at]
        return {day_of(instant) for instant in instants}


@dataclass(frozen=True)
class Answer:
    """A gold answer: a value, "not known" or "uncertain", and the values acceptable."""

    answer: str
    answers: tuple[str, ...]


def believed(timeline: KeyTimeline, *, valid_at: datetime, known_at: datetime) -> Answer:
    """The key's answer at ``valid_at`` in the knowledge recorded by ``known_at``."""
    recorded = [
        a for a in timeline.assertions if a.role != "challenger" and a.recorded_at <= known_at
    ]
    started = [a for a in recorded if a.valid_from <= valid_at]
    if not started:
        return Answer(NOT_KNOWN, ())
    held = max(started, key=lambda assertion: assertion.valid_from)
    expiry = timeline.expiry
    if (
        expiry is not None
        and expiry.recorded_at <= known_at
        and held.valid_from < expiry.at <= valid_at
    ):
        return Answer(NOT_KNOWN, ())
    challengers = [
        a.value
        for a in timeline.assertions
        if a.role == "challenger" and a.valid_from == held.valid_from and a.recorded_at <= known_at
    ]
    if challengers:
        return Answer(UNCERTAIN, tuple(sorted([held.value, *challengers])))
    return Answer(held.value, (held.value,))


def day_of(instant: datetime) -> int:
    """Days since ``START`` (day 0)."""
    return (instant - START).days


def noon(day: int) -> datetime:
    """Noon UTC of a day: where a reader puts a date named without a time of day."""
    return START + timedelta(days=day, hours=12)


def build_timelines(*, seed: int, size: SizeSpec) -> list[KeyTimeline]:
    """Every key of a history, by tenant, then subject, then attribute; same seed, same keys."""
    builder = _Builder(seed, size)
    builder.build()
    return builder.timelines


class _Builder:
    """Draws one history's keys from one random stream, in a fixed order."""

    def __init__(self, seed: int, size: SizeSpec) -> None:
        self.rng = random.Random(seed)
        self.size = size
        self.attributes = ATTRIBUTES[: size.attributes]
        self.timelines: list[KeyTimeline] = []
        # (subject, attribute) -> values already drawn by earlier tenants
        self.drawn: dict[tuple[str, str], list[str]] = {}

    def build(self) -> None:
        for tenant in TENANTS[: self.size.tenants]:
            keys = [
                (index, spec) for index in range(self.size.subjects) for spec in self.attributes
            ]
            conflict_or_expiry: dict[int, Shape] = {0: "conflict", 1: "expire"}
            shapes = self._spread(len(keys), conflict_or_expiry, 6, "open")
            corrected = self._spread(len(keys), {0: True}, 3, False)
            delayed = self._spread(len(keys), {0: True}, 3, False)
            for number, (index, spec) in enumerate(keys):
                subject, name = subject_name(index)
                timeline = KeyTimeline(tenant, subject, name, spec)
                self._key(timeline, shapes[number], corrected[number], delayed[number])
                self.timelines.append(timeline)

    def _spread(self, count: int, marks: Mapping[int, _T], period: int, rest: _T) -> list[_T]:
        """Features dealt evenly over shuffled keys: key i gets ``marks[i % period]``."""
        dealt = [marks.get(position % period, rest) for position in range(count)]
        self.rng.shuffle(dealt)
        return dealt

    def _instant(self, day: int) -> datetime:
        hour = self.rng.choice(_HOURS)
        return START + timedelta(days=day, hours=hour, minutes=self.rng.randrange(0, 50))

    def _values(self, timeline: KeyTimeline, count: int) -> list[str]:
        """Distinct values for one key, avoiding other tenants' values of it while any remain."""
        elsewhere = self.drawn.setdefault((timeline.subject, timeline.spec.attribute), [])
        chosen: list[str] = []
        for _ in range(count):
            free = [v for v in timeline.spec.values if v not in chosen]
            fresh = [v for v in free if v not in elsewhere]
            chosen.append(self.rng.choice(fresh or free))
        elsewhere.extend(chosen)
        return chosen

    def _text(self, timeline: KeyTimeline, sentence: str) -> str:
        """An episode's text: the sentence, sometimes beside a filler about the same person."""
        if self.rng.random() < 0.6:
            return sentence
        filler = self.rng.choice(FILLERS).format(name=timeline.name)
        return f"{filler} {sentence}" if self.rng.random() < 0.5 else f"{sentence} {filler}"

    def _episode(self, timeline: KeyTimeline, sentence: str, kind: str, when: datetime) -> Episode:
        text = self._text(timeline, sentence)
        return Episode(timeline.tenant, timeline.subject, text, kind, when)

    def _key(self, timeline: KeyTimeline, shape: Shape, corrected: bool, delayed: bool) -> None:
        """Three or four changes 20-45 days apart; maybe a correction 1-4 days after one; maybe
        one extraction delayed until 1-8 days after the next change was recorded; then the
        shape's ending (a challenger of the last value, or an expiry) and the distractors.
        """
        rng, spec = self.rng, timeline.spec
        changes = rng.randint(3, 4)
        correct_after = None
        if corrected:
            correct_after = rng.randrange(0, changes - 1 if shape == "conflict" else changes)
        plan: list[tuple[Role, datetime]] = []
        day = rng.randrange(5, 50)
        for index in range(changes):
            role: Role = "incumbent" if shape == "conflict" and index == changes - 1 else "change"
            plan.append((role, self._instant(day)))
            if index == correct_after:
                day += rng.randint(1, 4)
                plan.append(("correction", self._instant(day)))
            day += rng.randint(20, 45)
        values = self._values(timeline, len(plan) + (shape == "conflict"))  # + the challenger
        late = rng.choice([i for i, (role, _) in enumerate(plan) if role != "incumbent"])
        for index, ((role, when), value) in enumerate(zip(plan, values, strict=False)):
            table = spec.corrections if role == "correction" else spec.changes
            sentence = rng.choice(table).format(name=timeline.name, value=value)
            kinds = _KINDS.get(role, _CHANGE_KINDS)
            kind = rng.choice(kinds)
            episode = self._episode(timeline, sentence, kind, when)
            recorded = episode.recorded_at
            is_late = delayed and index == late
            if is_late:
                after = plan[index + 1][1] if index + 1 < len(plan) else when
                recorded = after + timedelta(days=rng.randint(1, 8), hours=rng.randint(1, 6))
            timeline.assertions.append(
                Assertion(value, when, recorded, episode, sentence, role, delayed=is_late)
            )
        if shape == "conflict":
            self._challenger(timeline, values[-1])
        if shape == "expire":
            self._expire(timeline)
        self._distractors(timeline)

    def _challenger(self, timeline: KeyTimeline, value: str) -> None:
        """Another source of equal rank says a different value started at the same instant."""
        incumbent = timeline.assertions[-1]
        start = incumbent.valid_from
        words = day_in_words(start.date(), self.rng.randrange(3))
        sentence = self.rng.choice(timeline.spec.dated).format(
            name=timeline.name, value=value, date=words
        )
        when = self._instant(day_of(start) + self.rng.randint(1, 3))
        episode = self._episode(timeline, sentence, incumbent.episode.kind, when)
        timeline.assertions.append(
            Assertion(value, start, episode.recorded_at, episode, sentence, "challenger")
        )

    def _expire(self, timeline: KeyTimeline) -> None:
        """The last value ends, after every assertion of the key was written."""
        last = max(max(a.recorded_at, a.valid_from) for a in timeline.assertions)
        when = self._instant(day_of(last) + self.rng.randint(10, 35))
        sentence = self.rng.choice(timeline.spec.expiries).format(name=timeline.name)
        episode = self._episode(timeline, sentence, self.rng.choice(("event", "ticket")), when)
        timeline.expiry = Expiry(when, episode.recorded_at, episode)

    def _distractors(self, timeline: KeyTimeline) -> None:
        """Episodes that mention a value after it stopped holding, and assert nothing."""
        held = [a for a in timeline.assertions if a.role != "challenger"]
        ended = [(a.value, after.valid_from) for a, after in itertools.pairwise(held)]
        if timeline.expiry is not None:
            ended.append((held[-1].value, timeline.expiry.at))
        busy = max(timeline.busy_days())
        for _ in range(self.rng.choice((0, 1, 1, 2))):
            value, since = self.rng.choice(ended)
            day = self.rng.randint(day_of(since) + 1, max(day_of(since) + 2, busy + 20))
            sentence = self.rng.choice(timeline.spec.distractors)
            text = sentence.format(name=timeline.name, value=value)
            timeline.distractors.append(
                Episode(timeline.tenant, timeline.subject, text, "message", self._instant(day))
            )
