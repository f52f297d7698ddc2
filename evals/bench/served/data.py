"""``sgam bench``'s seeded data: declared attributes, subjects and their fact histories.

Every subject's histories come from its own random stream (seed and position), so the data
of a larger scale starts with the data of a smaller one: the sweep loads only the difference.
The rows are written once as PostgreSQL COPY text under the cache folder and read back on
every later run. Each history is what the write path leaves after its updates arrived in
order: update j retires the open version of update j-1 and inserts it closed at update j's
``valid_from`` (``ended_by`` the new fact), beside the new open version that ``supersedes`` it.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from uuid import UUID

from evals.bench.evidence.corpus import Episode

FORMAT = 2
"""Bumped whenever the rows change, so an old cache is never read as the new data."""
TENANT = "bench"
KEYS_PER_SUBJECT = 5
"""Attributes a subject has facts for: the same at every scale, so a larger scale has more
subjects of the same shape (10k versions are about 1,000 subjects, 1M about 100,000)."""
MAX_UPDATES = 2
"""Updates a key has at most (at least one): about 10 version rows a subject."""
MEASURED_KEYS = 64

_PERSON = (
    "phone number, email address, home city, employer, job title, favorite food, allergy,"
    " birthday, preferred language, dog's name, hobby, car, coffee order, time zone, manager,"
    " dentist appointment, flight, salary, nickname, shoe size, gym membership, favorite band,"
    " desk number, emergency contact, passport deadline, home address, bank, doctor, team,"
    " office, laptop, parking spot, favorite book"
)
_PROJECT = "deadline, budget, status, owner, launch date, priority, server region, blocker, client"
PERSON_WORDS = tuple(_PERSON.split(", "))
PROJECT_WORDS = tuple(_PROJECT.split(", "))
ATTRIBUTE_WORDS = PERSON_WORDS + PROJECT_WORDS
"""The 42 declared attributes, in words (their descriptions); ``slug`` gives the ids."""

_START = datetime(2022, 1, 1, tzinfo=UTC)
_NULL = "\\N"


def slug(words: str) -> str:
    """An identifier for a name or attribute in words: ``Dog's name`` -> ``dogs_name``."""
    return re.sub(r"[^a-z0-9]+", "_", words.lower().replace("'", "")).strip("_")


@dataclass(frozen=True, slots=True)
class Subjects:
    """Who the facts are about, in load order: the corpus's subjects, then synthetic ones."""

    names: tuple[str, ...]
    """Display names of the corpus's subjects, shuffled by the seed."""
    episodes: dict[str, tuple[int, ...]]
    """Each corpus subject's episodes (indices into the corpus), by display name."""
    episode_kinds: tuple[str, ...]
    """Every episode's kind, by index: a fact's ``source_kind`` is its source episode's."""

    def name(self, index: int) -> str:
        """The display name of the subject at ``index`` (synthetic past the corpus's)."""
        return self.names[index] if index < len(self.names) else f"person {index:07d}"


def corpus_subjects(corpus: Sequence[Episode], *, seed: int) -> Subjects:
    """The corpus's subjects in a seeded order, with their episodes."""
    episodes: dict[str, list[int]] = {}
    for index, episode in enumerate(corpus):
        episodes.setdefault(episode.subject, []).append(index)
    names = sorted(episodes)
    random.Random(seed).shuffle(names)
    return Subjects(
        names=tuple(names),
        episodes={name: tuple(found) for name, found in episodes.items()},
        episode_kinds=tuple(episode.kind for episode in corpus),
    )


def episode_id(index: int) -> str:
    """The id ``evals.bench.evidence.load`` gives the corpus's episode at ``index``."""
    return f"ep-{index:07d}"


@dataclass(frozen=True, slots=True)
class Update:
    """One assertion of a key's history: its fact, value, start and arrival."""

    fact_id: UUID
    value: str
    valid_from: datetime
    recorded_at: datetime
    source: int
    """The source episode's index."""


@dataclass(frozen=True, slots=True)
class KeyHistory:
    """A key and its updates in valid-time (and arrival) order."""

    subject: str
    name: str
    attribute: str
    words: str
    updates: tuple[Update, ...]


def _words_of(name: str) -> tuple[str, ...]:
    return PROJECT_WORDS if name.startswith("Project ") else PERSON_WORDS


def _stream(seed: int, index: int) -> random.Random:
    return random.Random(f"sgam-bench:{seed}:{index}")


def _shape(rng: random.Random, name: str) -> list[tuple[str, int]]:
    """The subject's attributes (in words, in declaration order) and each one's updates."""
    words = _words_of(name)
    chosen = sorted(rng.sample(range(len(words)), KEYS_PER_SUBJECT))
    return [(words[position], rng.randint(1, MAX_UPDATES)) for position in chosen]


def subject_histories(subjects: Subjects, index: int, *, seed: int) -> list[KeyHistory]:
    """The key histories of the subject at ``index``."""
    name = subjects.name(index)
    rng = _stream(seed, index)
    shape = _shape(rng, name)
    own = subjects.episodes.get(name, ())
    total = len(subjects.episode_kinds)
    histories = []
    for attribute_words, count in shape:
        instant = _START + timedelta(days=rng.randrange(365), minutes=rng.randrange(1_440))
        updates = []
        for _ in range(count):
            updates.append(
                Update(
                    fact_id=UUID(int=rng.getrandbits(128), version=4),
                    value=f"{attribute_words} {rng.randrange(1_000_000)}",
                    valid_from=instant,
                    recorded_at=instant + timedelta(hours=1),
                    source=rng.choice(own) if own else rng.randrange(total),
                )
            )
            instant += timedelta(days=rng.randrange(5, 150), minutes=rng.randrange(1_440))
        histories.append(
            KeyHistory(slug(name), name, slug(attribute_words), attribute_words, tuple(updates))
        )
    return histories


