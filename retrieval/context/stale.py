"""Which values an evidence line may state unmarked, whatever was routed (read path step 4).

Pure. The assembler knows every value any key of the subject ever held (versions and conflict
challengers) and the values its keys hold at the read's (valid time, known-at). A line that
states a value some key held at another time, and that no key holds at the asked instant, is
**superseded**: it is marked (with the period the value held, where a version says so) or
dropped. A line stating a challenger that did not win (refused, or settled for the incumbent)
is **in conflict**; one stating the challenger of a disputed key is **disputed** (the key is
under "Uncertain:"; its incumbent's lines are shown as they are). A value one key holds
now is never stale because another key once held it, but a line stating a value that a
*routed* key held at another time while only an unrouted key holds it now is **ambiguous** for
the question and is dropped.

When keys were routed, a line that states values of the subject's other keys only, none of a
routed key's, is **off topic** and is left out: it answers another question.

Where a line states a value, as written or by its distinctive words, is
``retrieval.context.stated``'s rule.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from retrieval.context.folding import content_tokens, fold, value_needle
from retrieval.context.stated import Found, find_values, stated_needles
from store.contract.facts import Fact
from store.contract.values import display
from store.subjects.reads import SubjectMemory

Verdict = Literal["holds", "superseded", "in_conflict", "ambiguous", "disputed", "off_topic"]
Window = tuple[datetime, datetime | None]
"""A version's valid window: from, and until (None: open)."""


@dataclass(frozen=True)
class SubjectValues:
    """A subject's value texts for one read, per attribute."""

    holding: Mapping[str, tuple[str, ...]]
    """Values each key holds at the asked instant (both sides of an open dispute)."""
    ever: Mapping[str, tuple[str, ...]]
    """Every value each key ever had: versions and conflict challengers."""
    refused: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Challengers that did not win and were never a version's value: refused under an
    equal-start policy (conflict open, key not disputed) or settled for the incumbent."""
    disputed: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """The challengers of each key disputed at the asked instant (not the incumbent, which
    reads return): a line stating one is marked disputed."""
    periods: Mapping[str, tuple[Window, ...]] = field(default_factory=dict)
    """The valid windows of the versions that held each value text (those believed at the
    read's known-at, else every version's)."""


NO_VALUES = SubjectValues(holding={}, ever={})


def subject_values(memory: SubjectMemory) -> SubjectValues:
    """The value texts of the subject's keys, as ``memory``'s instant sees them."""
    holding: dict[str, list[str]] = {}
    disputed: dict[str, list[str]] = {}
    for fact in memory.facts:
        sides = [display(fact.value), *(display(c.value) for c in fact.challengers)]
        holding.setdefault(fact.attribute, []).extend(sides)
        if fact.disputed:
            disputed.setdefault(fact.attribute, []).extend(challengers(fact))
    ever: dict[str, list[str]] = {}
    for attribute, value in memory.values_ever():
        ever.setdefault(attribute, []).append(display(value))
    versions = {(v.attribute, display(v.value)) for v in memory.believed}
    refused: dict[str, list[str]] = {}
    for conflict in memory.conflicts:
        text = display(conflict.challenger.value)
        lost = conflict.resolution != "challenger" and not (
            conflict.status == "open" and conflict.disputed
        )
        if lost and (conflict.attribute, text) not in versions:
            refused.setdefault(conflict.attribute, []).append(text)
    return SubjectValues(
        holding={name: _distinct(texts) for name, texts in holding.items()},
        ever={name: _distinct(texts) for name, texts in ever.items()},
        refused={name: _distinct(texts) for name, texts in refused.items()},
        disputed={name: _distinct(texts) for name, texts in disputed.items()},
        periods=_periods(memory),
    )


def challengers(fact: Fact) -> list[str]:
    """A disputed fact's challengers' value texts, less any equal to the incumbent's."""
    incumbent = display(fact.value)
    return [text for text in (display(c.value) for c in fact.challengers) if text != incumbent]


def _periods(memory: SubjectMemory) -> dict[str, tuple[Window, ...]]:
    believed: dict[str, list[Window]] = {}
    anytime: dict[str, list[Window]] = {}
    for version in memory.believed:
        text = display(version.value)
        window = (version.valid_from, version.valid_to)
        anytime.setdefault(text, []).append(window)
        if version.recorded_at <= memory.known_at and (
            version.retired_at is None or version.retired_at > memory.known_at
        ):
            believed.setdefault(text, []).append(window)
    return {
        text: tuple(sorted(set(believed.get(text) or windows), key=_window_order))
        for text, windows in anytime.items()
    }


def _window_order(window: Window) -> tuple[datetime, bool, datetime]:
    start, end = window
    return (start, end is None, end or start)


