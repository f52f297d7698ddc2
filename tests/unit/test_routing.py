"""Attribute routing with the real embedding model on a support-bot customer schema."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
import pytest

from retrieval.question.words import KnownSubject, routing_text
from retrieval.routing.index import AttributeIndex
from retrieval.routing.route import ROUTING_THRESHOLD, route_keys
from retrieval.routing.similarity import attribute_texts, score_attributes
from retrieval.search.embeddings import Embedder, Vectors
from store.contract.facts import Attribute
from store.contract.values import ValueType

NOW = datetime(2026, 6, 4, 15, 30, tzinfo=UTC)
KNOWN = [KnownSubject("mira", aliases=("Mira Lopez",)), KnownSubject("account:42")]


def declared(
    attribute: str,
    value_type: ValueType,
    description: str,
    *aliases: str,
    enum_values: Sequence[str] = (),
    schema_version: int = 1,
) -> Attribute:
    """An attribute as the store returns it, built without a database."""
    return Attribute(
        attribute=attribute,
        value_type=value_type,
        description=description,
        aliases=list(aliases),
        enum_values=list(enum_values),
        schema_version=schema_version,
        created_at=NOW,
        updated_at=NOW,
    )


SCHEMA = [
    declared(
        "passport_deadline",
        ValueType.DATE,
        "Date by which a passport must be renewed before it expires",
        "passport renewal date",
        "passport expiry date",
    ),
    declared(
        "home_city",
        ValueType.STRING,
        "City or town where someone lives",
        "city of residence",
        "hometown",
        "where they live",
    ),
    declared(
        "preferred_language",
        ValueType.STRING,
        "Language to use when replying or talking",
        "language preference",
        "language they speak",
    ),
    declared(
        "account_tier",
        ValueType.ENUM,
        "Subscription plan or membership level of the account",
        "plan",
        "membership tier",
        "subscription level",
        enum_values=("free", "plus", "premium"),
    ),
    declared(
        "shipping_address",
        ValueType.STRING,
        "Postal address where orders are delivered",
        "delivery address",
        "where to ship packages",
    ),
    declared(
        "phone_number",
        ValueType.STRING,
        "Telephone number for calls or text messages",
        "mobile number",
        "contact phone",
    ),
    declared(
        "birthday",
        ValueType.DATE,
        "Date of birth, the day to wish a happy birthday",
        "birth date",
        "when they were born",
    ),
    declared(
        "employer",
        ValueType.STRING,
        "Company or organization where someone works",
        "workplace",
        "job",
    ),
    declared(
        "dietary_restriction",
        ValueType.STRING,
        "Foods that must be avoided: allergies, vegetarian or other diets",
        "food allergies",
        "diet",
    ),
    declared(
        "answer_style",
        ValueType.STRING,
        "How answers should be written: short or detailed, tone and format",
        "response style",
        "verbosity",
    ),
]

PARAPHRASES = [
    ("When does Mira need to renew her passport?", "passport_deadline"),
    ("By what date must her travel document be renewed?", "passport_deadline"),
    ("When does his passport expire?", "passport_deadline"),
    ("What was Mira's passport deadline on June 2?", "passport_deadline"),
    ("Where does Mira live?", "home_city"),
    ("Which town is she based in?", "home_city"),
    ("What city is the customer's home?", "home_city"),
    ("Where did she live in 1980?", "home_city"),
    ("What language should I reply in?", "preferred_language"),
    ("Does she prefer Spanish or English?", "preferred_language"),
    ("Which language does the customer speak?", "preferred_language"),
    ("What language did Mira prefer as of April 21, 1980?", "preferred_language"),
    ("Is this customer on the premium plan?", "account_tier"),
    ("What subscription level does account 42 have?", "account_tier"),
    ("Which membership tier was the account on last month?", "account_tier"),
    ("What's account 42's current plan?", "account_tier"),
    ("Where should we send the package?", "shipping_address"),
    ("What's the delivery address for her orders?", "shipping_address"),
    ("Where do we ship his parcels?", "shipping_address"),
    ("Which address should Mira's order go to?", "shipping_address"),
    ("What number can I call her on?", "phone_number"),
    ("How do I reach him by phone?", "phone_number"),
    ("What's the customer's mobile number?", "phone_number"),
    ("What was Mira's phone number last year?", "phone_number"),
    ("When was Mira born?", "birthday"),
    ("What is her date of birth?", "birthday"),
    ("On what day does she celebrate her birthday?", "birthday"),
    ("When is Mira's birthday?", "birthday"),
    ("Where does she work?", "employer"),
    ("Which company employs him?", "employer"),
    ("Who is the customer's employer?", "employer"),
    ("Where did Mira work in 2024?", "employer"),
    ("Is she allergic to anything?", "dietary_restriction"),
    ("Can he eat meat?", "dietary_restriction"),
    ("What foods should we avoid when ordering lunch for her?", "dietary_restriction"),
    ("Is Mira Lopez vegetarian?", "dietary_restriction"),
    ("Should answers to her be short or detailed?", "answer_style"),
    ("How does she like responses to be formatted?", "answer_style"),
    ("Does he prefer concise replies?", "answer_style"),
    ("How should I phrase answers for Mira?", "answer_style"),
]

HELD = [attribute.attribute for attribute in SCHEMA]

UNRELATED = [
    "What's the weather in Paris?",
    "Tell me a joke",
    "How do I reset my router?",
    "Who won the football match yesterday?",
    "What is the capital of Australia?",
    "What's 17 times 23?",
    "What time does the sun set today?",
    "Recommend a good movie for tonight",
]


class CountingEmbedder:
    """The real embedder, recording every batch of texts it is asked to embed."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed with the real model and remember the batch."""
        self.calls.append(list(texts))
        return self.embedder.embed(texts)


