"""Which evidence lines a block shows, and what each quotes of its episode. Pure.

The chosen facts' own sources come first, in the order of their keys; then the other episodes,
most similar first. Each line quotes sentences of its episode, judged one by one
(``retrieval.context.stale``; one line at a time, ``retrieval.context.evidence_quote``):

1. **Supporting sentences**: those stating a value a routed key holds at the asked instant
   (any key's, when none was routed), at most two, in the episode's order; a long one is cut
   to the clause around its value. A line of supporting sentences is shown as it is, or
   marked ``disputed`` when it states the challenger of a disputed key.
2. With none, a sentence stating a value of another period is shown marked with what it is:
   ``superseded (from 2014-03-01 until 2016-05-01)`` (the windows of the versions that held
   it) or ``in conflict`` (a challenger that did not win). At most ``max_superseded`` such
   lines are shown (lines marked older than the shown value count among them).
3. With neither, the sentences nearest the question that state no other-period value.

A line judged ambiguous or off topic is left out.

Evidence the store never learned is judged by time. A line of rule 3 from an episode about a
shown key (``EvidenceCandidate.about``, by the similarity routing uses) that states nothing of
the key's shown value anywhere, and is neither the fact's source nor a challenger's, is marked
``older than the value since …`` when the episode occurred before the shown value began, and
``newer than memory`` otherwise, if it could state a value of the key at all (a number, a word
of the attribute's name, or a capitalised word that is not the subject's own name): the key is
then uncertain (``newer_evidence``). One that could not ("Zofia prefers concise answers.",
or a sentence whose only value is one the store holds) is shown as it is. Such a line
about a key that is not known at the asked time is left out: nothing says which period it is
of. A line that supports the value of a key so put in doubt is marked ``uncertain``: it is no
firmer than the key it supports. So a missed or wrong extraction can cost an answer, but never
presents an older statement as current.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from retrieval.context.block_inputs import EvidenceCandidate, KeyFacts
from retrieval.context.evidence_quote import When, quote_line
from retrieval.context.marks import OLDER, UNCERTAIN
from retrieval.context.stale import EvidenceCheck, SubjectValues, challengers
from store.contract.labels import IN_CONFLICT, SUPERSEDED
from store.contract.values import display

_STALE_MARKS = (SUPERSEDED, IN_CONFLICT, OLDER)
"""Marks of lines that state what does not hold then: capped by ``max_superseded``."""


@dataclass(frozen=True)
class Shown:
    """An evidence line the block may show: its episode, its quote, and its mark ("" when it
    supports the block)."""

    candidate: EvidenceCandidate
    snippet: str
    mark: str = ""

    @property
    def superseded(self) -> bool:
        """Whether the line states what does not hold then (superseded, in conflict, older)."""
        return self.mark.startswith(_STALE_MARKS)

    @property
    def line(self) -> str:
        """The line as the block prints it, cited by episode id."""
        mark = f"{self.mark}: " if self.mark else ""
        return f"[{self.candidate.episode_id}] {mark}{self.snippet}"


@dataclass(frozen=True)
class Evidence:
    """The lines a block shows, and the keys later episodes put in doubt."""

    shown: list[Shown]
    newer: dict[str, list[str]]
    """Per attribute, the episodes newer than memory about it (shown or not), in rank order."""


def with_keys(values: SubjectValues, keys: Sequence[KeyFacts]) -> SubjectValues:
    """``values`` plus the asked keys' own facts and challengers (holding at the instant)."""
    holding = {name: tuple(texts) for name, texts in values.holding.items()}
    ever = {name: tuple(texts) for name, texts in values.ever.items()}
    disputed = {name: tuple(texts) for name, texts in values.disputed.items()}
    for key in keys:
        if key.fact is None:
            continue
        texts = [
            text
            for fact in key.facts()
            for text in (display(fact.value), *(display(c.value) for c in fact.challengers))
        ]
        holding[key.attribute] = tuple(dict.fromkeys([*holding.get(key.attribute, ()), *texts]))
        ever[key.attribute] = tuple(dict.fromkeys([*ever.get(key.attribute, ()), *texts]))
        if key.fact.disputed:
            disputed[key.attribute] = tuple(
                dict.fromkeys([*disputed.get(key.attribute, ()), *challengers(key.fact)])
            )
    return SubjectValues(
        holding=holding,
        ever=ever,
        refused=values.refused,
        disputed=disputed,
        periods=values.periods,
    )


def choose_evidence(
    candidates: Sequence[EvidenceCandidate],
    keys: Sequence[KeyFacts],
    *,
    check: EvidenceCheck,
    question: str,
    evidence_k: int,
    max_superseded: int,
    when: When,
) -> Evidence:
    """At most ``evidence_k`` lines, fact sources first, one per episode; and the keys that
    episodes newer than memory (any of ``candidates``) put in doubt."""
    sources: dict[str, int] = {}
    for key in keys:
        for fact in key.facts():
            sources.setdefault(fact.source_episode_id, len(sources))

    def rank(position: int) -> tuple[int, float, int]:
        candidate = candidates[position]
        if candidate.episode_id in sources or candidate.is_fact_source:
            return (0, sources.get(candidate.episode_id, len(sources)), position)
        if candidate.search_rank is not None:
            return (1, candidate.search_rank, position)
        score = candidate.score if math.isfinite(candidate.score) else -math.inf
        return (1, -score, position)

    cited = _cited(keys)
    asked = frozenset(key.attribute for key in keys)
    shown: list[Shown] = []
    newer: dict[str, list[str]] = {}
    seen: set[str] = set()
    for position in sorted(range(len(candidates)), key=rank):
        candidate = candidates[position]
        if candidate.episode_id in seen:
            continue
        if len(shown) >= evidence_k and not candidate.about & asked:
            continue  # no room left, and about no asked key: it cannot put one in doubt
        seen.add(candidate.episode_id)
        line = quote_line(candidate, keys, check=check, question=question, cited=cited, when=when)
        for attribute in line.newer_for:
            newer.setdefault(attribute, []).append(candidate.episode_id)
        if line.left_out or not line.snippet or len(shown) >= evidence_k:
            continue
        item = Shown(candidate, line.snippet, line.mark)
        if item.superseded and sum(s.superseded for s in shown) >= max_superseded:
            continue
        shown.append(item)
    return Evidence(shown=_doubted_support(shown, keys, newer, check), newer=newer)


def _doubted_support(
    shown: Sequence[Shown],
    keys: Sequence[KeyFacts],
    newer: Mapping[str, Sequence[str]],
    check: EvidenceCheck,
) -> list[Shown]:
    """The lines, those left unmarked that state the value of a settled key newer episodes
    put in doubt marked ``uncertain``."""
    doubted = [
        display(key.fact.value)
        for key in keys
        if key.attribute in newer and key.fact is not None and not key.fact.disputed
    ]
    if not doubted:
        return list(shown)
    return [
        Shown(item.candidate, item.snippet, UNCERTAIN)
        if not item.mark and check.states(item.snippet, doubted)
        else item
        for item in shown
    ]


def _cited(keys: Sequence[KeyFacts]) -> frozenset[str]:
    """The episodes the keys' facts and challengers cite: never judged by time."""
    return frozenset(
        episode
        for key in keys
        for fact in key.facts()
        for episode in (fact.source_episode_id, *(c.source_episode_id for c in fact.challengers))
    )
