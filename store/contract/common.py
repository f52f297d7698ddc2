"""The contract's shared value types: identifiers, instants, integers, names and their rules."""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    PlainSerializer,
    StrictInt,
    StringConstraints,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

from store.contract.times import format_timestamp, parse_timestamp
from store.contract.values import MAX_JSON_DEPTH

# Subject names folded for lookup (pure). A name is folded the way a question's words are, so
# "Ålesund", "ALESUND" and "Alesund ," all read ``alesund``: compatibility forms (NFKD) with
# combining marks left out, case folded (and the Latin letters NFKD keeps whole written as ASCII
# text writes them: ł as l, ø as o), every run of anything but letters and digits read as one
# space, a leading article left out. The keys a folded name is looked up by (whole, first and
# last word, last word, initials) are derived in SQL by ``sgam_name_keys`` (migration 0024),
# which the writes and the migration's backfill both use; ``question_names`` in
# ``retrieval.question.names`` asks for the same shapes.

MAX_NAME = 200
"""The longest name stored, in characters."""

_NOT_WORD = re.compile(r"[\W_]+")
# Letters NFKD leaves whole, written the way ASCII text writes them ("Łukasik" as "Lukasik").
_LATIN = str.maketrans(
    {"ł": "l", "ø": "o", "đ": "d", "ð": "d", "þ": "th", "æ": "ae", "œ": "oe", "\u0131": "i"}
)
_ARTICLES = ("the ", "a ", "an ")


@functools.lru_cache(maxsize=16_384)
def fold_name(text: str) -> str:
    """``text`` as names are compared: no case, marks, punctuation or leading article."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(char for char in decomposed if not unicodedata.combining(char))
    plain = plain.casefold().translate(_LATIN)
    folded = " ".join(_NOT_WORD.sub(" ", plain).split())
    for article in _ARTICLES:
        if folded.startswith(article) and len(folded) > len(article):
            return folded[len(article) :]
    return folded


IDENTIFIER_PATTERN = r"^[A-Za-z0-9_.:@-]{1,200}$"

Identifier = Annotated[str, StringConstraints(pattern=IDENTIFIER_PATTERN)]
"""Tenant, subject, attribute, episode and session ids: 1-200 of ``A-Z a-z 0-9 _ . : @ -``."""

Timestamp = Annotated[
    datetime,
    BeforeValidator(parse_timestamp),
    PlainSerializer(format_timestamp, return_type=str),
]
"""An instant: RFC 3339 with an offset in, UTC with ``Z`` out."""

EpisodeKind = Literal[
    "message", "tool_result", "event", "file", "ticket", "user_confirmation", "inference"
]
MemoryType = Literal["working", "semantic", "episodic", "procedural"]
EqualStartPolicy = Literal["reject", "source_precedence", "confirmed_wins"]
UnverifiedEvidencePolicy = Literal["accept", "refuse"]
"""What becomes of a candidate whose evidence is not in its episode's text: stored and labelled
unverified (``accept``), or refused as ``invalid`` (``refuse``)."""
FactStatus = Literal["current", "past", "future", "retired"]
UpdateStatus = Literal["written", "unchanged", "ignored", "conflict", "invalid", "buffered"]

MAX_TEXT = 100_000
MAX_DESCRIPTION = 2_000


def _refuse_nul(text: str) -> str:
    if "\x00" in text:
        raise ValueError("text must not contain NUL characters")
    return text


def _integer_only(value: object) -> object:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise PydanticCustomError("int_type", "Input should be a valid integer")
    return value


Integer = Annotated[StrictInt, BeforeValidator(_integer_only)]
"""An integer as JSON Schema counts one (5 or 5.0), never true or "5". The HTTP layer
validates bodies in lax mode, which overrides ``StrictInt`` alone."""

SourceRank = Annotated[StrictInt, Field(ge=0, le=100), BeforeValidator(_integer_only)]
"""A rank ``source_precedence`` compares (its bounds inside, so the JSON Schema states them)."""

WeakQuorum = Annotated[StrictInt, Field(ge=1, le=100), BeforeValidator(_integer_only)]
"""How many independent episodes make a weak signal a fact."""

WeakWindowDays = Annotated[StrictInt, Field(ge=1, le=3650), BeforeValidator(_integer_only)]
"""How many days a buffered weak signal waits for support."""
RETENTION_CLASS_RULE = (
    "A retention class the tenant has: ephemeral, session, standard, permanent, or one declared"
    " with PUT /v1/retention-classes/{name}; any other is refused (422, field retention_class)"
)
"""The rule no schema can state: which classes exist depends on what the tenant declared."""
KeepDays = Annotated[StrictInt, Field(ge=0, le=36500), BeforeValidator(_integer_only)]
"""How many days a retention class keeps what it covers (store/governance/retention.py)."""

MAX_METADATA_DEPTH = MAX_JSON_DEPTH
"""How deep episode metadata may nest: what is stored must also serialize when read back."""

NO_NUL_PATTERN = r"^[^\x00]*$"
"""The no-NUL rule as a JSON Schema pattern (the same in ECMA 262 and Python regexes)."""
NO_NUL_IN_OBJECT = "no key or string in it may contain NUL (U+0000)"
"""The no-NUL rule of a free JSON object (metadata, state, a definition), which no pattern
can state: said in its description."""


@dataclass(frozen=True, slots=True)
class _NoNul:
    """Refuse NUL where it arrives, and say so in the JSON Schema (a pattern on the string)."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(_refuse_nul, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        json_schema = handler(schema)
        json_schema.setdefault("pattern", NO_NUL_PATTERN)
        return json_schema


NoNul = _NoNul()
"""PostgreSQL text cannot hold NUL: refuse it where it arrives, naming the field, and state the
rule in the document as a pattern (a string that has its own pattern, an id's, excludes NUL)."""


def _has_a_word(name: str) -> str:
    if not fold_name(name):
        raise ValueError("a name needs a letter or a digit")
    return name


NAME_RULE = "A name needs a letter or a digit; one of punctuation alone is refused (422)"
"""The rule no schema states portably: which characters Unicode counts as letters."""

SubjectName = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_NAME),
    NoNul,
    AfterValidator(_has_a_word),
    Field(description=NAME_RULE),
]
"""A name a subject is called by: 1-200 characters with a letter or digit (folded for lookup,
``store.contract.common``)."""
