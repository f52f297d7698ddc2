"""Query sets with known answers for comparing the search modes: exact tokens and paraphrases.

Exact-token episodes come in four families (order numbers, email addresses, product codes,
rare surnames), each a few hundred near-duplicates phrased alike that differ in the token:
order confirmations of other orders, notes from other senders, holds on other batches, calls
from other people. The asked episode is one of them, and the question names its token in
words no episode uses. Nothing here was tuned to the search: the tokens are drawn at random,
and the generator of the general corpus (``corpus.py``) is used as it is.

Paraphrased questions are the general benchmark's (``corpus.QUESTIONS``, held-out templates)
about a subject's attribute; their answers are the scope's episodes stating that attribute of
that subject.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evals.bench.evidence.corpus import QUESTIONS, Episode


def _words(text: str) -> list[str]:
    return text.split()


_SYLLABLES = _words(
    "vel kor ansk ith ruo ma zel dra op quen tsi lav ob erg hul yam nex sor pil aud wen gar"
    " bro fes tal mir ock"
)
_FIRST = _words("Dana Omar Priya Sven Rosa Hugo Leila Kai Nadia Felix Grace Ivan")
_LAST = _words("Kim Haddad Patel Eriksen Torres Vogel Tanaka Silva Novak Costa Weber Park")
_CITIES = _words("Lisbon Osaka Nairobi Toronto Krakow Austin Lyon Seoul Oslo Porto")
_PRODUCTS = (
    "espresso grinder",
    "standing desk",
    "trail shoe",
    "router",
    "office chair",
    "kettle",
)
_DAYS = _words("Monday Tuesday Wednesday Thursday Friday")


def _order(rng: random.Random) -> str:
    return f"ORD-{rng.randrange(100_000, 999_999)}"


def _email(rng: random.Random) -> str:
    domain = rng.choice(("example.com", "mail.test", "corp.example"))
    return f"{rng.choice(_FIRST).lower()}.{rng.choice(_LAST).lower()}{rng.randrange(100)}@{domain}"


def _code(rng: random.Random) -> str:
    letters = "".join(rng.choices(string.ascii_uppercase, k=2))
    return f"{letters}-{rng.randrange(1000, 9999)}-{rng.choice(string.ascii_uppercase)}"


def _surname(rng: random.Random) -> str:
    return "".join(rng.sample(_SYLLABLES, 3)).capitalize()


@dataclass(frozen=True, slots=True)
class Family:
    """Episodes that differ by one token, and questions that name it in other words."""

    name: str
    token: Callable[[random.Random], str]
    templates: tuple[str, ...]
    questions: tuple[str, ...]


FAMILIES = (
    Family(
        "order number",
        _order,
        (
            "Order {token} for {person} left the {city} warehouse on {day}, tracking by email.",
            "{person}'s order {token} is packed and waits for the courier in {city}.",
            "Shipping update: {token} ({product}) delayed one day at the {city} hub.",
        ),
        ("Has {token} shipped yet?", "any news on {token}?", "the customer asks where {token} is"),
    ),
    Family(
        "email address",
        _email,
        (
            "Email from {token}: the invoice PDF for the {product} will not open, please resend.",
            "{token} wrote again about the {product} refund, still waiting since {day}.",
            "New lead {token} asked for a quote on ten units of the {product}.",
        ),
        ("What did {token} write to us about?", "find the message from {token}"),
    ),
    Family(
        "product code",
        _code,
        (
            "Batch {token} of the {product} failed QA on {day}, hold the pallets in {city}.",
            "Part {token} for the {product} is back in stock in {city}.",
            "Return of {token} ({product}) approved by {person} on {day}.",
        ),
        ("Why is {token} on hold?", "what happened with part {token}?", "status of {token}"),
    ),
    Family(
        "rare surname",
        _surname,
        (
            "Mr {token} called to move the {product} delivery to {day}.",
            "Ms {token} from {city} asked {person} for a callback about the {product}.",
            "Note from the front desk: {token} left a parcel for {person}.",
        ),
        ("What did {token} call about?", "remind me what {token} wanted"),
    ),
)


@dataclass(frozen=True, slots=True)
class Asked:
    """A question and the ids of the episodes that answer it."""

    question: str
    answers: frozenset[str]
    kind: str


def token_episodes(
    per_family: int, asked_per_family: int, *, seed: int
) -> tuple[list[tuple[str, str]], list[Asked]]:
    """``per_family`` episodes of each family as (id, text), each with a token of its own, and
    a question for ``asked_per_family`` of them, drawn at random."""
    rng = random.Random(seed)
    episodes: list[tuple[str, str]] = []
    asked: list[Asked] = []
    for number, family in enumerate(FAMILIES):
        tokens: dict[str, None] = {}
        while len(tokens) < per_family:
            tokens[family.token(rng)] = None
        ids = []
        for index, token in enumerate(tokens):
            text = rng.choice(family.templates).format(
                token=token,
                person=f"{rng.choice(_FIRST)} {rng.choice(_LAST)}",
                city=rng.choice(_CITIES),
                day=rng.choice(_DAYS),
                product=rng.choice(_PRODUCTS),
            )
            episode_id = f"t{number}-{index}"
            episodes.append((episode_id, text))
            ids.append((episode_id, token))
        for episode_id, token in rng.sample(ids, asked_per_family):
            question = rng.choice(family.questions).format(token=token)
            asked.append(Asked(question, frozenset({episode_id}), family.name))
    return episodes, asked


def paraphrased(
    corpus: Sequence[Episode], ids: Sequence[str], count: int, *, seed: int
) -> list[Asked]:
    """``count`` questions about a subject's attribute that ``corpus`` states (``ids`` are its
    episodes' ids), each answered by every episode stating that attribute of that subject."""
    rng = random.Random(seed)
    stating: dict[tuple[str, str], set[str]] = {}
    for episode_id, episode in zip(ids, corpus, strict=True):
        if episode.attribute is not None:
            stating.setdefault((episode.subject, episode.attribute), set()).add(episode_id)
    keys = sorted(stating)
    return [
        Asked(
            rng.choice(QUESTIONS).format(name=subject, attr=attribute),
            frozenset(stating[(subject, attribute)]),
            "paraphrased",
        )
        for subject, attribute in rng.sample(keys, min(count, len(keys)))
    ]
