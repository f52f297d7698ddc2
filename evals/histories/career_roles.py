"""The careers family's roles: attributes whose values change over decades, and how text says so.

Each role is one attribute, declared with a description and aliases. Placeholders: ``{who}``
(the subject as a sentence names it: "she", "the AHA"), ``{whose}`` ("her", "its"),
``{value}``, ``{when}`` (a day or a month: "On 3 May 2001", "In March 2014"), ``{since}`` and
``{until}`` (years), ``{name}`` (the subject in a question) and ``{period}`` (a question's
time words: "from 2004 to 2005"; ``{Period}`` at the start of a question).

- ``started``: a sentence stating a value with its exact start (the fact's evidence);
- ``held``: a clause stating another period's value with its years (``{who}`` is the
  object of a person-held role's clauses: "her", "it");
- ``later``: a clause stating a later value with its year;
- ``asked``: a question about a period or an instant; ``now``: one about now.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Role:
    """One attribute of the family, the pool its values come from, and its sentences."""

    attribute: str
    description: str
    aliases: tuple[str, ...]
    # where values come from (``evals.histories.careers.POOLS``); "person": a person-held role
    pool: str
    started: tuple[str, ...]
    held: tuple[str, ...]
    later: tuple[str, ...]
    asked: tuple[str, ...]
    now: tuple[str, ...]

    def declaration(self) -> dict[str, Any]:
        """The fields of this attribute's ``define`` line."""
        return {
            "value_type": "string",
            "description": self.description,
            "aliases": list(self.aliases),
            "on_equal_start": "source_precedence",
        }


def _holder(
    attribute: str, title: str, verbs: tuple[str, str], *aliases: str, of: str = "organisation"
) -> Role:
    """A role held by a person (chair, coach, agent, ...) for an organisation (or, ``of``, a
    person); ``verbs`` are what a holder did and does ("chaired", "chairs")."""
    verb, present = verbs
    return Role(
        attribute=attribute,
        description=f"The {title}: the person who {present} the {of}",
        aliases=(title, f"who {present} it", *aliases),
        pool="person",
        started=(
            "{when}, {value} became " + title + " of {who}.",
            "{when}, {value} was appointed " + title + " of {who}.",
            "{when} {who} named {value} as {whose} " + title + ".",
        ),
        held=(
            "from {since} to {until} {value} " + verb + " {who}",
            "{value} was " + title + " of {who} from {since} to {until}",
        ),
        later=("in {since} {value} took over as " + title,),
        asked=(
            "Who was the " + title + " of {name} {period}?",
            "{Period}, who " + verb + " {name}?",
            "Who " + verb + " {name} {period}?",
        ),
        now=("Who is the " + title + " of {name} now?", "Who " + present + " {name} today?"),
    )


def _place(
    attribute: str, description: str, aliases: tuple[str, ...], verb: str, noun: str
) -> Role:
    """Where a subject is based: residence, headquarters, home ground, ..."""
    return Role(
        attribute=attribute,
        description=description,
        aliases=(*aliases, "where it is based"),
        pool="place",
        started=(
            "{when}, {who} " + verb + " to {value}.",
            "{when} {who} settled in {value}.",
        ),
        held=("from {since} to {until} {who} was based in {value}",),
        later=("in {since} {who} " + verb + " again, to {value}",),
        asked=(
            "Where was {name}'s " + noun + " {period}?",
            "{Period}, where was {name} based?",
        ),
        now=("Where is {name} based now?", "What is {name}'s " + noun + " today?"),
    )


def _member(attribute: str, description: str, pool: str, verbs: tuple[str, str], noun: str) -> Role:
    """A subject's organisation (employer, club, party, label, ...); ``verbs`` say how a
    subject came to it and what it did there ("joined", "worked at")."""
    joined, was = verbs
    return Role(
        attribute=attribute,
        description=description,
        aliases=tuple(dict.fromkeys((noun, attribute.replace("_", " "), was))),
        pool=pool,
        started=(
            "{when}, {who} " + joined + " {value}.",
            "{when} {who} " + joined + " {value}, a move widely reported at the time.",
        ),
        held=("from {since} to {until} {who} " + was + " {value}",),
        later=("in {since} {who} " + joined + " {value}",),
        asked=(
            "Which " + noun + " was {name} with {period}?",
            "{Period}, what was {name}'s " + noun + "?",
            "What was the " + noun + " of {name} {period}?",
        ),
        now=("What is {name}'s " + noun + " now?", "Which " + noun + " is {name} with today?"),
    )


