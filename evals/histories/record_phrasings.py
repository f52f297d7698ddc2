"""Sentence tables of the public-records family: places, their roles, and how changes are told.

A place is a country, a company or an organization; each role of a place is one attribute
(``president_of_south_korea``: "Who or what holds the role: President of South Korea") whose
values are the names of its successive holders. Placeholders: ``{value}`` (a holder's name),
``{role}`` (the role and its place in words) and ``{date}`` (a day in words).

Holders' names are made up from the given and family names below, so that no sentence, place
or role contains one: a name stated in a context is a statement about its key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from evals.histories.phrasings import AttributeSpec

RECORDS = "records"
"""The family's name in gold answers and reports."""

PlaceKind = Literal["country", "company", "organization"]


@dataclass(frozen=True)
class Place:
    """A subject of the family: its name in words, whether a role phrase puts "the" before it."""

    name: str
    kind: PlaceKind
    article: bool = False
    roles: tuple[str, ...] = ()  # when not the kind's usual roles

    @property
    def subject(self) -> str:
        """The subject id: the name in lower case, words joined by underscores."""
        return slug(self.name)

    @property
    def role_names(self) -> tuple[str, ...]:
        """The roles this place has; the first two are the pair one person may hold in turn."""
        return self.roles or ROLES[self.kind]

    def role_phrase(self, role: str) -> str:
        """The role and its place in words: "President of the United States"."""
        return f"{role} of {'the ' if self.article else ''}{self.name}"


# The first role leads to the second: a prime minister may later become president.
ROLES: dict[PlaceKind, tuple[str, ...]] = {
    "country": ("Prime Minister", "President", "Foreign Minister"),
    "company": ("CFO", "CEO", "Chair"),
    "organization": ("Deputy Secretary-General", "Secretary-General", "President"),
}

PLACES: tuple[Place, ...] = (
    Place("South Korea", "country"),
    Place("North Macedonia", "country"),
    Place("New Zealand", "country"),
    Place("Costa Rica", "country"),
    Place("Sri Lanka", "country"),
    Place("South Africa", "country"),
    Place("El Salvador", "country"),
    Place("Burkina Faso", "country"),
    Place("Sierra Leone", "country"),
    Place("Cape Verde", "country"),
    Place("San Marino", "country"),
    Place("Trinidad and Tobago", "country"),
    Place("United States", "country", article=True,
          roles=("Vice President", "President", "Secretary of State")),
    Place("Czech Republic", "country", article=True),
    Place("Dominican Republic", "country", article=True),
    Place("Central African Republic", "country", article=True),
    Place("Philippines", "country", article=True),
    Place("France", "country"),
    Place("Italy", "country"),
    Place("Portugal", "country"),
    Place("Finland", "country"),
    Place("Chile", "country"),
    Place("Peru", "country"),
    Place("Kenya", "country"),
    Place("Ghana", "country"),
    Place("Poland", "country"),
    Place("Austria", "country"),
    Place("Ireland", "country"),
    Place("Iceland", "country"),
    Place("Uruguay", "country"),
    Place("Estonia", "country"),
    Place("Hollin Motors", "company"),
    Place("Brightwater Shipping", "company"),
    Place("Northgate Energy", "company"),
    Place("Kestrel Airlines", "company"),
    Place("Orvane Pharmaceuticals", "company"),
    Place("Tallis Steel", "company"),
    Place("Vantor Bank", "company"),
    Place("Marlow Foods", "company"),
    Place("Quarrymoor Cement", "company"),
    Place("Silverfen Telecom", "company"),
    Place("Redcliff Insurance", "company"),
    Place("Dunmore Chemicals", "company"),
    Place("Ashby Rail", "company"),
    Place("Corvel Systems", "company"),
    Place("Halden Paper", "company"),
    Place("Pinecrest Media", "company"),
    Place("Westmark Retail", "company"),
    Place("Greyhaven Mining", "company"),
    Place("Norrland Timber", "company"),
    Place("Calder Textiles", "company"),
    Place("Everly Breweries", "company"),
    Place("Stonebridge Construction", "company"),
    Place("Lumivale Optics", "company"),
    Place("Harrowgate Logistics", "company"),
    Place("United Nations", "organization", article=True),
    Place("Arctic Council", "organization", article=True),
    Place("International Rowing Federation", "organization", article=True),
    Place("Nordic Fisheries Commission", "organization", article=True),
    Place("World Trade Forum", "organization", article=True),
    Place("African Development Fund", "organization", article=True),
    Place("International Chess Union", "organization", article=True),
    Place("Pacific Islands Forum", "organization", article=True),
    Place("European Space Council", "organization", article=True),
    Place("Global Water Alliance", "organization", article=True),
    Place("Andean Trade Community", "organization", article=True),
    Place("Baltic Ports Association", "organization", article=True),
    Place("Union of Mountain Towns", "organization", article=True),
    Place("International Court of Arbitration", "organization", article=True),
    Place("Alpine Railway Conference", "organization", article=True),
    Place("World Meteorological Board", "organization", article=True),
)  # fmt: skip

