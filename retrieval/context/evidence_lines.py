"""Which evidence lines a block shows, and what each quotes of its episode. Pure.

The chosen facts' own sources come first, in the order of their keys; then the other episodes,
most similar first. Each line quotes sentences of its episode, judged one by one
(``retrieval.context.stale``):

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

import calendar
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from retrieval.context.block_inputs import EvidenceCandidate, KeyFacts
from retrieval.context.marks import NEWER, OLDER, UNCERTAIN, older_than
from retrieval.context.snippets import (
    clause_around,
    cut_at_word,
    overlap,
    query_terms,
    split_sentences,
)
from retrieval.context.stale import EvidenceCheck, SubjectValues, Verdict, Window, challengers
from store.contract.labels import DISPUTED, IN_CONFLICT, SUPERSEDED
from store.contract.names import fold_name
from store.contract.values import display

_MAX_QUOTE = 280  # as ``trim_snippet``'s default
_MAX_SENTENCES = 2
_STALE_MARKS = (SUPERSEDED, IN_CONFLICT, OLDER)
_When = Callable[[datetime], str]
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


@dataclass(frozen=True)
class _Line:
    snippet: str
    mark: str
    newer_for: tuple[str, ...] = ()
    left_out: bool = False


def choose_evidence(
    candidates: Sequence[EvidenceCandidate],
    keys: Sequence[KeyFacts],
    *,
    check: EvidenceCheck,
    question: str,
    evidence_k: int,
    max_superseded: int,
    when: _When,
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
        line = _line(candidate, keys, check=check, question=question, cited=cited, when=when)
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


def _line(
    candidate: EvidenceCandidate,
    keys: Sequence[KeyFacts],
    *,
    check: EvidenceCheck,
    question: str,
    cited: frozenset[str],
    when: _When,
) -> _Line:
    sentences = split_sentences(candidate.text)
    verdicts = {sentence: check.verdict(sentence) for sentence in sentences}
    states = check.states_routed_holding if check.routed else check.states_holding
    support = [s for s in sentences if verdicts[s] in ("holds", "disputed") and states(s)]
    if support:
        mark = DISPUTED if any(verdicts[s] == "disputed" for s in support) else ""
        return _Line(_supporting(support[:_MAX_SENTENCES], check), mark)
    stale = [s for s in sentences if verdicts[s] in ("superseded", "in_conflict")]
    if stale:
        best = stale[0]
        return _Line(_supporting([best], check), _stale_mark(verdicts[best], check, best, when))
    clean = [s for s in sentences if verdicts[s] == "holds"]
    if not clean:
        return _Line("", "", left_out=True)
    snippet = _nearest(sentences, verdicts, question)
    if candidate.episode_id in cited or candidate.is_fact_source:
        return _Line(snippet, "")
    return _judged_by_time(candidate, keys, snippet, sentences, check=check, when=when)


def _judged_by_time(
    candidate: EvidenceCandidate,
    keys: Sequence[KeyFacts],
    snippet: str,
    sentences: Sequence[str],
    *,
    check: EvidenceCheck,
    when: _When,
) -> _Line:
    """A line stating no known value, from an episode about shown keys: older, newer, or as
    it is (about none of them)."""
    about = [key for key in keys if key.attribute in candidate.about]
    if not about:
        return _Line(snippet, "")
    if any(key.fact is None for key in about):
        return _Line(snippet, "", left_out=True)
    newer: list[str] = []
    older: list[datetime] = []
    for key in about:
        fact = key.fact
        assert fact is not None
        sides = [
            text
            for shown in key.facts()
            for text in (display(shown.value), *(display(c.value) for c in shown.challengers))
        ]
        if any(check.states(sentence, sides) for sentence in sentences):
            continue
        occurred = candidate.occurred_at
        if occurred < fact.valid_from:
            older.append(fact.valid_from)
        elif fact.valid_to is None or occurred < fact.valid_to:
            newer.append(key.attribute)
        else:  # after the shown value ended: of a later time the store knows no value of
            return _Line(snippet, "", left_out=True)
    newer = [name for name in newer if _may_state_value(sentences, _key(about, name), check)]
    if newer:
        return _Line(snippet, NEWER, newer_for=tuple(newer))
    if older:
        return _Line(snippet, older_than(when(max(older))))
    return _Line(snippet, "")


_WORD = re.compile(r"[^\W\d_][\w'\u2019]*")
_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")
_YEAR = re.compile(r"1\d{3}|2\d{3}")
_LINKS = frozenset({"of", "the", "and", "for", "to", "in", "on", "at", "a", "an"})
_CALENDAR = frozenset(
    name.casefold()
    for names in (calendar.month_name, calendar.month_abbr, calendar.day_name)
    for name in names
    if name
)


def _key(keys: Sequence[KeyFacts], attribute: str) -> KeyFacts:
    return next(key for key in keys if key.attribute == attribute)


def _may_state_value(sentences: Sequence[str], key: KeyFacts, check: EvidenceCheck) -> bool:
    """Whether an episode could state a value of the key that the store does not hold: one
    of its sentences that states none of the subject's known values holds a number other
    than a bare year, a word of the key's attribute name ("plan" for ``plan``), or a
    capitalised word past its first that is neither the subject's own name (a word of its id,
    or its initials) nor a month or a weekday. "Zofia prefers concise answers." and "The BRC
    is a sports club." state none, so neither puts a key in doubt, however close its vector is
    to the key's texts; nor does "Zofia pays for 580 seats.", which states a value the store
    holds for another key."""
    subject = fold_name(key.subject.replace("_", " ")).split()
    own = {*subject, "".join(w[0] for w in subject)}
    own.add("".join(w[0] for w in subject if w not in _LINKS))
    named = {w for w in key.attribute.casefold().split("_") if len(w) > 2 and w not in _LINKS}
    for sentence in sentences:
        if check.value_spans(sentence):
            continue  # explained by what the store holds
        if any(not _YEAR.fullmatch(number) for number in _NUMBER.findall(sentence)):
            return True
        for position, word in enumerate(_WORD.findall(sentence)):
            folded = fold_name(word)
            if folded in named or folded.removesuffix("s") in named:
                return True
            if position and word[0].isupper() and folded not in own | _CALENDAR:
                return True
    return False


def _stale_mark(verdict: Verdict, check: EvidenceCheck, sentence: str, when: _When) -> str:
    if verdict == "in_conflict":
        return IN_CONFLICT
    windows = check.stale_windows(sentence)
    if not windows:
        return SUPERSEDED
    return f"{SUPERSEDED} ({'; '.join(_window(window, when) for window in windows)})"


def _window(window: Window, when: _When) -> str:
    start, end = window
    return f"from {when(start)}" + ("" if end is None else f" until {when(end)}")


def _supporting(sentences: Sequence[str], check: EvidenceCheck, long_sentence: int = 160) -> str:
    """The quote of sentences that state values: a long single one is cut to its clause."""
    if len(sentences) == 1:
        best = sentences[0]
        spans = check.value_spans(best)
        if len(best) > long_sentence and spans:
            return clause_around(best, spans[0], max_chars=long_sentence)
    return cut_at_word(" ".join(sentences), _MAX_QUOTE)


def _nearest(sentences: Sequence[str], verdicts: Mapping[str, Verdict], question: str) -> str:
    """The run of at most two consecutive sentences that state no other-period value and share
    most words with the question (the earliest on a tie), cut to ``_MAX_QUOTE``."""
    terms = query_terms(question)
    clean = [verdicts[sentence] == "holds" for sentence in sentences]
    windows: list[str] = []
    for index, sentence in enumerate(sentences):
        if not clean[index]:
            continue
        if index + 1 < len(sentences) and clean[index + 1]:
            windows.append(f"{sentence} {sentences[index + 1]}")
        elif index == 0 or not clean[index - 1]:
            windows.append(sentence)  # a clean sentence between two that are not
    if not windows:
        return ""
    best = max(range(len(windows)), key=lambda i: (overlap(windows[i], terms), -i))
    return cut_at_word(windows[best], _MAX_QUOTE)