ROLES: tuple[Role, ...] = (
    _member("employer", "Organisation the person works for", "employer",
            ("joined", "worked at"), "employer"),
    Role(
        attribute="position",
        description="The person's job title",
        aliases=("job title", "post", "role"),
        pool="position",
        started=("{when}, {who} became {value}.", "{when} {who} was made {value}."),
        held=("from {since} to {until} {who} served as {value}",),
        later=("in {since} {who} was promoted to {value}",),
        asked=("What was {name}'s position {period}?", "{Period}, what post did {name} hold?"),
        now=("What is {name}'s position now?", "Which post does {name} hold today?"),
    ),
    _place("residence", "City where the person lives", ("home", "city of residence"),
           "moved", "home"),
    _member("club", "Sports club the athlete plays for", "club",
            ("signed for", "played for"), "club"),
    _holder("personal_coach", "personal coach", ("coached", "coaches"), "trainer", of="athlete"),
    _holder("agent", "agent", ("represented", "represents"), "manager", of="person"),
    _member("party", "Political party the person belongs to", "party",
            ("joined", "sat for"), "party"),
    Role(
        attribute="office",
        description="Public office the politician holds",
        aliases=("public office", "government post"),
        pool="office",
        started=("{when}, {who} became {value}.", "{when} {who} took office as {value}."),
        held=("from {since} to {until} {who} served as {value}",),
        later=("in {since} {who} became {value}",),
        asked=("Which office did {name} hold {period}?", "{Period}, what office was {name} in?"),
        now=("Which office does {name} hold now?",),
    ),
    _member("constituency", "Constituency the politician represents", "constituency",
            ("was elected for", "represented"), "constituency"),
    _member("record_label", "Record label the musician is signed to", "label",
            ("signed with", "recorded for"), "record label"),
    _member("publisher", "Publisher of the writer's books", "publisher",
            ("moved to", "published with"), "publisher"),
    _member("board_seat", "Company on whose board the executive sits", "company",
            ("joined the board of", "sat on the board of"), "board"),
    _holder("chair", "chair", ("chaired", "chairs"), "chairperson", "board chair"),
    _holder("director", "director", ("directed", "directs"), "head"),
    _holder("head_of_research", "head of research", ("led research at", "leads research at"),
            "research head"),
    _holder("harbour_master", "harbour master", ("ran the port of", "runs the port of")),
    _holder("coach", "coach", ("coached", "coaches"), "head coach"),
    _holder("captain", "captain", ("captained", "captains")),
    _holder("president", "president", ("presided over", "presides over")),
    _holder("secretary_general", "secretary-general",
            ("ran the secretariat of", "runs the secretariat of"), "secretary general"),
    _holder("principal_conductor", "principal conductor", ("conducted", "conducts"),
            "chief conductor"),
    _holder("concertmaster", "concertmaster", ("led the violins of", "leads the violins of")),
    _holder("chief_executive", "chief executive", ("ran", "runs"), "CEO", "managing director"),
    _place("headquarters", "Where the organisation has its head office", ("head office", "seat"),
           "moved its head office", "headquarters"),
    _member("home_ground", "Ground where the club plays its home games", "ground",
            ("moved to", "played at"), "home ground"),
    _member("league", "League the club plays in", "league",
            ("entered", "played in"), "league"),
    _member("main_sponsor", "Company that sponsors the club", "company",
            ("signed a deal with", "was sponsored by"), "main sponsor"),
    _member("auditor", "Firm that audits the company", "auditor",
            ("appointed", "was audited by"), "auditor"),
    _member("parent_company", "Company that owns the company", "company",
            ("was bought by", "belonged to"), "owner"),
    _member("home_venue", "Hall where the orchestra plays", "venue",
            ("moved to", "played at"), "home venue"),
)  # fmt: skip
BY_ATTRIBUTE = {role.attribute: role for role in ROLES}

GROUPS: dict[str, tuple[str, ...]] = {
    "researcher": ("employer", "position", "residence"),
    "athlete": ("club", "personal_coach", "agent", "residence"),
    "politician": ("party", "office", "constituency"),
    "musician": ("record_label", "agent", "residence"),
    "writer": ("publisher", "agent", "residence"),
    "executive": ("employer", "position", "board_seat"),
    "authority": ("chair", "harbour_master", "headquarters"),
    "institute": ("director", "head_of_research", "chair", "headquarters"),
    "club": ("coach", "captain", "home_ground", "main_sponsor", "league"),
    "federation": ("president", "secretary_general", "headquarters"),
    "orchestra": ("principal_conductor", "concertmaster", "home_venue"),
    "company": ("chief_executive", "chair", "auditor", "headquarters", "parent_company"),
}
"""The roles each line of work (people) or kind (organisations) may hold."""
PERSON_GROUPS = ("researcher", "athlete", "politician", "musician", "writer", "executive")
