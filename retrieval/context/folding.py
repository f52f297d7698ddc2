"""Folding text for value matching, with a map back to the text as written. Pure.

Evidence writes a stored value in its own way: "Universite d'Oslo" for "Université d'Oslo",
"University of Oslo , Blindern" for "University of Oslo, Blindern", "the Beatles" for "Beatles".
Both the value and the text are folded alike before they are compared:

- case (``str.casefold``) and compatibility forms (NFKD), with combining marks left out, so
  "Ålesund" folds to "alesund";
- typographic quotes and dashes to their plain forms;
- every run of whitespace to one space, and none before closing punctuation (``, . ; : ! ? )
  ] %``) or after an opening bracket;
- a value's leading article ("the", "a", "an") is left out (``value_needle``): "the Hague"
  is stated by "Hague" and by "The Hague" alike.

``Folded.span`` maps a span of the folded text back to the written text, so a quote cut
around a value (``retrieval.context.snippets.clause_around``) cuts the text as written.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

__all__ = ["Folded", "content_tokens", "fold", "fold_text", "value_needle"]

_NO_SPACE_BEFORE = frozenset(",.;:!?)]%")
_NO_SPACE_AFTER = frozenset("([")
_PLAIN = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2015": "-",
    }
)
_ARTICLES = ("the ", "a ", "an ")
_WORD = re.compile(r"\w+")
_MINOR_WORDS = frozenset(
    """a an the of and in at on for to by with from de da do du des del della di la le les
    el los las von van der den y e et og i""".split()  # noqa: SIM905 - a word list reads better as text
)


@dataclass(frozen=True)
class Folded:
    """A text folded for matching, and where each folded character came from."""

    text: str
    starts: tuple[int, ...]
    """For each character of ``text``, the index in the written text it came from."""
    ends: tuple[int, ...]
    """For each character of ``text``, the index just past its written character(s)."""

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The written text's span of the folded span ``[start, end)``."""
        if start >= end:
            point = self.starts[start] if start < len(self.starts) else (self.ends or (0,))[-1]
            return point, point
        return self.starts[start], self.ends[end - 1]


def _fold_char(char: str) -> str:
    decomposed = unicodedata.normalize("NFKD", char.translate(_PLAIN))
    return "".join(part for part in decomposed if not unicodedata.combining(part)).casefold()


@functools.lru_cache(maxsize=16_384)
def fold(text: str) -> Folded:
    """``text`` folded (see the module's rules), with the map back to it. Cached: a block
    checks each of its sentences against every value of the subject."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    space: tuple[int, int] | None = None
    for index, char in enumerate(text):
        if char.isspace():
            space = (index, index + 1) if space is None else (space[0], index + 1)
            continue
        folded = _fold_char(char)
        if not folded:
            continue
        if (
            space is not None
            and out
            and folded[0] not in _NO_SPACE_BEFORE
            and out[-1] not in _NO_SPACE_AFTER
        ):
            out.append(" ")
            starts.append(space[0])
            ends.append(space[1])
        space = None
        for part in folded:
            out.append(part)
            starts.append(index)
            ends.append(index + 1)
    return Folded("".join(out), tuple(starts), tuple(ends))


def fold_text(text: str) -> str:
    """``text`` folded, without the map back."""
    return fold(text).text


@functools.lru_cache(maxsize=65_536)
def value_needle(value_text: str) -> str:
    """What a value is looked for as: its folded text less a leading article ("" when empty).

    An article alone ("A", a grade) is kept: a value is never folded to nothing.
    """
    needle = fold_text(value_text)
    for article in _ARTICLES:
        if needle.startswith(article) and needle[len(article) :].strip():
            return needle[len(article) :]
    return needle


@functools.lru_cache(maxsize=65_536)
def content_tokens(needle: str) -> tuple[str, ...]:
    """A folded value's distinctive words: those with a letter, of two characters or more,
    and not a minor word (an article, a preposition, a conjunction), first seen first."""
    words = (word for word in _WORD.findall(needle) if len(word) > 1)
    kept = (word for word in words if any(c.isalpha() for c in word) and word not in _MINOR_WORDS)
    return tuple(dict.fromkeys(kept))
