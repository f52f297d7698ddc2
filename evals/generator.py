"""Generated memory histories for leakage evaluation: facts that change, and distractors.

A history is a deterministic function of its seed and size: subjects whose attributes change
several times (each change an episode with its candidate), plus distractor episodes that
repeat old values in passing (they cite no fact). Its gold answers come from the same
timeline, so any system can be scored on current and point-in-time questions.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from store.clock import ManualClock
from store.service import MemoryStore
from store.times import format_timestamp

START = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)


@dataclass(frozen=True)
class AttributeSpec:
    """An attribute the generator changes: its declaration, its values and its sentences."""

    attribute: str
    description: str
    aliases: tuple[str, ...]
    values: tuple[str, ...]
    update: tuple[str, ...]  # "{name} ... {value}" sentences announcing a new value
    distractor: tuple[str, ...]  # sentences mentioning an old value in passing
    question: str  # "{name}" question about the current value


ATTRIBUTES: tuple[AttributeSpec, ...] = (
    AttributeSpec(
        "home_city",
        "City where the customer currently lives",
        ("city of residence", "where they live"),
        (
            "Lisbon",
            "Porto",
            "Madrid",
            "Berlin",
            "Warsaw",
            "Milan",
            "Vienna",
            "Prague",
            "Dublin",
            "Oslo",
            "Krakow",
            "Seville",
        ),
        (
            "{name} has moved to {value}.",
            "{name} now lives in {value}.",
            "Update from {name}: the new home city is {value}.",
        ),
        (
            "{name} still misses the cafes of {value}.",
            "{name} mentioned a friend from {value}.",
            "Years ago {name} loved the winters in {value}.",
        ),
        "Where does {name} live now?",
    ),
    AttributeSpec(
        "employer",
        "Company the customer works for",
        ("workplace", "company"),
        (
            "Acme Corp",
            "Globex",
            "Initech",
            "Umbrella Labs",
            "Stark Industries",
            "Wayne Foods",
            "Hooli",
            "Vandelay Imports",
            "Soylent Co",
            "Cyberdyne",
        ),
        (
            "{name} started a new job at {value}.",
            "{name} now works for {value}.",
            "{name} joined {value} this month.",
        ),
        (
            "{name} complained about the old cafeteria at {value}.",
            "{name} still has a mug from {value}.",
            "A former colleague from {value} called {name}.",
        ),
        "Which company does {name} work for?",
    ),
    AttributeSpec(
        "account_tier",
        "Subscription tier of the customer's account",
        ("plan", "subscription level"),
        ("free", "basic", "plus", "pro", "business", "enterprise"),
        (
            "{name} switched the account to the {value} tier.",
            "{name}'s subscription is now {value}.",
            "{name} changed plan to {value}.",
        ),
        (
            "{name} remembered the {value} tier fondly.",
            "{name} asked how the {value} plan compared back then.",
            "{name} said the {value} tier was confusing.",
        ),
        "What subscription tier is {name} on?",
    ),
    AttributeSpec(
        "passport_deadline",
        "Date by which the customer's passport must be renewed",
        ("passport renewal date", "passport expiry"),
        tuple(f"2026-{month:02d}-{day:02d}" for month in range(1, 13) for day in (5, 15, 25)),
        (
            "{name}'s passport deadline is {value}.",
            "{name} said the passport must be renewed by {value}.",
            "New information: {name}'s passport renewal is due {value}.",
        ),
        (
            "{name} once thought the passport deadline was {value}.",
            "{name} joked about the old {value} passport date.",
            "An old note from {name} mentions {value} for the passport.",
        ),
        "When is {name}'s passport deadline?",
    ),
)

FIRST_NAMES = (
    "Mira",
    "Omar",
    "Lena",
    "Tomas",
    "Aiko",
    "Bruno",
    "Chiara",
    "Dawit",
    "Elif",
    "Farah",
    "Goran",
    "Hana",
    "Ivan",
    "Jonas",
    "Kasia",
    "Luca",
    "Maya",
    "Nils",
    "Olga",
    "Pavel",
    "Quinn",
    "Rosa",
    "Sami",
    "Tara",
    "Umar",
    "Vera",
    "Wojtek",
    "Ximena",
    "Yusuf",
    "Zofia",
    "Anya",
    "Bela",
    "Cyrus",
    "Dana",
    "Emil",
    "Freya",
    "Gil",
    "Hugo",
    "Ines",
    "Jakub",
    "Kai",
    "Lior",
    "Marta",
    "Nadia",
    "Otto",
    "Priya",
    "Rafael",
    "Sofia",
    "Teo",
    "Uma",
    "Viktor",
    "Wren",
    "Xavier",
    "Yara",
    "Zeno",
    "Alma",
    "Boris",
    "Celia",
    "Diego",
    "Edda",
)


@dataclass(frozen=True)
class Change:
    """One value of one key, valid from ``valid_from`` (until the next change)."""

    subject: str
    name: str
    attribute: str
    value: str
    valid_from: datetime
    episode_id: str


@dataclass
class History:
    """A generated history: replay operations in arrival order and its true timeline."""

    tenant: str
    operations: list[dict[str, Any]] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)

    def timeline(self, subject: str, attribute: str) -> list[Change]:
        """The key's values in valid-time order."""
        return sorted(
            (c for c in self.changes if (c.subject, c.attribute) == (subject, attribute)),
            key=lambda change: change.valid_from,
        )

    def value_at(self, subject: str, attribute: str, instant: datetime) -> Change | None:
        """The change valid at ``instant`` (the latest one started by then)."""
        held = [c for c in self.timeline(subject, attribute) if c.valid_from <= instant]
        return held[-1] if held else None

    def all_keys(self) -> list[tuple[str, str]]:
        """Every (subject, attribute) with at least one value, sorted."""
        return sorted({(c.subject, c.attribute) for c in self.changes})

    @property
    def end(self) -> datetime:
        """An instant after every change."""
        return max(change.valid_from for change in self.changes) + timedelta(days=1)


