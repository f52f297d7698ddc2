"""Route a question to attributes by similarity to their declared words (read path step 3).

Similarity only chooses which keys to read; the value always comes from an exact filter. An
attribute is scored by its best text: the description, each alias, and its name in words
(``passport_deadline`` -> "passport deadline"), each compared with the question by cosine
similarity of unit vectors. ``retrieval.routing.route`` keeps those at or above its threshold.

Score ``retrieval.question.words.routing_text(question, ...)``, not the raw question: subject names
and dates carry no topic and pull the right attribute's score down ("Where did Mira work in
2024?" scores 0.18 for employer as asked, 0.53 as "Where did work?"); the threshold was
measured on routing text. The subject's name is taken out of the attribute texts as well
(``president_of_south_korea`` is "president of" for subject ``south_korea``), so an attribute
named after its own subject is compared on the same words as the question and does not lose
to other subjects' attributes that keep theirs.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np

from retrieval.question.words import KnownSubject, find_subject_mentions
from retrieval.routing.route import AttributeScore
from retrieval.search.embeddings import Vectors
from store.contract.facts import Attribute

_NAME_SEPARATORS = re.compile(r"[_\-.:]+")


class TextEmbedder(Protocol):
    """What routing needs of an embedder: unit vectors for texts."""

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Unit-length vectors, one row per text."""
        ...


def attribute_texts(attribute: Attribute, *, subject: str | None = None) -> tuple[str, ...]:
    """The texts an attribute is routed by: its name in words, description and aliases.

    With ``subject``, the subject's name is cut out of each text (a text left without a word
    keeps its name), as ``routing_text`` cuts it out of the question.
    """
    return _texts(attribute.attribute, attribute.description, tuple(attribute.aliases), subject)


@functools.lru_cache(maxsize=16_384)
def _texts(
    attribute: str, description: str, aliases: tuple[str, ...], subject: str | None
) -> tuple[str, ...]:
    # Cached: every routed question asks it of each of the tenant's attributes.
    name = _NAME_SEPARATORS.sub(" ", attribute).strip()
    texts = [name, description.strip(), *(alias.strip() for alias in aliases)]
    if subject is not None:
        texts = [_without_subject(text, subject) for text in texts]
    return tuple(dict.fromkeys(text for text in texts if text)) or (attribute,)


def _without_subject(text: str, subject: str) -> str:
    mentions = find_subject_mentions(text, [KnownSubject(subject)])
    if not mentions:
        return text
    kept, cursor = [], 0
    for mention in mentions:
        kept.append(text[cursor : mention.start])
        cursor = max(cursor, mention.end)
    kept.append(text[cursor:])
    left = " ".join("".join(kept).split()).strip(" ,;:")
    return left if any(char.isalnum() for char in left) else text


def score_attributes(
    embedder: TextEmbedder,
    question: str,
    attributes: Sequence[Attribute],
    *,
    subject: str | None = None,
) -> list[AttributeScore]:
    """Each attribute's best cosine similarity to the question, best first; one embed call."""
    texts = [attribute_texts(attribute, subject=subject) for attribute in attributes]
    vectors = embedder.embed([question, *(text for group in texts for text in group)])
    question_vector, rest = vectors[0], vectors[1:]
    groups: list[Vectors] = []
    offset = 0
    for group in texts:
        groups.append(rest[offset : offset + len(group)])
        offset += len(group)
    return ranked(question_vector, attributes, groups)


ABOUT_THRESHOLD = 0.25
"""Least cosine similarity of an episode's stored vector to a key's texts for the episode to be
about the key (``topics_of``), lower than a question's
(``retrieval.routing.route.ROUTING_THRESHOLD``):
an episode's vector is of its whole text, and a sentence about the key among others scores
less.

Measured with all-MiniLM-L6-v2 on the leakage evaluation's phrasings: five episodes stating a
home city or plan (some among other sentences) scored 0.21-0.38 against the key's texts, four
unrelated ones 0.15-0.19; 0.25 keeps clear of the unrelated and catches most of the rest. At
0.25 instead of 0.4, ``sgam eval leakage --size quick`` with a noisy extraction leaked in 32.4%
of blocks instead of 36.4%, and exact SGAM stayed at 0.0% stale leakage. An episode's vector
also lands near a key for what it says of the subject in general ("Zofia prefers concise
answers."); such an episode puts no key in doubt unless one of its sentences could state a
value (``retrieval.context.evidence_quote``).
"""


def topics_of(
    vector: Vectors, attributes: Mapping[str, Vectors], *, threshold: float = ABOUT_THRESHOLD
) -> frozenset[str]:
    """The attributes a text (an episode, by its vector) is about: those whose best text is
    at least ``threshold`` similar to it."""
    return frozenset(
        name for name, group in attributes.items() if float(np.max(group @ vector)) >= threshold
    )


def ranked(
    question: Vectors, attributes: Sequence[Attribute], groups: Sequence[Vectors]
) -> list[AttributeScore]:
    """Each attribute's best cosine similarity to ``question`` (its texts' vectors in
    ``groups``, in the order of ``attributes``), best first, ties by name."""
    scores = [
        AttributeScore(attribute.attribute, float(np.max(group @ question)))
        for attribute, group in zip(attributes, groups, strict=True)
    ]
    return sorted(scores, key=lambda item: (-item.score, item.attribute))
