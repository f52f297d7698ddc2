"""Sentence tables for generated histories: attributes, their values and how people say things.

Several phrasings per change, correction, distractor, expiry and question, so no system can
find the answer by matching one fixed sentence. Placeholders: ``{name}`` (the subject's name),
``{value}`` (an attribute value), ``{date}`` (a day in words).

Words are chosen so that no sentence states a value it is not about: enum members are not
ordinary words of any other sentence, integers have three digits (never a year, a day or part
of a zero-padded episode id) and deadlines lie in 2026-2027 while histories happen in 2025, so
a timestamp in a context block never reads as a deadline.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

EQUAL_START_POLICY = "source_precedence"
"""Every generated attribute's policy: an equal start from a source of equal rank disputes it."""
CUSTOMERS = "customers"
"""The family of the attributes below: a customer's account and whereabouts."""


@dataclass(frozen=True)
class AttributeSpec:
    """One attribute a history changes: its declaration, its values and its sentences."""

    attribute: str
    value_type: str
    description: str
    aliases: tuple[str, ...]
    values: tuple[str, ...]
    changes: tuple[str, ...]
    corrections: tuple[str, ...]  # each says "actually": a change that fixes a wrong value
    dated: tuple[str, ...]  # a change with its own start date ({date}): equal-start conflicts
    distractors: tuple[str, ...]  # an old value in passing
    expiries: tuple[str, ...]  # the value stops being true, and none follows
    current: tuple[str, ...]
    point_in_time: tuple[str, ...]
    known_at: tuple[str, ...]  # belief wording, so a reader takes {date} as known-at
    family: str = CUSTOMERS  # which shape of history the attribute belongs to, for the report
    date_styles: tuple[int, ...] = (0, 1, 2)  # ``day_in_words`` styles its questions use

    def declaration(self) -> dict[str, Any]:
        """The fields of this attribute's ``define`` line."""
        body: dict[str, Any] = {
            "value_type": self.value_type,
            "description": self.description,
            "aliases": list(self.aliases),
            "on_equal_start": EQUAL_START_POLICY,
        }
        if self.value_type == "enum":
            body["enum_values"] = list(self.values)
        return body


CITIES: tuple[str, ...] = (
    "Lisbon", "Porto", "Madrid", "Valencia", "Seville", "Bilbao", "Berlin", "Hamburg",
    "Munich", "Leipzig", "Dresden", "Warsaw", "Krakow", "Gdansk", "Wroclaw", "Poznan",
    "Prague", "Brno", "Vienna", "Graz", "Salzburg", "Milan", "Turin", "Naples",
    "Bologna", "Florence", "Dublin", "Galway", "Oslo", "Bergen", "Stockholm", "Uppsala",
    "Helsinki", "Tampere", "Copenhagen", "Aarhus", "Tallinn", "Riga", "Vilnius",
    "Ljubljana", "Zagreb", "Budapest",
)  # fmt: skip


def _deadlines() -> tuple[str, ...]:
    first = date(2026, 1, 3)
    return tuple((first + timedelta(days=7 * week)).isoformat() for week in range(100))