FIRST_YEARS: dict[PlaceKind, tuple[int, int]] = {
    "country": (1950, 1962),
    "company": (1952, 1992),
    "organization": (1950, 1978),
}
"""The years in which a place's first recorded holder of a role may start."""

CHANGES: tuple[str, ...] = (
    "{value} became the {role}.",
    "News: {value} took office as {role}.",
    "{value} was sworn in as {role}.",
    "{value} took over as {role}.",
    "{value} was appointed {role}.",
    "The new {role} is {value}.",
    "{value} has been named {role}.",
)
CURRENT: tuple[str, ...] = (
    "The name of the current {role} is",
    "Who is the {role} now?",
    "The current {role} is",
    "Who holds the office of {role} today?",
    "Who is the current {role}?",
)
POINT_IN_TIME: tuple[str, ...] = (
    "As of {date}: The {role} is",
    "Who was the {role} on {date}?",
    "On {date}, the {role} was",
    "As of {date}, who was the {role}?",
)
KNOWN_AT: tuple[str, ...] = (
    "What did we believe on {date} about who was the {role}?",
    "As we understood it on {date}, who was the {role}?",
    "Who was on record as the {role} on {date}?",
)

GIVEN_NAMES: tuple[str, ...] = (
    "Adrian", "Beatrix", "Cosimo", "Delphine", "Emeric", "Fiona", "Gideon", "Helga",
    "Isidor", "Jolanda", "Kasimir", "Leonie", "Matthias", "Noemi", "Oskar", "Philippa",
    "Renata", "Severin", "Theodora", "Ulrike", "Valentin", "Wilhelmina", "Yannick", "Zuzana",
    "Ansel", "Brigitte", "Cedric", "Dorota", "Evander", "Florin", "Greta", "Henrik",
    "Irena", "Joachim", "Klara", "Ludovic", "Magnus", "Nerea", "Octavia", "Piotr",
    "Rasmus", "Sabine", "Tobias", "Vesna", "Wendel", "Agathe", "Bertil", "Carmela",
    "Dominik", "Estelle", "Fabian", "Gisela", "Horatio", "Ilona", "Jasper", "Konrad",
    "Lucinda", "Mirko", "Nikolai", "Ottilie",
)  # fmt: skip
FAMILY_ROOTS: tuple[str, ...] = (
    "Ald", "Bren", "Cor", "Dal", "Fen", "Gar", "Hal", "Ist", "Kar", "Lind", "Mor", "Nor",
    "Oster", "Pell", "Rad", "Sand", "Tor", "Ulm", "Vell", "Wes", "Yar", "Zell", "Brom",
    "Cald", "Drav", "Eck", "Fald", "Grim",
)  # fmt: skip
FAMILY_ENDINGS: tuple[str, ...] = (
    "strom", "ova", "ani", "berg", "ez", "ington", "ski", "oulos", "ard", "ecki", "ido",
    "enko", "ville", "escu", "sen", "mann", "ari", "ovic",
)  # fmt: skip
# Family name first, then a two-part given name: "Baek Young-sam".
EASTERN_FAMILIES: tuple[str, ...] = ("Kang", "Yoon", "Baek", "Jung", "Ryu", "Shin", "Hwang")
EASTERN_GIVEN: tuple[tuple[str, ...], tuple[str, ...]] = (
    ("Young", "Ji", "Min", "Seo", "Hye", "Dae", "Sung", "Jae", "Eun", "Hyun"),
    ("sam", "woo", "jin", "ho", "yeon", "su", "gyu", "won"),
)

_NOT_WORD = re.compile(r"[^a-z0-9]+")


def slug(words: str) -> str:
    """Lower-case words joined by underscores: "Secretary-General of the UN" -> an id."""
    return _NOT_WORD.sub("_", words.casefold()).strip("_")


def role_spec(place: Place, role: str) -> AttributeSpec:
    """The attribute of one role of one place, with its sentences and questions."""
    phrase = place.role_phrase(role)

    def filled(table: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(sentence.replace("{role}", phrase) for sentence in table)

    return AttributeSpec(
        attribute=slug(phrase),
        value_type="string",
        description=f"Who or what holds the role: {phrase}",
        aliases=(phrase,),
        values=(),
        changes=filled(CHANGES),
        corrections=(),
        dated=(),
        distractors=(),
        expiries=(),
        current=filled(CURRENT),
        point_in_time=filled(POINT_IN_TIME),
        known_at=filled(KNOWN_AT),
        family=RECORDS,
        date_styles=(1, 2),  # dates in words: "February 25, 1993", "25 February 1993"
    )