def _subject_name(index: int) -> tuple[str, str]:
    """The subject id (the lower-case name, so questions can name it) and the name."""
    name = FIRST_NAMES[index % len(FIRST_NAMES)]
    generation = index // len(FIRST_NAMES)
    full = name if generation == 0 else f"{name}{generation + 1}"
    return full.lower(), full


def generate_history(
    *,
    seed: int = 7,
    subjects: int = 50,
    changes_per_key: int = 4,
    distractors_per_key: int = 2,
    tenant: str = "leakage",
) -> History:
    """A reproducible history: same arguments, same operations, same timeline."""
    rng = random.Random(seed)
    history = History(tenant)
    ops = history.operations
    for spec in ATTRIBUTES:
        ops.append(
            {
                "op": "define",
                "tenant": tenant,
                "attribute": spec.attribute,
                "value_type": "date" if spec.attribute == "passport_deadline" else "string",
                "description": spec.description,
                "aliases": list(spec.aliases),
                "now": format_timestamp(START - timedelta(days=1)),
            }
        )
    events: list[tuple[datetime, int, dict[str, Any], dict[str, Any] | None]] = []
    counter = 0
    for index in range(subjects):
        subject, name = _subject_name(index)
        for spec in ATTRIBUTES:
            values = rng.sample(spec.values, changes_per_key)
            day = rng.randrange(0, 30)
            used: list[str] = []
            for value in values:
                counter += 1
                when = START + timedelta(days=day, hours=rng.randrange(0, 8))
                episode_id = f"u{counter}"
                text = rng.choice(spec.update).format(name=name, value=value)
                episode: dict[str, Any] = {
                    "op": "episode",
                    "tenant": tenant,
                    "id": episode_id,
                    "occurred_at": format_timestamp(when),
                    "text": text,
                    "subjects": [subject],
                }
                update: dict[str, Any] = {
                    "op": "update",
                    "tenant": tenant,
                    "episode": episode_id,
                    "candidate": {
                        "evidence": text,
                        "subject": subject,
                        "attribute": spec.attribute,
                        "change": "update",
                        "value": value,
                        "valid_from": format_timestamp(when),
                    },
                }
                events.append((when, counter, episode, update))
                history.changes.append(
                    Change(subject, name, spec.attribute, value, when, episode_id)
                )
                used.append(value)
                day += rng.randrange(20, 60)
            # Distractors mention superseded values, later than the change they recall.
            for _ in range(distractors_per_key):
                counter += 1
                old = rng.choice(used[:-1])
                when = START + timedelta(days=day + rng.randrange(0, 30), hours=9)
                text = rng.choice(spec.distractor).format(name=name, value=old)
                events.append(
                    (
                        when,
                        counter,
                        {
                            "op": "episode",
                            "tenant": tenant,
                            "id": f"d{counter}",
                            "occurred_at": format_timestamp(when),
                            "text": text,
                            "subjects": [subject],
                        },
                        None,
                    )
                )
    events.sort(key=lambda event: (event[0], event[1]))
    for when, _, recorded, extracted in events:
        # Each episode is recorded a minute after it happened.
        recorded["now"] = format_timestamp(when + timedelta(minutes=1))
        ops.append(recorded)
        if extracted is not None:
            ops.append(extracted)
    return history


def questions(history: History) -> Iterator[dict[str, Any]]:
    """Current-value questions with gold answers, one per key."""
    specs = {spec.attribute: spec for spec in ATTRIBUTES}
    for subject, attribute in history.all_keys():
        timeline = history.timeline(subject, attribute)
        gold = timeline[-1]
        yield {
            "tenant": history.tenant,
            "subject": subject,
            "attribute": attribute,
            "question": specs[attribute].question.format(name=gold.name),
            "gold": gold.value,
            "gold_episode": gold.episode_id,
            "stale": sorted({c.value for c in timeline} - {gold.value}),
        }


def load_history(store: MemoryStore, history: History, *, batch: int = 256) -> None:
    """Write a history through the real write path, episodes embedded in batches.

    Every write shares one system instant (the history's end), which current-value questions
    do not notice; replay the operations instead when known-at matters.
    """
    if isinstance(store.clock, ManualClock):
        store.clock.set(history.end)
    store.ensure_tenant(history.tenant)
    episodes: list[dict[str, Any]] = []
    for op in history.operations:
        body = {key: value for key, value in op.items() if key not in {"op", "tenant", "now"}}
        if op["op"] == "define":
            store.declare_attribute(history.tenant, body.pop("attribute"), body)
        elif op["op"] == "episode":
            episodes.append(body)
    for start in range(0, len(episodes), batch):
        store.record_episodes(history.tenant, episodes[start : start + batch])
    for op in history.operations:
        if op["op"] == "update":
            [result] = store.apply_updates(history.tenant, op["episode"], [op["candidate"]])
            if result.status != "written":
                raise RuntimeError(f"generated update not written: {result}")
