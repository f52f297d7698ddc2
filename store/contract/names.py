"""Subject names folded for lookup. Pure.

A name is folded the way a question's words are, so "Ålesund", "ALESUND" and "Alesund ," all
read ``alesund``: compatibility forms (NFKD) with combining marks left out, case folded (and
the Latin letters NFKD keeps whole written as ASCII text writes them: ł as l, ø as o), every
run of anything but letters and digits read as one space, a leading article left out. The keys
a folded name is looked up by (whole, first and last word, last word, initials) are derived in
SQL by ``sgam_name_keys`` (migration 0024), which both the writes and the migration's backfill
use; ``question_names`` in ``retrieval.question.names`` asks for the same shapes.
"""

from __future__ import annotations

import functools
import re
import unicodedata

__all__ = ["MAX_NAME", "fold_name"]

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
