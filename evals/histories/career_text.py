"""Encyclopedia-style paragraphs of the careers family, and the facts each one is the source of.

Per subject, its changes (every value of every key, by start) are taken in time order, one or
two at a time; each group is one paragraph of three to seven sentences:

1. an opening sentence naming the subject (the name the candidates pass as ``subject_name``);
2. for each change of the group, a sentence stating its value with its exact start ("In March
   2014, she became head of research.", "On 3 May 2001, Dag Aasen became chair of the AHA.");
   that sentence is the fact's evidence;
3. for each change, the value before it with its years ("Before that, from 2009 to 2014 she
   worked at the University of Bergen.") or the one after it ("In 2019 she moved to ..."), so
   every paragraph names more than one period's value;
4. up to two sentences that state no value.

A value is sometimes written otherwise than stored, as real text does (``written``): a space
before its comma ("University of Oslo , Blindern"), its leading "The" in lower case or left
out, its diacritics left out ("Malaga" for "Málaga"), a job title in lower case. A paragraph is
written (``occurred_at``) some time after the last start it names.
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta

from evals.histories.career_names import ACRONYM, FULL, MIDDLE, CareerSubject
from evals.histories.careers import CareerKey, Held

_LAST_WRITTEN = date(2024, 12, 31)
_ARTICLE_BEFORE = ("University of", "Institute of")
_DESCRIPTIONS = {
    "researcher": "a scientist", "athlete": "a rower", "politician": "a politician",
    "musician": "a singer-songwriter", "writer": "a novelist", "executive": "an executive",
    "authority": "a public body that runs a port", "institute": "a research body",
    "club": "a sports club", "federation": "an international federation",
    "orchestra": "an orchestra", "company": "a trading company",
}  # fmt: skip
_PERSON_FILLERS = (
    "{Pronoun} grew up on a farm and studied in the capital.",
    "{Pronoun} has written widely about the work.",
    "Colleagues describe {object} as patient and exacting.",
    "{Pronoun} is married with two children.",
)
_ORGANISATION_FILLERS = (
    "Its annual report is published each spring.",
    "The board meets four times a year.",
    "Its archive is open to researchers by appointment.",
    "Membership has grown steadily over the decades.",
)
_OBJECT = {"she": "her", "he": "him", "it": "it"}
_POSSESSIVE = {"she": "her", "he": "his", "it": "its"}


@dataclass(frozen=True)
class Fact:
    """A candidate the paragraph is the source of: the key's index-th value, and its evidence."""

    key: CareerKey
    index: int
    evidence: str


@dataclass
class Paragraph:
    """One episode's text, when it was written, and the facts it is the source of."""

    subject: CareerSubject
    text: str
    written_at: date
    subject_name: str
    facts: list[Fact] = field(default_factory=list)
    named: list[tuple[CareerKey, int]] = field(default_factory=list)
    """Every value the paragraph states, facts and other periods alike."""
    forms: dict[str, str] = field(default_factory=dict)
    """Each value stated, as the paragraph writes it."""


def paragraphs(keys: Sequence[CareerKey], rng: random.Random) -> list[Paragraph]:
    """The paragraphs about one subject (``keys`` are all its keys), every value the source of
    exactly one fact."""
    changes = sorted(
        ((key, index) for key in keys for index in range(len(key.held))),
        key=lambda change: (change[0].held[change[1]].start, change[0].role.attribute),
    )
    written: list[Paragraph] = []
    while changes:
        size = min(len(changes), rng.choice((1, 2, 2)))
        group, changes = changes[:size], changes[size:]
        written.append(_paragraph(keys[0].subject, group, rng))
    return written


def _paragraph(
    subject: CareerSubject, group: Sequence[tuple[CareerKey, int]], rng: random.Random
) -> Paragraph:
    name = subject.written(FULL)
    if subject.middle and rng.random() < 0.3:
        name = subject.written(MIDDLE)  # the middle name left out
    opening = _capital(name)
    if subject.kind == "organisation" and rng.random() < 0.5:
        opening += f" ({subject.acronym})"
    first = group[0][0].held[group[0][1]].start.year
    since = f" since {rng.randint(first - 15, first - 1)}" if subject.kind == "person" else ""
    verb = "has been" if subject.kind == "person" else "is"
    paragraph = Paragraph(subject, "", _LAST_WRITTEN, name.removeprefix("the "))
    sentences = [f"{opening} {verb} {_DESCRIPTIONS[subject.group]}{since}."]
    context: list[str] = []
    for key, index in group:
        sentence = _started(paragraph, key, index, rng)
        sentences.append(sentence)
        paragraph.facts.append(Fact(key, index, sentence))
        others = {(id(k), i) for k, i in group if (k, i) != (key, index)}
        context.extend(_around(paragraph, key, index, rng, skip=others))
    sentences += context
    fillers = _PERSON_FILLERS if subject.kind == "person" else _ORGANISATION_FILLERS
    pronoun = subject.pronoun
    for filler in rng.sample(fillers, rng.randint(0, min(2, 7 - len(sentences)))):
        text = filler.format(Pronoun=pronoun.capitalize(), object=_OBJECT[pronoun])
        sentences.insert(rng.randint(1, len(sentences)), text)
    latest = max(key.held[index].start for key, index in paragraph.named)
    written = latest + timedelta(days=rng.randint(30, 900))
    paragraph.text = " ".join(sentences)
    paragraph.written_at = min(written, _LAST_WRITTEN)
    return paragraph


