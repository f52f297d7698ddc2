"""Names for the careers family: people and organisations, and the forms a question names them by.

Made up from the parts below (no public data set): people from given names, optional middle names
or initials and surnames; organisations from templates over places and fields. Many carry
diacritics (Ålesund, Zoë, Müller, Søren), so a question may write them folded ("Alesund",
"Zoe"). A subject id is the ASCII form of the name in snake case (``adaeze_okafor``,
``alesund_harbour_authority``); a person's middle name is not part of it.

Name forms a question uses (``FORMS``): ``full`` (the display name), ``short`` (a person's
surname, an organisation's short name), ``acronym`` (an organisation's initials in capitals,
skipping of/the/and/for: "World Health Organization" -> "WHO"), ``folded`` (the display name
with its diacritics written as plain letters) and ``middle_initial`` (a person's middle name or
initial dropped, or an initial added where there is none).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

FULL, SHORT, ACRONYM, FOLDED, MIDDLE = "full", "short", "acronym", "folded", "middle_initial"
FORMS: tuple[str, ...] = (FULL, SHORT, ACRONYM, FOLDED, MIDDLE)
"""Every name form, each asked in an equal share of the family's questions."""

SubjectKind = Literal["person", "organisation"]

# Letters that are not a base letter with a mark: a writer without them spells them out.
_SPELLED = str.maketrans({"ø": "o", "Ø": "O", "æ": "ae", "Æ": "Ae", "ß": "ss", "ł": "l",
                          "Ł": "L", "đ": "d", "Đ": "D", "þ": "th", "œ": "oe"})  # fmt: skip
_MINOR = frozenset({"of", "the", "and", "for", "&"})
_NOT_WORD = re.compile(r"[^a-z0-9]+")

# (given name, pronoun): no month, weekday or word of a question among them.
GIVEN: tuple[tuple[str, str], ...] = (
    ("Adaeze", "she"), ("Zoë", "she"), ("Kristin", "she"), ("Ingrid", "she"),
    ("Maëlle", "she"), ("Chiamaka", "she"), ("Lucía", "she"), ("Aoife", "she"),
    ("Signe", "she"), ("Hélène", "she"), ("Anaïs", "she"), ("Élodie", "she"),
    ("Mette", "she"), ("Astrid", "she"), ("Renée", "she"), ("Björk", "she"),
    ("Ngozi", "she"), ("Solveig", "she"), ("Inés", "she"), ("Priyanka", "she"),
    ("Søren", "he"), ("Jürgen", "he"), ("Tobias", "he"), ("Emeka", "he"),
    ("Olúwaseun", "he"), ("Mikkel", "he"), ("Håkon", "he"), ("Joaquín", "he"),
    ("Rémi", "he"), ("Matthias", "he"), ("Nikolaj", "he"), ("Tomás", "he"),
    ("Kwabena", "he"), ("Anders", "he"), ("Étienne", "he"), ("Bjørn", "he"),
    ("Chidi", "he"), ("Lorcan", "he"), ("Ravindra", "he"), ("Dário", "he"),
)  # fmt: skip
MIDDLE_NAMES: tuple[str, ...] = ("N.", "M.", "J.", "K.", "T.", "Elise", "Chukwuma", "Marie", "Olav")
SURNAMES: tuple[str, ...] = (
    "Okafor", "Müller", "Berg", "Lindqvist", "Ødegaard", "Haugen", "Fernández", "Nwosu",
    "Brennan", "Castaño", "Åberg", "Mäkinen", "Kovačević", "Dubois", "Lefèvre", "Schröder",
    "Adeyemi", "Sørensen", "Kowalczyk", "Ferreira", "Gonçalves", "Vázquez", "Eriksen",
    "Novák", "Strand", "Hoffmann", "Eze", "Tanaka", "Okonjo", "Rautio", "Lachance", "Quist",
)  # fmt: skip
"""Subjects' surnames; people who hold roles (values) take theirs from ``HOLDER_SURNAMES``."""
HOLDER_GIVEN: tuple[str, ...] = (
    "Amara", "Birgit", "Camille", "Dagny", "Efua", "Frida", "Gudrun", "Halima", "Ilse",
    "Johanne", "Kaja", "Liesel", "Marit", "Nneka", "Oona", "Pernille", "Ragna", "Siri",
    "Thea", "Unni", "Arvid", "Bernt", "Casper", "Dag", "Eirik", "Finn", "Gunnar", "Halvor",
    "Ivar", "Jens", "Knut", "Leif", "Magne", "Njål", "Obinna", "Per", "Rolf", "Sindre",
    "Tormod", "Ulrik", "Vidar", "Yngve", "Zoltán", "Andrés", "Benoît", "Cédric", "Dagfinn",
)  # fmt: skip
HOLDER_SURNAMES: tuple[str, ...] = (
    "Aasen", "Bakke", "Dahl", "Engen", "Fossum", "Grønli", "Hagen", "Iversen", "Jacobsen",
    "Kleven", "Lunde", "Moe", "Nygård", "Opsahl", "Paulsen", "Røed", "Sæther", "Tveit",
    "Ulvik", "Vik", "Wold", "Ystad", "Ahlgren", "Borg", "Cronqvist", "Ekdahl", "Falk",
    "Hedlund", "Ingvarsson", "Kjellberg", "Lövgren", "Nordin", "Obi", "Ndukwe", "Igwe",
    "Arriaga", "Beaumont", "Corbeil", "Duval", "Émond", "Fournier", "Gagné", "Hébert",
    "Jolicœur", "Leclerc", "Mercier", "Pelletier", "Roussel", "Séguin", "Thibault",
)  # fmt: skip
PLACES: tuple[str, ...] = (
    "Ålesund", "Tromsø", "Düsseldorf", "Göteborg", "Montréal", "Zürich", "Bodø", "Jyväskylä",
    "Málaga", "Córdoba", "Besançon", "Linköping", "Kraków", "Nîmes", "Bergen", "Stavanger",
    "Aberdeen", "Galway", "Leiden", "Ghent", "Tampere", "Enugu", "Halifax", "Dunedin",
    "Arendal", "Kristiansund", "Umeå", "Luleå", "Skövde", "Värnamo",
)  # fmt: skip
FIELDS: tuple[str, ...] = (
    "Marine Research", "Public Health", "Coastal Engineering", "Polar Studies",
    "Fisheries Science", "Renewable Energy", "Tropical Medicine", "Seismology",
    "Forest Ecology", "Language Technology", "Arctic Shipping", "Glacier Monitoring",
)  # fmt: skip
# (template, short name, kind): the kind picks the roles an organisation holds.
ORGANISATIONS: tuple[tuple[str, str, str], ...] = (
    ("{place} Harbour Authority", "{place} Harbour", "authority"),
    ("{place} Institute for {field}", "{place} Institute", "institute"),
    ("Nordic Council for {field}", "Nordic Council", "institute"),
    ("{place} Rowing Club", "{place} Rowing", "club"),
    ("{place} Football Club", "{place} Football", "club"),
    ("International Federation of {field}", "International Federation", "federation"),
    ("World {field} Organization", "World {field}", "federation"),
    ("{place} Chamber Orchestra", "{place} Chamber", "orchestra"),
    ("{place} Shipping and Trading Company", "{place} Shipping", "company"),
    ("Agency for {field} and Safety", "Agency for {field}", "institute"),
)