def versions_of(subjects: Subjects, index: int, *, seed: int) -> int:
    """How many version rows the subject at ``index`` has (2 per update, less the first)."""
    shape = _shape(_stream(seed, index), subjects.name(index))
    return sum(2 * count - 1 for _, count in shape)


def subjects_for(subjects: Subjects, versions: int, *, seed: int) -> tuple[int, int]:
    """The fewest leading subjects holding at least ``versions`` rows, and their row count."""
    count = rows = 0
    while rows < versions:
        rows += versions_of(subjects, count, seed=seed)
        count += 1
    return count, rows


def _cell(value: object) -> str:
    if value is None:
        return _NULL
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    return str(value)


def version_rows(history: KeyHistory, kinds: Sequence[str], *, seed: int) -> Iterator[str]:
    """The key's ``fact_versions`` rows as COPY text lines (columns of ``COPY_COLUMNS``)."""
    rng = random.Random(f"{seed}:{history.subject}:{history.attribute}")
    updates = history.updates
    for number, update in enumerate(updates):
        before = updates[number - 1].fact_id if number else None
        after = updates[number + 1] if number + 1 < len(updates) else None
        # The open version, retired when the next update arrived...
        rows: list[tuple[datetime | None, UUID | None, datetime | None, datetime]] = [
            (None, None, after.recorded_at if after else None, update.recorded_at)
        ]
        if after is not None:  # ...and its closed copy, believed from then on.
            rows.append((after.valid_from, after.fact_id, None, after.recorded_at))
        for valid_to, ended_by, retired_at, recorded_at in rows:
            cells = (
                TENANT,
                UUID(int=rng.getrandbits(128), version=4),
                update.fact_id,
                history.subject,
                history.attribute,
                f'"{update.value}"',
                update.valid_from,
                valid_to,
                recorded_at,
                retired_at,
                before,
                ended_by,
                "fact" if ended_by else None,
                episode_id(update.source),
                kinds[update.source],
                None,
                "f",
                1,
            )
            yield "\t".join(_cell(cell) for cell in cells) + "\n"


COPY_COLUMNS = (
    "tenant_id, version_id, fact_id, subject, attribute, value, valid_from, valid_to,"
    " recorded_at, retired_at, supersedes, ended_by, ended_by_kind, source_episode_id,"
    " source_kind, evidence, evidence_verified, schema_version"
)


def fact_rows(subjects: Subjects, first: int, last: int, *, seed: int, cache_dir: Path) -> Path:
    """The COPY text of subjects ``first`` to ``last`` (exclusive), written once to the cache."""
    digest = hashlib.sha256(f"{FORMAT}:{seed}:{len(subjects.episode_kinds)}".encode())
    digest.update("\0".join(subjects.names).encode())
    path = cache_dir / f"facts-{digest.hexdigest()[:12]}-{first}-{last}.tsv"
    if path.exists():
        return path
    cache_dir.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    with partial.open("w", encoding="utf-8") as out:
        for index in range(first, last):
            for history in subject_histories(subjects, index, seed=seed):
                out.writelines(version_rows(history, subjects.episode_kinds, seed=seed))
    partial.replace(path)
    return path


@dataclass(frozen=True, slots=True)
class MeasuredKey:
    """A key the reads ask for, with the instants of its point-in-time and known-at reads."""

    subject: str
    name: str
    attribute: str
    words: str
    valid_at: datetime
    """Inside the first update's closed window: a past value, as known now."""
    known_at: datetime
    """Just after the first update arrived, before the second: what was believed then."""

    @property
    def question(self) -> str:
        """A question naming the subject and the attribute in words."""
        return f"What is {self.name}'s current {self.words}?"


def measured_keys(subjects: Subjects, count: int, *, seed: int) -> list[MeasuredKey]:
    """Keys of the first ``count`` subjects with episodes and at least two updates, spread."""
    chosen: list[list[MeasuredKey]] = []
    for index in range(count):
        if subjects.name(index) not in subjects.episodes:
            continue
        keys = []
        for history in subject_histories(subjects, index, seed=seed):
            first, *rest = history.updates
            if rest:
                keys.append(
                    MeasuredKey(
                        subject=history.subject,
                        name=history.name,
                        attribute=history.attribute,
                        words=history.words,
                        valid_at=first.valid_from + (rest[0].valid_from - first.valid_from) / 2,
                        known_at=first.recorded_at + timedelta(minutes=1),
                    )
                )
        chosen.append(keys)
    # One key of each subject in turn, so the reads visit every subject.
    spread = [key for round_ in _rounds(chosen) for key in round_]
    return spread[:MEASURED_KEYS]


def _rounds(groups: list[list[MeasuredKey]]) -> Iterator[list[MeasuredKey]]:
    depth = max((len(group) for group in groups), default=0)
    for position in range(depth):
        yield [group[position] for group in groups if position < len(group)]