class Prefetched:
    """The real embedder with known texts embedded ahead in one batch: same vectors, faster."""

    def __init__(self, embedder: Embedder, texts: Sequence[str]) -> None:
        self.embedder = embedder
        unique = list(dict.fromkeys(texts))
        self.rows = dict(zip(unique, embedder.embed(unique), strict=True))

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Prefetched rows when every text has one, else the model."""
        if texts and all(text in self.rows for text in texts):
            return np.stack([self.rows[text] for text in texts])
        return self.embedder.embed(texts)


@dataclass(frozen=True)
class Routed:
    """What routing made of one question."""

    attributes: tuple[str, ...]
    routed: bool
    scores: dict[str, float]


@pytest.fixture(scope="module")
def routes(embedder: Embedder) -> dict[str, Routed]:
    """Every test question routed as the reader does: routing text, index scores, then the
    choice among the keys of a customer who holds every attribute of the schema."""
    questions = [question for question, _ in PARAPHRASES] + UNRELATED
    texts = {
        question: routing_text(question, now=NOW, known_subjects=KNOWN) for question in questions
    }
    index = AttributeIndex(Prefetched(embedder, list(texts.values())))
    routes = {}
    for question, text in texts.items():
        scores = index.score(text, SCHEMA)
        routing = route_keys(scores, held=HELD, subject="mira")
        routes[question] = Routed(
            routing.attributes, routing.routed, {item.attribute: item.score for item in scores}
        )
    return routes


def test_the_question_set_covers_every_attribute() -> None:
    assert len(PARAPHRASES) >= 30
    assert {attribute for _, attribute in PARAPHRASES} == {a.attribute for a in SCHEMA}


def test_paraphrases_route_to_their_attribute_first(routes: dict[str, Routed]) -> None:
    misses = [
        f"{question!r}: wanted {attribute}, got {routes[question].attributes}"
        for question, attribute in PARAPHRASES
        if not routes[question].routed or routes[question].attributes[0] != attribute
    ]
    accuracy = (len(PARAPHRASES) - len(misses)) / len(PARAPHRASES)
    assert not misses, f"routing accuracy {accuracy:.1%}; misses: {misses}"


def test_the_threshold_separates_right_from_unrelated(routes: dict[str, Routed]) -> None:
    right = min(routes[question].scores[attribute] for question, attribute in PARAPHRASES)
    unrelated = max(max(routes[question].scores.values()) for question in UNRELATED)
    assert right >= ROUTING_THRESHOLD > unrelated, (right, unrelated)


@pytest.mark.parametrize("question", UNRELATED)
def test_unrelated_questions_route_nothing(routes: dict[str, Routed], question: str) -> None:
    assert (routes[question].attributes, routes[question].routed) == ((), False)


def test_score_attributes_embeds_everything_in_one_call(embedder: Embedder) -> None:
    counting = CountingEmbedder(embedder)
    scores = score_attributes(counting, "When was she born?", SCHEMA)
    (batch,) = counting.calls
    assert batch[0] == "When was she born?"
    assert len(batch) == 1 + sum(len(attribute_texts(a)) for a in SCHEMA)
    assert scores[0].attribute == "birthday"
    assert [item.score for item in scores] == sorted((item.score for item in scores), reverse=True)
    assert {item.attribute for item in scores} == {a.attribute for a in SCHEMA}


def test_the_index_embeds_only_the_question_once_attributes_are_cached(
    embedder: Embedder,
) -> None:
    counting = CountingEmbedder(embedder)
    index = AttributeIndex(counting)
    first = index.score("When was she born?", SCHEMA)
    again = index.score("Where does she work?", SCHEMA)
    assert [len(batch) for batch in counting.calls] == [
        1 + sum(len(attribute_texts(a)) for a in SCHEMA),
        1,
    ]
    assert counting.calls[1] == ["Where does she work?"]
    assert len(index) == len(SCHEMA)
    assert (first[0].attribute, again[0].attribute) == ("birthday", "employer")
    direct = score_attributes(embedder, "When was she born?", SCHEMA)
    assert [item.attribute for item in first] == [item.attribute for item in direct]
    np.testing.assert_allclose(
        [item.score for item in first], [item.score for item in direct], atol=1e-5
    )


def test_a_redeclared_attribute_is_embedded_again(embedder: Embedder) -> None:
    counting = CountingEmbedder(embedder)
    index = AttributeIndex(counting)
    index.score("Where does she work?", SCHEMA)
    employer = declared(
        "employer",
        ValueType.STRING,
        "The firm that pays the person's salary",
        schema_version=2,
    )
    schema = [employer if a.attribute == "employer" else a for a in SCHEMA]
    scores = index.score("Who pays her salary?", schema)
    assert counting.calls[-1] == ["Who pays her salary?", *attribute_texts(employer)]
    assert scores[0].attribute == "employer"


def test_the_index_forgets_the_least_recently_used(embedder: Embedder) -> None:
    index = AttributeIndex(embedder, max_entries=2)
    index.score("When was she born?", SCHEMA[:3])
    assert len(index) == 2
    index.clear()
    assert len(index) == 0
    with pytest.raises(ValueError, match="max_entries"):
        AttributeIndex(embedder, max_entries=0)


def test_a_routing_text_seen_before_routes_without_the_encoder(embedder: Embedder) -> None:
    counting = CountingEmbedder(embedder)
    index = AttributeIndex(counting)
    first = index.score("When was she born?", SCHEMA)
    again = index.score("When was she born?", SCHEMA)
    other = index.score("Where does she work?", SCHEMA)
    assert [batch[:1] for batch in counting.calls] == [
        ["When was she born?"],
        [],
        ["Where does she work?"],
    ]
    assert again == first  # the same vector, so the same scores
    assert other[0].attribute == "employer"
    assert index.routing_texts == 2
    # Asked with other texts, the cached one is left out of the batch and the texts' vectors
    # are the batch's own.
    scores, asked = index.score_and_embed("When was she born?", SCHEMA, texts=["born when?"])
    assert counting.calls[-1] == ["born when?"]
    assert scores == first
    np.testing.assert_allclose(asked, embedder.embed(["born when?"]), atol=1e-5)


def test_the_routing_texts_are_bounded_least_recently_used_first(embedder: Embedder) -> None:
    counting = CountingEmbedder(embedder)
    index = AttributeIndex(counting, max_routing_texts=2)
    for question in ["When was she born?", "Where does she work?", "When was she born?"]:
        index.score(question, SCHEMA)
    index.score("Where does she live?", SCHEMA)  # "Where does she work?" is the oldest now
    index.score("When was she born?", SCHEMA)
    index.score("Where does she work?", SCHEMA)
    assert [batch[:1] for batch in counting.calls] == [
        ["When was she born?"],
        ["Where does she work?"],
        [],
        ["Where does she live?"],
        [],
        ["Where does she work?"],
    ]
    assert index.routing_texts == 2
    index.clear()
    assert (len(index), index.routing_texts) == (0, 0)


def test_a_routing_text_is_cached_for_the_tenant_that_asked_it(embedder: Embedder) -> None:
    counting = CountingEmbedder(embedder)
    index = AttributeIndex(counting)
    for tenant in ["a", "b", "a", "b", None]:
        index.score("When was she born?", SCHEMA, tenant_id=tenant)
    assert [batch[:1] for batch in counting.calls] == [
        ["When was she born?"],
        ["When was she born?"],
        [],
        [],
        ["When was she born?"],
    ]
    assert index.routing_texts == 3


def declared_as(name: str) -> Attribute:
    """The schema's attribute of that name."""
    return next(attribute for attribute in SCHEMA if attribute.attribute == name)