def spelled(text: str) -> str:
    """The text with its diacritics written as plain letters ("Ålesund" -> "Alesund",
    "Søren" -> "Soren"): how a writer without them spells a name."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_SPELLED))
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def slug(name: str) -> str:
    """A subject id: the name's plain letters in lower case, words joined by underscores."""
    return _NOT_WORD.sub("_", spelled(name).casefold()).strip("_")


def acronym(name: str) -> str:
    """The initials of the name's words in capitals, skipping of/the/and/for."""
    words = [word for word in name.split() if word.casefold() not in _MINOR]
    return "".join(spelled(word)[0].upper() for word in words)


@dataclass(frozen=True)
class CareerSubject:
    """A person or an organisation of the family, with every name form it can be asked by."""

    subject: str
    display_name: str
    kind: SubjectKind
    group: str  # which roles it holds: a person's line of work, an organisation's kind
    pronoun: str  # "she", "he" or "it"
    short: str  # a person's surname, an organisation's short name
    middle: str | None = None  # a person's middle name or initial, in the display name

    @property
    def acronym(self) -> str | None:
        """An organisation's acronym (None for a person)."""
        return acronym(self.display_name) if self.kind == "organisation" else None

    @property
    def has_diacritics(self) -> bool:
        """Whether the display name is written with letters a plain keyboard lacks."""
        return spelled(self.display_name) != self.display_name

    def forms(self) -> tuple[str, ...]:
        """The name forms a question may use for this subject."""
        forms = [FULL, SHORT]
        forms.append(ACRONYM if self.kind == "organisation" else MIDDLE)
        if self.has_diacritics:
            forms.append(FOLDED)
        return tuple(forms)

    def written(self, form: str, *, initial: str = "M.") -> str:
        """The subject's name in a form; an organisation's takes "the" before it.

        ``initial`` is added by ``middle_initial`` to a person without a middle name."""
        if form == ACRONYM and self.kind == "organisation":
            name = str(self.acronym)
        elif form == SHORT:
            name = self.short
        elif form == FOLDED:
            name = spelled(self.display_name)
        elif form == MIDDLE and self.kind == "person":
            given, surname = self.display_name.split()[0], self.display_name.split()[-1]
            name = f"{given} {surname}" if self.middle else f"{given} {initial} {surname}"
        elif form in (FULL, MIDDLE, ACRONYM):
            name = self.display_name
        else:
            raise ValueError(f"unknown name form {form!r}")
        return f"the {name}" if self.kind == "organisation" else name


def person(
    given: str, surname: str, *, pronoun: str, group: str, middle: str | None
) -> CareerSubject:
    """A person: id from given name and surname, display name with the middle one if any."""
    display = " ".join(part for part in (given, middle, surname) if part)
    return CareerSubject(
        slug(f"{given} {surname}"), display, "person", group, pronoun, surname, middle
    )


def organisation(template: tuple[str, str, str], *, place: str, field: str) -> CareerSubject:
    """An organisation from a template of ``ORGANISATIONS``."""
    name, short, group = (part.format(place=place, field=field) for part in template)
    return CareerSubject(slug(name), name, "organisation", group, "it", short)