ATTRIBUTES: tuple[AttributeSpec, ...] = (
    AttributeSpec(
        attribute="home_city",
        value_type="string",
        description="City where the customer currently lives",
        aliases=("home city", "city of residence", "where they live", "place of residence"),
        values=CITIES,
        changes=(
            "{name} has moved to {value}.",
            "{name} now lives in {value}.",
            "New address on file: {name} lives in {value} now.",
            "{name} relocated to {value} last weekend.",
            "After the move, {name}'s home city is {value}.",
        ),
        corrections=(
            "Correction: {name} actually lives in {value}.",
            "Sorry, that was wrong: {name}'s home is actually in {value}.",
            "{name} wrote back that the city is actually {value}.",
        ),
        dated=(
            "{name} moved to {value} on {date}.",
            "According to the lease, {name} has lived in {value} since {date}.",
        ),
        distractors=(
            "{name} still misses the cafes of {value}.",
            "{name} mentioned an old friend from {value}.",
            "{name} was nostalgic about the winters in {value}.",
            "{name} is changing trains in {value} on the way to a conference.",
        ),
        expiries=(
            "{name} has given up the flat and has no fixed home city for now.",
            "{name} moved out and is travelling, with no home city on file.",
        ),
        current=(
            "Where does {name} live now?",
            "What is {name}'s home city?",
            "Which city is {name} based in?",
            "In which city does {name} currently live?",
        ),
        point_in_time=(
            "Where did {name} live on {date}?",
            "What was {name}'s home city on {date}?",
            "On {date}, which city was {name} living in?",
        ),
        known_at=(
            "What did we believe on {date} about {name}'s city of residence?",
            "As we understood it on {date}, what was {name}'s home city?",
            "Which city of residence was on record for {name} on {date}?",
        ),
    ),
    AttributeSpec(
        attribute="passport_deadline",
        value_type="date",
        description="Date by which the customer's passport must be renewed",
        aliases=("passport renewal date", "passport expiry", "passport deadline"),
        values=_deadlines(),
        changes=(
            "{name}'s passport deadline is {value}.",
            "{name} said the passport must be renewed by {value}.",
            "The consulate told {name} to renew the passport by {value}.",
            "New passport renewal date for {name}: {value}.",
        ),
        corrections=(
            "Correction: {name}'s passport deadline is actually {value}.",
            "{name} checked again: the passport actually has to be renewed by {value}.",
        ),
        dated=(
            "From {date}, {name}'s passport deadline is {value}.",
            "As of {date} the consulate set {name}'s passport renewal date to {value}.",
        ),
        distractors=(
            "{name} joked about the old {value} passport date.",
            "An old note from {name} mentions {value} for the passport.",
            "{name} once thought the passport was due on {value}.",
        ),
        expiries=(
            "{name} renewed the passport, so there is no renewal deadline any more.",
            "The passport renewal is done; {name} has no passport deadline now.",
        ),
        current=(
            "When is {name}'s passport deadline?",
            "By when must {name} renew the passport?",
            "What is the passport renewal date for {name}?",
        ),
        point_in_time=(
            "What was {name}'s passport deadline on {date}?",
            "On {date}, by when did {name} have to renew the passport?",
            "Which passport renewal date applied to {name} on {date}?",
        ),
        known_at=(
            "What did we know on {date} about {name}'s passport deadline?",
            "As we understood it on {date}, when was {name}'s passport due for renewal?",
            "What passport renewal date was on record for {name} on {date}?",
        ),
    ),
    AttributeSpec(
        attribute="seat_count",
        value_type="integer",
        description="Number of paid seats on the customer's account",
        aliases=("seats", "seat count", "paid seats", "number of licences"),
        values=tuple(str(count) for count in range(105, 1000, 5)),
        changes=(
            "{name}'s account now pays for {value} seats.",
            "{name} changed the seat count to {value}.",
            "{name} asked billing to set the account to {value} seats.",
            "The account of {name} has {value} paid seats from today.",
        ),
        corrections=(
            "Correction: {name} actually has {value} seats.",
            "Billing double-checked: {name}'s seat count is actually {value}.",
        ),
        dated=(
            "{name}'s account has had {value} seats since {date}.",
            "From {date}, {name} pays for {value} seats.",
        ),
        distractors=(
            "{name} remembered when the account had only {value} seats.",
            "{name} joked that {value} seats was never enough.",
            "An old invoice for {name} still lists {value} seats.",
        ),
        expiries=(
            "{name} cancelled every paid seat on the account.",
            "All of {name}'s seats were released; none are paid for now.",
        ),
        current=(
            "How many seats does {name} pay for?",
            "What is {name}'s seat count?",
            "How many paid seats are on {name}'s account?",
        ),
        point_in_time=(
            "How many seats did {name} pay for on {date}?",
            "What was {name}'s seat count on {date}?",
            "On {date}, how many paid seats did {name}'s account have?",
        ),
        known_at=(
            "What did we believe on {date} about {name}'s seat count?",
            "As we understood it on {date}, how many seats did {name} pay for?",
            "How many seats were on record for {name} on {date}?",
        ),
    ),
    AttributeSpec(
        attribute="plan",
        value_type="enum",
        description="Subscription plan of the customer's account",
        aliases=("subscription tier", "account tier", "pricing plan", "subscription"),
        values=("free", "starter", "basic", "pro", "premium", "business", "enterprise", "ultimate"),
        changes=(
            "{name} switched the account to the {value} plan.",
            "{name}'s subscription is now {value}.",
            "{name} changed plan to {value}.",
            "{name} moved to the {value} tier today.",
        ),
        corrections=(
            "Correction: {name} is actually on the {value} plan.",
            "Billing says {name}'s plan is actually {value}.",
        ),
        dated=(
            "{name} has been on the {value} plan since {date}.",
            "From {date}, {name}'s subscription is {value}.",
        ),
        distractors=(
            "{name} remembered the {value} plan fondly.",
            "{name} asked how the {value} tier compared back then.",
            "{name} said the {value} plan had confused everyone.",
        ),
        expiries=(
            "{name} closed the account, so there is no plan any more.",
            "{name} cancelled the subscription; no plan is active now.",
        ),
        current=(
            "Which plan is {name} on?",
            "What subscription tier does {name} have?",
            "What is {name}'s current plan?",
        ),
        point_in_time=(
            "Which subscription plan did {name} have on {date}?",
            "What was {name}'s subscription tier on {date}?",
            "On {date}, which plan was {name} paying for?",
        ),
        known_at=(
            "What did we believe on {date} about {name}'s subscription plan?",
            "As we understood it on {date}, which pricing plan was {name} on?",
            "Which subscription tier was on record for {name} on {date}?",
        ),
    ),
)