@dataclass(frozen=True)
class EvidenceCheck:
    """The values one read judges evidence lines by, each as its folded needle
    (``retrieval.context.folding.value_needle``)."""

    holding: tuple[str, ...]
    superseded: tuple[str, ...]
    routed_holding: tuple[str, ...]
    ambiguous: tuple[str, ...]
    routed: tuple[str, ...] = ()
    unrouted: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()
    disputed: tuple[str, ...] = ()
    periods: Mapping[str, tuple[Window, ...]] = field(default_factory=dict, compare=False)
    """The windows of each superseded needle's versions."""
    _found: dict[str, Found] = field(default_factory=dict, compare=False, repr=False)

    @functools.cached_property
    def _universe(self) -> tuple[str, ...]:
        every = (
            *self.holding,
            *self.superseded,
            *self.ambiguous,
            *self.routed,
            *self.unrouted,
            *self.refused,
        )
        return tuple(dict.fromkeys(every))

    @functools.cached_property
    def _worded(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """The needles that may be stated by their words, with those words."""
        return tuple(
            (needle, content_tokens(needle))
            for needle in self._universe
            if len(content_tokens(needle)) >= 2
        )

    def _matches(self, text: str) -> Found:
        found = self._found.get(text)
        if found is None:
            found = find_values(
                fold(text).text, self._universe, self._worded, self._sets["holding"]
            )
            self._found[text] = found
        return found

    @functools.cached_property
    def _sets(self) -> dict[str, frozenset[str]]:
        sets = {
            name: frozenset(getattr(self, name))
            for name in (
                "holding",
                "superseded",
                "routed_holding",
                "ambiguous",
                "routed",
                "unrouted",
                "refused",
                "disputed",
            )
        }
        sets["settled"] = sets["holding"] - sets["disputed"]
        return sets

    def verdict(self, text: str) -> Verdict:
        """Whether a line holds, is off topic, states a superseded value or a challenger that
        did not win, is ambiguous for the routed keys, or states a side of a disputed key."""
        found = self._matches(text)
        if not found:
            return "holds"
        sets = self._sets
        if stated_needles(found, sets["unrouted"], cover=()) and not stated_needles(
            found, sets["routed"], cover=()
        ):
            return "off_topic"
        if stated_needles(found, sets["superseded"], cover=sets["holding"]):
            return "superseded"
        if stated_needles(found, sets["refused"], cover=sets["holding"]):
            return "in_conflict"
        if stated_needles(found, sets["ambiguous"], cover=sets["routed_holding"]):
            return "ambiguous"
        if stated_needles(found, sets["disputed"], cover=sets["settled"]):
            return "disputed"
        return "holds"

    def stale_windows(self, text: str) -> tuple[Window, ...]:
        """The windows of the superseded values ``text`` states, earliest first."""
        sets = self._sets
        stated = stated_needles(self._matches(text), sets["superseded"], cover=sets["holding"])
        windows = {window for needle in stated for window in self.periods.get(needle, ())}
        return tuple(sorted(windows, key=_window_order))

    def states_routed_holding(self, text: str) -> bool:
        """Whether ``text`` states a value a routed key holds at the asked instant."""
        found = self._matches(text)
        return any(found.get(needle) for needle in self.routed_holding)

    def states_holding(self, text: str) -> bool:
        """Whether ``text`` states a value some key holds at the asked instant."""
        found = self._matches(text)
        return any(found.get(needle) for needle in self.holding)

    def states(self, text: str, value_texts: Iterable[str]) -> bool:
        """Whether ``text`` states one of ``value_texts`` (each a value of the subject)."""
        found = self._matches(text)
        return any(found.get(value_needle(value)) for value in value_texts)

    def value_spans(self, text: str) -> list[tuple[int, int]]:
        """Where ``text`` (as written) states any of the subject's values."""
        found = self._matches(text)
        folded = fold(text)
        spans = {
            folded.span(match.start, match.end)
            for needle in (*self.holding, *self.superseded, *self.ambiguous, *self.refused)
            for match in found.get(needle, ())
        }
        return sorted(spans)


def evidence_check(values: SubjectValues, *, routed: Collection[str] = ()) -> EvidenceCheck:
    """The checks for a read whose routed (or named) keys are ``routed``."""
    holding = {text for texts in values.holding.values() for text in texts}
    refused = {text for texts in values.refused.values() for text in texts}
    ever = {text for texts in values.ever.values() for text in texts}
    routed_holding = {text for name in routed for text in values.holding.get(name, ())}
    routed_ever = {text for name in routed for text in values.ever.get(name, ())}
    holds = _needles(holding)
    routed_holds = _needles(routed_holding)
    routed_values = _needles(routed_ever | routed_holding)
    superseded = _needles(ever - holding - refused, besides=holds)
    periods: dict[str, set[Window]] = {}
    for text, windows in values.periods.items():
        periods.setdefault(value_needle(text), set()).update(windows)
    return EvidenceCheck(
        holding=holds,
        superseded=superseded,
        routed_holding=routed_holds,
        ambiguous=_needles((routed_ever - routed_holding) & holding, besides=routed_holds),
        routed=routed_values,
        unrouted=_needles(ever | holding, besides=routed_values) if routed else (),
        refused=_needles(refused, besides=(*holds, *superseded)),
        disputed=_needles(t for texts in values.disputed.values() for t in texts),
        periods={needle: tuple(periods.get(needle, ())) for needle in superseded},
    )


def _needles(texts: Iterable[str], *, besides: Iterable[str] = ()) -> tuple[str, ...]:
    """The distinct needles of ``texts``, less those of ``besides``: two texts that fold
    alike are looked for as one."""
    needles = {value_needle(text) for text in texts}
    return tuple(sorted(needles - set(besides) - {""}))


def _distinct(texts: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(texts))
