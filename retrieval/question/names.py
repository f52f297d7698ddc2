"""Finding the subject a question names, the way text writes names. Pure.

A question calls a subject by its id's words, its display name, an alias or a name text wrote
for it (``store.subjects.names``), and rarely exactly: "Okafor" for Adaeze Okafor, "the WHO"
for the World Health Organization, "Alesund" for Ålesund, "Kristin M. Berg" for Kristin Berg.
Every run of up to five of the question's words is folded (``store.contract.common.fold_name``) and
asked for by the key shapes the store keeps:

==========  ==========================================================  =====
kind        what the question's words must be                           score
==========  ==========================================================  =====
full        the whole name                                              1.0
pair        the name's first and last word, or the whole name once the  0.9
            question's initials are left out ("Kristin M. Berg")
acronym     the name's initials, written in capitals ("WHO", "W.H.O.")  0.85
leading     two or more of the name's first words, capitalised ("the    0.8
            World Fisheries Science" for its Organization)
surname     the name's last word, capitalised, standing alone           0.75
similar     a capitalised run whose trigrams are like a whole name's    0.8 x similarity
==========  ==========================================================  =====

The best match wins: highest score, then the longest text, then the first. When another
subject fits the same words about as well (within ``retrieval.question.words.TIE``), the question
is ambiguous: no subject is chosen, and the plan lists every candidate weighed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from store.contract.common import fold_name
from store.subjects.names import AskedKeys

__all__ = [
    "NameGram",
    "NameMatch",
    "asked_keys",
    "question_grams",
    "score_keys",
    "score_similar",
    "similar_texts",
]

MAX_WORDS = 5

_SCORES = {"full": 1.0, "pair": 0.9, "acronym": 0.85, "leading": 0.8, "surname": 0.75}
_SIMILAR_WEIGHT = 0.8
_TOKEN = re.compile(r"[^\W_]+")
_DOTTED_ACRONYM = re.compile(r"(?<![\w.])(?:[A-Z]\.){2,}(?!\w)")
_NOT_SURNAMES = frozenset(
    """a an the of and or for in on at to by with from is are was were be been did do does has
    have had who whom whose what when where which why how that this these those there their
    his her its our your my me we you they he she it as if than then so not no yes""".split()  # noqa: SIM905
)
_HOW = {
    "full": "the name",
    "pair": "a shorter form of the name",
    "acronym": "the initials of the name",
    "leading": "the first words of the name",
    "surname": "the last word of the name",
    "similar": "a spelling like the name",
}


@dataclass(frozen=True)
class NameGram:
    """A run of the question's words that may name a subject."""

    start: int
    end: int
    folded: str
    words: int
    capitalised: bool
    """Every word but minor ones begins with a capital, as text writes names."""
    stripped: str | None = None
    """``folded`` without single-letter initials, when it has some inside."""
    acronym: str | None = None
    """The letters, when the run is one word written in capitals (or dotted initials)."""
    alone: bool = True
    """No capitalised word stands right before or after it (a name of its own, not a part)."""


@dataclass(frozen=True)
class NameMatch:
    """A subject some words of the question may name, and how well."""

    subject: str
    name: str
    """The name as kept (a display name, an alias, a learned name or the id)."""
    source: str
    """Where the name came from: id, display, alias or learned."""
    how: str
    score: float
    start: int
    end: int
    text: str
    """The question's words, as written."""


def question_grams(question: str) -> list[NameGram]:
    """Every run of one to ``MAX_WORDS`` words of the question, folded, with its shapes."""
    tokens = list(_TOKEN.finditer(question))
    upper = [token.group(0)[0].isupper() for token in tokens] + [False]
    grams: list[NameGram] = []
    for first in range(len(tokens)):
        for last in range(first, min(first + MAX_WORDS, len(tokens))):
            start, end = tokens[first].start(), tokens[last].end()
            words = [token.group(0) for token in tokens[first : last + 1]]
            folded = fold_name(question[start:end])
            if not folded:
                continue
            kept = [word for word in words[1:-1] if len(word) > 1]
            stripped = None
            if len(words) >= 3 and len(kept) < len(words) - 2:
                stripped = fold_name(" ".join([words[0], *kept, words[-1]]))
            acronym = None
            if len(words) == 1 and words[0].isupper() and 2 <= len(words[0]) <= 6:
                acronym = words[0].lower()
            grams.append(
                NameGram(
                    start=start,
                    end=end,
                    folded=folded,
                    words=len(words),
                    capitalised=_capitalised(words),
                    stripped=stripped,
                    acronym=acronym,
                    alone=not upper[first - 1 if first else -1] and not upper[last + 1],
                )
            )
    for dotted in _DOTTED_ACRONYM.finditer(question):
        letters = dotted.group(0).replace(".", "").lower()
        grams.append(NameGram(dotted.start(), dotted.end(), letters, 1, True, acronym=letters))
    return grams