def _who(subject: CareerSubject, rng: random.Random, *, named: bool = False) -> str:
    """The subject as a later sentence names it: a pronoun (unless ``named``), a surname,
    "the AHA"."""
    if subject.kind == "person":
        return subject.short if named or rng.random() < 0.3 else subject.pronoun
    return subject.written(ACRONYM) if rng.random() < 0.6 else subject.written(FULL)


def _started(paragraph: Paragraph, key: CareerKey, index: int, rng: random.Random) -> str:
    held = key.held[index]
    template = rng.choice(key.role.started)
    text = template.format(
        when=_when(held, rng),
        # A person-held role's sentences name the subject as object or subject: by name.
        who=_who(paragraph.subject, rng, named=key.role.pool == "person"),
        whose=_POSSESSIVE[paragraph.subject.pronoun],
        value=_state(paragraph, key, index, rng),
    )
    return _capital(text)


def _around(
    paragraph: Paragraph,
    key: CareerKey,
    index: int,
    rng: random.Random,
    *,
    skip: Collection[tuple[int, int]],
) -> list[str]:
    """A sentence on the value before this one, or after it, or (when it is the paragraph's
    only change) both; never on a value ``skip`` holds (the paragraph's other changes, as
    ``(id(key), index)``)."""
    found = []
    before = index > 0 and (id(key), index - 1) not in skip
    after = index + 1 < len(key.held) and (id(key), index + 1) not in skip
    both = not skip and before and after and rng.random() < 0.3
    pronoun = paragraph.subject.pronoun
    if before and (both or not after or rng.random() < 0.6):
        clause = rng.choice(key.role.held).format(
            since=key.held[index - 1].start.year,
            until=key.held[index].start.year,
            who=_OBJECT[pronoun] if key.role.pool == "person" else pronoun,
            value=_state(paragraph, key, index - 1, rng),
        )
        found.append(_capital(f"Before that, {clause}." if rng.random() < 0.7 else f"{clause}."))
    if after and (both or not found):
        clause = rng.choice(key.role.later).format(
            since=key.held[index + 1].start.year,
            who=pronoun,
            value=_state(paragraph, key, index + 1, rng),
        )
        found.append(_capital(f"{clause}."))
    return found


def _state(paragraph: Paragraph, key: CareerKey, index: int, rng: random.Random) -> str:
    """The value as this paragraph writes it (once chosen, the same in every sentence)."""
    value = key.held[index].value
    if value not in paragraph.forms:
        paragraph.forms[value] = written(value, pool=key.role.pool, rng=rng)
        paragraph.named.append((key, index))
    form = paragraph.forms[value]
    return f"the {form}" if form.startswith(_ARTICLE_BEFORE) else form


def written(value: str, *, pool: str, rng: random.Random) -> str:
    """A value as a text may write it: mostly as stored, sometimes otherwise."""
    draw = rng.random()
    if ", " in value and draw < 0.5:
        return value.replace(", ", " , ")
    if value.startswith("The ") and draw < 0.6:
        return f"the {value[4:]}" if draw < 0.3 else value[4:]
    plain = _without_marks(value)
    if plain != value and plain.isascii() and draw < 0.4:
        return plain
    if pool == "position" and draw < 0.6:
        return value.lower()
    return value


def _without_marks(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return unicodedata.normalize(
        "NFC", "".join(char for char in decomposed if not unicodedata.combining(char))
    )


def _when(held: Held, rng: random.Random) -> str:
    """The start in words as exactly as it is known: "On 3 May 2001", "In March 2014"."""
    start: date = held.start
    if held.precision == "month":
        return f"In {start.strftime('%B')} {start.year}"
    if rng.random() < 0.5:
        return f"On {start.day} {start.strftime('%B')} {start.year}"
    return f"On {start.strftime('%B')} {start.day}, {start.year}"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]