FILLERS: tuple[str, ...] = (
    "{name} prefers concise answers.",
    "{name} asked for invoices as PDF files.",
    "{name} thanked the support team.",
    "{name} likes email more than phone calls.",
    "{name} will be on holiday soon.",
    "The chat with {name} was mostly about onboarding.",
)
"""Sentences beside a change that state no value of any attribute."""

NAMES: tuple[str, ...] = (
    "Mira", "Omar", "Lena", "Tomas", "Aiko", "Bruno", "Chiara", "Dawit", "Elif", "Farah",
    "Goran", "Hana", "Ivan", "Jonas", "Kasia", "Luca", "Maya", "Nils", "Olga", "Pavel",
    "Quinn", "Rosa", "Sami", "Tara", "Umar", "Vera", "Wojtek", "Ximena", "Yusuf", "Zofia",
    "Anya", "Bela", "Cyrus", "Dana", "Emil", "Freya", "Gil", "Hugo", "Ines", "Jakub",
    "Kai", "Lior", "Marta", "Nadia", "Otto", "Priya", "Rafael", "Selin", "Teo", "Uma",
    "Viktor", "Wren", "Xavier", "Yara", "Zeno", "Alma", "Boris", "Celia", "Diego", "Edda",
)  # fmt: skip
"""Subject names: no city, month, weekday or word of any sentence above."""

TENANTS: tuple[str, ...] = ("acme", "globex", "initech", "umbrella", "hooli", "vandelay")


def subject_name(index: int) -> tuple[str, str]:
    """The subject id (the lower-case name, so a question names it) and the name."""
    name = NAMES[index % len(NAMES)]
    generation = index // len(NAMES)
    full = name if generation == 0 else f"{name}{generation + 1}"
    return full.lower(), full


def day_in_words(day: date, style: int) -> str:
    """A day as a question or an episode writes it: ISO, "March 4, 2025" or "4 March 2025"."""
    if style % 3 == 0:
        return day.isoformat()
    month = day.strftime("%B")
    return f"{month} {day.day}, {day.year}" if style % 3 == 1 else f"{day.day} {month} {day.year}"