def _capitalised(words: Sequence[str]) -> bool:
    """Written as a name: it begins and ends with a capitalised word, and every word between
    is capitalised, a number or a minor word ("Bank of England", "Apollo 11 Crew"); so "Halifax
    Institute in 1944" is not one name, and its date stays a date."""
    inner = all(
        word[0].isupper() or word[0].isdigit() or word.lower() in _NOT_SURNAMES
        for word in words[1:-1]
    )
    return words[0][0].isupper() and words[-1][0].isupper() and inner


def asked_keys(grams: Iterable[NameGram]) -> AskedKeys:
    """The keys the store is asked for, each of the kind the words allow: any run may be a
    whole name, a capitalised word alone a last name, a word in capitals initials."""
    names: set[str] = set()
    surnames: set[str] = set()
    acronyms: set[str] = set()
    for gram in grams:
        names.add(gram.folded)
        if gram.stripped:
            names.add(gram.stripped)
        if gram.acronym:
            acronyms.add(gram.acronym)
        if _surname_allowed(gram):
            surnames.add(gram.folded)
    return AskedKeys(sorted(names), sorted(surnames), sorted(acronyms))


def _surname_allowed(gram: NameGram) -> bool:
    return gram.words == 1 and gram.capitalised and gram.folded not in _NOT_SURNAMES


def score_keys(
    question: str, grams: Sequence[NameGram], rows: Iterable[tuple[str, str, str, str, str]]
) -> list[NameMatch]:
    """The matches the store's rows (subject, source, name, kind, key) allow, by the rules
    of the module's table; a kind the words do not allow (a lower-case surname) is none."""
    by_key: dict[str, list[tuple[str, str, str, str]]] = {}
    for subject, source, name, kind, key in rows:
        by_key.setdefault(key, []).append((subject, source, name, kind))
    matches: list[NameMatch] = []
    for gram in grams:
        shapes = [(gram.folded, "as_written"), (gram.stripped or "", "stripped")]
        for asked, shape in shapes:
            for subject, source, name, kind in by_key.get(asked, ()):
                fit = "pair" if kind == "full" and shape == "stripped" else kind
                score = _allowed(gram, fit)
                if score:
                    matches.append(_match(question, gram, (subject, source, name), fit, score))
        for subject, source, name, kind in by_key.get(gram.acronym or "", ()):
            if kind == "acronym":
                matches.append(_match(question, gram, (subject, source, name), kind, _SCORES[kind]))
    return _best_per_subject_and_span(matches)


def _allowed(gram: NameGram, kind: str) -> float:
    if kind == "surname":
        return _SCORES["surname"] if _surname_allowed(gram) else 0.0
    if kind == "leading":
        return _SCORES["leading"] if gram.capitalised else 0.0
    return _SCORES[kind] if kind in ("full", "pair") else 0.0


def _match(
    question: str, gram: NameGram, found: tuple[str, str, str], kind: str, score: float
) -> NameMatch:
    subject, source, name = found
    return NameMatch(
        subject=subject,
        name=name,
        source=source,
        how=_HOW[kind],
        score=score,
        start=gram.start,
        end=gram.end,
        text=question[gram.start : gram.end],
    )


def similar_texts(grams: Sequence[NameGram]) -> list[str]:
    """The runs worth a trigram search: capitalised, two to four words, or one long word that
    is not part of a longer capitalised run ("Isabel" of "Isabel Ithkwen" is not searched)."""
    return sorted(
        {
            gram.folded
            for gram in grams
            if gram.capitalised
            and gram.words <= 4
            and (gram.words > 1 or gram.alone)
            and len(gram.folded) >= 4
            and gram.folded.split()[0] not in _NOT_SURNAMES
            and gram.folded.split()[-1] not in _NOT_SURNAMES
        }
    )


def score_similar(
    question: str, grams: Sequence[NameGram], rows: Iterable[tuple[str, str, str, str, float]]
) -> list[NameMatch]:
    """Matches from trigram rows (subject, source, name, text asked, similarity)."""
    by_text: dict[str, list[NameGram]] = {}
    for gram in grams:
        by_text.setdefault(gram.folded, []).append(gram)
    matches = [
        NameMatch(
            subject=subject,
            name=name,
            source=source,
            how=_HOW["similar"],
            score=round(_SIMILAR_WEIGHT * similarity, 3),
            start=gram.start,
            end=gram.end,
            text=question[gram.start : gram.end],
        )
        for subject, source, name, asked, similarity in rows
        for gram in by_text.get(asked, ())
    ]
    return _best_per_subject_and_span(matches)


_SOURCE_ORDER = {"display": 0, "alias": 1, "learned": 2, "id": 3}
"""Of names that fit equally, the one a reason quotes: declared before learned, before the id."""


def _best_per_subject_and_span(matches: Iterable[NameMatch]) -> list[NameMatch]:
    best: dict[tuple[str, int, int], NameMatch] = {}

    def rank(match: NameMatch) -> tuple[float, int, str]:
        return (-match.score, _SOURCE_ORDER.get(match.source, 4), match.name)

    for match in matches:
        key = (match.subject, match.start, match.end)
        if key not in best or rank(match) < rank(best[key]):
            best[key] = match
    return sorted(best.values(), key=lambda m: (m.start, -(m.end - m.start), m.subject))
