"""Where an evidence line states the subject's values, before any verdict on them. Pure.

A value is stated (``retrieval.context.folding`` folds both sides first):

- **as written**: its folded text (less a leading article) occurs as a whole token run;
- **by its distinctive words**: a value of two or more distinctive words
  (``retrieval.context.folding.content_tokens``) is stated by a sentence holding all of them, in any
  order ("Blindern campus of the University of Oslo" states "University of Oslo, Blindern"),
  except words that are part of another value written out whose words are not all the
  value's ("Ana Ferri met Luca Rossi" does not state "Ana Rossi" when Ana Ferri is a value),
  and, for a value that does not hold, words of a holding value written out ("the University
  of Oslo; the Blindern office" does not state "University of Oslo, Blindern" when "University
  of Oslo" holds).

A value is stated only outside a longer holding value written out that covers it ("Kim" is not
stated by "Kim Dae-jung", nor "University of Oslo" by "University of Oslo , Blindern"). A
holding value found by its words alone covers nothing: "Blindern campus of the University of
Oslo" still states a stale "University of Oslo" and is marked (the safe side: an answer may be
lost, a stale value is never shown as current).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Collection, Mapping, Sequence
from typing import NamedTuple

from retrieval.context.folding import content_tokens
from retrieval.context.snippets import value_pattern

_SENTENCE_END = re.compile(r"[.!?]+\s")
_WORD = re.compile(r"\w+")


class Match(NamedTuple):
    """Where a needle was found in a folded line: a span."""

    start: int
    end: int
    written: bool
    """Found as written (a token run), not by its distinctive words."""


Found = Mapping[str, Sequence[Match]]
"""Each needle a line states, with where."""


def find_values(
    folded: str,
    universe: Sequence[str],
    worded: Sequence[tuple[str, tuple[str, ...]]],
    holding: frozenset[str],
) -> dict[str, list[Match]]:
    """Where the folded ``folded`` states each needle of ``universe``.

    A needle whose text (or one of whose words) does not occur at all is passed over without
    compiling its pattern: a subject holds many values and a line states few of them.
    """
    written: dict[str, list[tuple[int, int]]] = {}
    for needle in universe:
        if needle in folded:
            pattern = value_pattern(needle)  # a needle folds to itself: the same pattern
            assert pattern is not None  # a needle is never empty
            spans = [match.span() for match in pattern.finditer(folded)]
            if spans:
                written[needle] = spans
    found = {
        needle: [Match(start, end, True) for start, end in spans]
        for needle, spans in written.items()
    }
    segments: list[tuple[int, int]] | None = None
    present = frozenset(_WORD.findall(folded)) if worded else frozenset()
    for needle, tokens in worded:
        if not present.issuperset(tokens):
            continue
        blocked = [
            span
            for other, spans in written.items()
            if other != needle and _blocks(other, needle, holding)
            for span in spans
        ]
        own = written.get(needle, [])
        segments = segments if segments is not None else _segments(folded)
        for segment in segments:
            if any(segment[0] <= start < segment[1] for start, _ in own):
                continue  # written out in this sentence: its words say no more
            span = _by_words(folded, tokens, segment, blocked)
            if span is not None:
                found.setdefault(needle, []).append(Match(*span, False))
    return found


def _blocks(other: str, needle: str, holding: frozenset[str]) -> bool:
    """Whether ``other`` written out keeps its words from stating ``needle`` by its words."""
    if other in holding and needle not in holding:
        return True
    return not set(content_tokens(other)) <= set(content_tokens(needle))


def _segments(folded: str) -> list[tuple[int, int]]:
    """The sentences of a folded text, as spans: words state a value within one sentence."""
    bounds = [0, *(match.end() for match in _SENTENCE_END.finditer(folded)), len(folded)]
    return [(start, end) for start, end in itertools.pairwise(bounds) if end > start]


def _by_words(
    folded: str,
    tokens: Sequence[str],
    segment: tuple[int, int],
    blocked: Sequence[tuple[int, int]],
) -> tuple[int, int] | None:
    """The span from the first to the last of ``tokens`` in ``segment`` (each its first free
    occurrence), or None when one is missing."""
    first, last = segment[1], segment[0]
    for token in tokens:
        pattern = value_pattern(token)
        assert pattern is not None
        free = next(
            (
                match.span()
                for match in pattern.finditer(folded, segment[0], segment[1])
                if not any(s <= match.start() and match.end() <= e for s, e in blocked)
            ),
            None,
        )
        if free is None:
            return None
        first, last = min(first, free[0]), max(last, free[1])
    return first, last


def stated_needles(found: Found, needles: Collection[str], *, cover: Collection[str]) -> list[str]:
    """The needles stated somewhere outside a covering mention of a ``cover`` needle.

    Walks what was found (a few needles), not ``needles`` (the subject's many values)."""
    stated = [needle for needle in found if needle in needles]
    if not stated:
        return []
    covers = [match for needle, matches in found.items() if needle in cover for match in matches]
    return [
        needle
        for needle in stated
        if any(not any(_covers(c, m) for c in covers) for m in found[needle])
    ]


def _covers(outer: Match, inner: Match) -> bool:
    """Whether ``outer``, a value written out, holds ``inner`` in a longer span. A value found
    by its words covers nothing: the words between them may be other values written out."""
    if not outer.written or not (outer.start <= inner.start and inner.end <= outer.end):
        return False
    return (outer.end - outer.start) > (inner.end - inner.start)