def test_attribute_vectors_are_cached_for_the_tenant_that_declared_them(
    embedder: Embedder,
) -> None:
    # Two tenants declaring the same words each pay for their vectors: how fast a call is
    # answered tells no tenant what another declared.
    counting = CountingEmbedder(embedder)
    index = AttributeIndex(counting)
    texts = [text for attribute in SCHEMA for text in attribute_texts(attribute)]
    index.score("When was she born?", SCHEMA, tenant_id="a")
    assert index.cached(SCHEMA, tenant_id="b") == {}
    assert set(index.cached(SCHEMA, tenant_id="a")) == {a.attribute for a in SCHEMA}
    index.score("Where does she work?", SCHEMA, tenant_id="b")
    index.score("Where does she live?", SCHEMA, tenant_id="a")
    assert counting.calls == [
        ["When was she born?", *texts],
        ["Where does she work?", *texts],
        ["Where does she live?"],
    ]
    assert len(index) == 2 * len(SCHEMA)
    # Their entries share one copy of the vectors, which holds no other row of its batch.
    ours, theirs = index.cached(SCHEMA, tenant_id="a"), index.cached(SCHEMA, tenant_id="b")
    for name, vectors in ours.items():
        assert theirs[name] is vectors
        assert vectors.base is None
        assert vectors.shape == (len(attribute_texts(declared_as(name))), embedder.dimensions)


def test_routing_texts_are_not_cached_with_a_bound_of_zero(embedder: Embedder) -> None:
    counting = CountingEmbedder(embedder)
    index = AttributeIndex(counting, max_routing_texts=0)
    index.score("When was she born?", SCHEMA)
    index.score("When was she born?", SCHEMA)
    assert counting.calls[1] == ["When was she born?"]
    assert index.routing_texts == 0
    with pytest.raises(ValueError, match="max_routing_texts"):
        AttributeIndex(embedder, max_routing_texts=-1)


def test_attribute_texts_are_the_name_description_and_aliases() -> None:
    attribute = declared(
        "home_city", ValueType.STRING, "City of residence", "hometown", "home city"
    )
    assert attribute_texts(attribute) == ("home city", "City of residence", "hometown")
