"""The name-resolution benchmark's tenant: people with names, one fact each, and the keys asked.

Every person has a first name from a list, a surname (three in ten from a list of common ones, the
rest made of syllables, so a surname is shared by a few people or by none) and, one in ten, a middle
initial; their id is the name's slug (``_2``, ``_3``... when the name repeats). Each person holds
one fact, written by the bulk import that ``sgam import`` runs
(``store.episodes.bulk_write.import_lines``), which also keeps each id as a name. Display names are
declared in batches by the statement ``store.subjects.names`` runs for ``PUT /v1/subjects/{id}``:
the same folding (``fold_name``) and the same keys (``sgam_name_keys``), many subjects a statement.
The measured people are declared over HTTP instead, as users declare them.

A measured person's full name and surname are each theirs alone in the tenant, so that the
full name and the surname find them by key; their near spelling (the surname less one
letter) is nobody's key, so that only the trigram search can find them.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from evals.bench.served.data import TENANT
from store.bench import Connection
from store.contract.common import fold_name

ATTRIBUTE = "employer"
"""The one attribute every person holds (one of ``evals.bench.served.data``'s declared ones)."""
ATTRIBUTE_WORDS = "employer"
PER_EPISODE = 100
"""Candidates per imported episode."""
BATCH = 10_000
"""Display names declared per statement."""

_FIRST = (  # noqa: SIM905 - words, easier read as a line
    "Adaeze Aiko Alejandro Amara Anders Anika Arjun Astrid Beatriz Bjorn Camille Chidi Chloe"
    " Dario Deepa Dmitri Elif Elena Emeka Esther Farid Fatima Felix Freya Gabriel Hana Hamid"
    " Hiroshi Ines Ingrid Isabel Ivan Jamal Javier Jonas Julia Kaito Kamala Karin Kenji Kofi"
    " Kristin Lars Leila Lena Liam Lucia Magnus Malik Marco Maria Mateo Mei Mira Nadia Naveen"
    " Nia Nikolai Noor Olga Omar Oskar Paolo Pedro Priya Rafael Rania Ravi Rosa Sakura Samir"
    " Sanjay Sara Sebastian Sina Sofia Sven Tariq Tomas Uma Valentina Vikram Wei Yara Yusuf"
    " Zainab Zoe"
).split()
_COMMON = (  # noqa: SIM905 - words, easier read as a line
    "Smith Garcia Nguyen Kim Okafor Berg Silva Novak Kowalski Rossi Müller Haddad Tanaka Cohen"
    " Larsen Ivanova Mensah Fernandes Popescu Yilmaz Andersen Khan Santos Schmidt Dubois"
    " Lindqvist Moreau Hansen Petrov Costa"
).split()
_SYLLABLES = (  # noqa: SIM905 - words, easier read as a line
    "ka lor ven mi sa tor bel dra gon il ko man nes ol pra qui ren sel tan ur vas wen yo zel"
    " ash bri cel dor esk fal gri hal ith jen kor lun"
).split()
_COMMON_SHARE = 0.3
_MIDDLE_SHARE = 0.1
_VALID_FROM = datetime(2025, 6, 1, tzinfo=UTC)
_OCCURRED = "2026-02-01T00:00:00Z"


@dataclass(frozen=True, slots=True)
class Person:
    """A subject of the tenant: its id and the display name declared for it."""

    subject: str
    display_name: str
    first: str
    surname: str
    middle: bool


@dataclass(frozen=True, slots=True)
class NamedKey:
    """A measured key, with the three ways a question names its subject."""

    subject: str
    attribute: str
    full_name: str
    surname: str
    near_spelling: str
    """The full name with one letter of the surname left out: nobody's key."""

    def question(self, name: str) -> str:
        """A question naming the subject as ``name`` and the attribute in words."""
        return f"What is {name}'s current {ATTRIBUTE_WORDS}?"


def _surname(rng: random.Random) -> str:
    if rng.random() < _COMMON_SHARE:
        return rng.choice(_COMMON)
    syllables = rng.choices(_SYLLABLES, k=rng.choice((2, 3)))
    return "".join(syllables).capitalize()


def people(count: int, *, seed: int) -> list[Person]:
    """``count`` people from the seed; the first ``n`` of a larger count are the same."""
    firsts = {fold_name(first) for first in _FIRST}
    seen: Counter[str] = Counter()
    found = []
    for index in range(count):
        rng = random.Random(f"sgam-bench-names:{seed}:{index}")
        first = rng.choice(_FIRST)
        surname = _surname(rng)
        while fold_name(surname) in firsts:  # a surname that is also a first name: none
            surname = _surname(rng)
        middle = rng.random() < _MIDDLE_SHARE
        display = f"{first} {rng.choice(_FIRST)[0]}. {surname}" if middle else f"{first} {surname}"
        base = fold_name(f"{first} {surname}").replace(" ", "_")
        seen[base] += 1
        subject = base if seen[base] == 1 else f"{base}_{seen[base]}"
        found.append(Person(subject, display, first, surname, middle))
    return found


def _keys(person: Person) -> set[str]:
    """The keys the person's display name and id are found by that a question's words
    could ask (``sgam_name_keys``: whole, first and last word, last word)."""
    keys = {fold_name(person.display_name), fold_name(person.surname)}
    keys.add(fold_name(f"{person.first} {person.surname}"))
    keys.add(fold_name(person.subject.replace("_", " ")))
    return keys


def measured_keys(everyone: Sequence[Person], count: int) -> list[NamedKey]:
    """``count`` people spread over the tenant whose full name and surname are theirs alone,
    and whose near spelling is nobody's key."""
    keys: Counter[str] = Counter(key for person in everyone for key in _keys(person))
    surnames = Counter(fold_name(person.surname) for person in everyone)
    eligible = []
    for person in everyone:
        full = f"{person.first} {person.surname}"
        near = _near(person.surname)
        if (
            not person.middle
            and surnames[fold_name(person.surname)] == 1
            and keys[fold_name(full)] == 1
            and not keys[fold_name(near)]
            and not keys[fold_name(f"{person.first} {near}")]
        ):
            near_full = f"{person.first} {near}"
            eligible.append(NamedKey(person.subject, ATTRIBUTE, full, person.surname, near_full))
    step = max(1, len(eligible) // count)
    return eligible[::step][:count]


def _near(surname: str) -> str:
    """The surname less its middle letter: ``Renmisa`` -> ``Renisa``."""
    middle = len(surname) // 2
    return surname[:middle] + surname[middle + 1 :]


def import_lines(everyone: Sequence[Person]) -> Iterator[str]:
    """The import file's lines: one fact of each person, ``PER_EPISODE`` people an episode."""
    for start in range(0, len(everyone), PER_EPISODE):
        group = everyone[start : start + PER_EPISODE]
        updates = [
            {
                "evidence": "",
                "subject": person.subject,
                "attribute": ATTRIBUTE,
                "change": "new",
                "value": f"Employer {(start + n) % 997}",
                "valid_from": _VALID_FROM.isoformat(),
            }
            for n, person in enumerate(group)
        ]
        episode = {
            "tenant": TENANT,
            "id": f"staff-records-{start // PER_EPISODE}",
            "occurred_at": _OCCURRED,
            "text": f"Staff records, part {start // PER_EPISODE + 1}.",
            "updates": updates,
        }
        yield json.dumps(episode)


# ``store.subjects.names``'s statement for declared names, for many subjects at once.
_DECLARE = """
INSERT INTO subject_names
    (tenant_id, subject, source, name, folded, kind, key, episode_id, recorded_at)
SELECT %(tenant_id)s::text, n.subject, 'display', n.name, n.folded, k.kind, k.key, NULL, now()
FROM unnest(%(subjects)s::text[], %(names)s::text[], %(folded)s::text[])
         AS n (subject, name, folded),
     sgam_name_keys(n.folded) AS k
ON CONFLICT DO NOTHING
"""


def declare_display_names(conn: Connection, everyone: Sequence[Person]) -> int:
    """Declare each person's display name, ``BATCH`` a statement; the rows written."""
    written = 0
    for start in range(0, len(everyone), BATCH):
        group = everyone[start : start + BATCH]
        cursor = conn.execute(
            _DECLARE,
            {
                "tenant_id": TENANT,
                "subjects": [person.subject for person in group],
                "names": [person.display_name.strip() for person in group],
                "folded": [fold_name(person.display_name) for person in group],
            },
        )
        written += cursor.rowcount
    return written


_NAME_ROWS = """
SELECT subject, source, name, folded, kind, key, episode_id FROM subject_names
WHERE tenant_id = %(tenant_id)s AND subject = ANY(%(subjects)s)
ORDER BY subject, source, folded, kind
"""


def name_rows(conn: Connection, subjects: Sequence[str]) -> list[tuple[Any, ...]]:
    """The subjects' name rows, all but when they were recorded, in a fixed order."""
    return conn.execute(_NAME_ROWS, {"tenant_id": TENANT, "subjects": list(subjects)}).fetchall()
