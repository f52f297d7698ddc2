"""Which values an evidence line may state unmarked, whatever was routed (read path step 4).

Pure. The assembler knows every value any key of the subject ever held (versions and conflict
challengers) and the values its keys hold at the read's (valid time, known-at). A line that
states a value some key held at another time, and that no key holds at the asked instant, is
**superseded**: it is marked or dropped. A value one key holds now is never stale because
another key once held it, but a line stating a value that a *routed* key held at another time
while only an unrouted key holds it now is **ambiguous** for the question and is dropped.

When keys were routed, a line that states values of the subject's other keys only, none of a
routed key's, is **off topic** and is left out: it answers another question.

A value is stated where its text occurs as whole tokens (``retrieval.snippets.value_pattern``)
outside an occurrence of a longer value that holds: "Kim" is not stated by "Kim Dae-jung".
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from retrieval.snippets import one_line, value_pattern
from store.subject_reads import SubjectMemory
from store.values import display

Verdict = Literal["holds", "superseded", "ambiguous", "off_topic"]


@dataclass(frozen=True)
class SubjectValues:
    """A subject's value texts for one read, per attribute."""

    holding: Mapping[str, tuple[str, ...]]
    """Values each key holds at the asked instant (both sides of an open dispute)."""
    ever: Mapping[str, tuple[str, ...]]
    """Every value each key ever had: versions and conflict challengers."""


NO_VALUES = SubjectValues(holding={}, ever={})


def subject_values(memory: SubjectMemory) -> SubjectValues:
    """The value texts of the subject's keys, as ``memory``'s instant sees them."""
    holding: dict[str, list[str]] = {}
    for fact in memory.facts:
        texts = holding.setdefault(fact.attribute, [])
        texts.append(display(fact.value))
        texts.extend(display(challenger.value) for challenger in fact.challengers)
    ever: dict[str, list[str]] = {}
    for attribute, value in memory.values_ever():
        ever.setdefault(attribute, []).append(display(value))
    return SubjectValues(
        holding={name: _distinct(texts) for name, texts in holding.items()},
        ever={name: _distinct(texts) for name, texts in ever.items()},
    )


@dataclass(frozen=True)
class EvidenceCheck:
    """The values one read judges evidence lines by, each as its folded one-line text."""

    holding: tuple[str, ...]
    superseded: tuple[str, ...]
    routed_holding: tuple[str, ...]
    ambiguous: tuple[str, ...]
    routed: tuple[str, ...] = ()
    unrouted: tuple[str, ...] = ()

    def verdict(self, text: str) -> Verdict:
        """Whether a line holds, is off topic, states a superseded value, or is ambiguous for the
        routed keys."""
        folded = one_line(text).casefold()
        if _states(folded, self.unrouted, cover=()) and not _states(folded, self.routed, cover=()):
            return "off_topic"
        if _states(folded, self.superseded, cover=self.holding):
            return "superseded"
        if _states(folded, self.ambiguous, cover=self.routed_holding):
            return "ambiguous"
        return "holds"

    def states_routed_holding(self, text: str) -> bool:
        """Whether ``text`` states a value a routed key holds at the asked instant."""
        return bool(_spans(one_line(text).casefold(), self.routed_holding))

    def value_spans(self, text: str) -> list[tuple[int, int]]:
        """Where the case-folded one-line ``text`` states any of the subject's values."""
        folded = one_line(text).casefold()
        return sorted(set(_spans(folded, (*self.holding, *self.superseded, *self.ambiguous))))


def evidence_check(values: SubjectValues, *, routed: Collection[str] = ()) -> EvidenceCheck:
    """The checks for a read whose routed (or named) keys are ``routed``."""
    holding = {text for texts in values.holding.values() for text in texts}
    ever = {text for texts in values.ever.values() for text in texts}
    routed_holding = {text for name in routed for text in values.holding.get(name, ())}
    routed_ever = {text for name in routed for text in values.ever.get(name, ())}
    holds = _patterns(holding)
    routed_holds = _patterns(routed_holding)
    routed_values = _patterns(routed_ever | routed_holding)
    return EvidenceCheck(
        holding=holds,
        superseded=_patterns(ever - holding, besides=holds),
        routed_holding=routed_holds,
        ambiguous=_patterns((routed_ever - routed_holding) & holding, besides=routed_holds),
        routed=routed_values,
        unrouted=_patterns(ever | holding, besides=routed_values) if routed else (),
    )


def _spans(folded: str, needles: Iterable[str]) -> list[tuple[int, int]]:
    """Where ``folded`` states each value. A value whose text does not occur at all is passed
    over without its pattern, which is compiled only when needed: a subject holds many values
    and a line states few of them."""
    spans: list[tuple[int, int]] = []
    for needle in needles:
        if needle in folded:
            pattern = value_pattern(needle)  # the folded text folds to itself: the same pattern
            assert pattern is not None  # a needle is never empty
            spans.extend(match.span() for match in pattern.finditer(folded))
    return spans


def _states(folded: str, needles: Iterable[str], *, cover: Iterable[str]) -> bool:
    found = _spans(folded, needles)
    if not found:
        return False
    covers = _spans(folded, cover)
    return any(
        not any(start <= s and e <= end and (end - start) > (e - s) for start, end in covers)
        for s, e in found
    )


def _patterns(texts: Iterable[str], *, besides: Iterable[str] = ()) -> tuple[str, ...]:
    """The distinct folded texts of ``texts``, less those of ``besides``: two texts that fold
    alike have the same pattern."""
    folded = {one_line(text).casefold() for text in texts}
    return tuple(sorted(folded - set(besides) - {""}))


def _distinct(texts: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(texts))
