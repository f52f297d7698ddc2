"""One evidence line: which sentences of its episode it quotes, and how it is marked. Pure.

The rules are ``retrieval.context.evidence_lines``'s: supporting sentences first, else one of
another period marked with what it is, else the sentences nearest the question; a line that
states no known value, from an episode about a shown key, is judged by time (older than the
value, newer than memory, or as it is). The sentences' verdicts are ``retrieval.context.stale``'s.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from retrieval.context.block_inputs import EvidenceCandidate, KeyFacts
from retrieval.context.marks import NEWER, older_than
from retrieval.context.snippets import (
    clause_around,
    cut_at_word,
    overlap,
    query_terms,
    split_sentences,
)
from retrieval.context.stale import EvidenceCheck, Verdict, Window
from store.contract.common import fold_name
from store.contract.labels import DISPUTED, IN_CONFLICT, SUPERSEDED
from store.contract.values import display

_MAX_QUOTE = 280  # as ``trim_snippet``'s default
_MAX_SENTENCES = 2
When = Callable[[datetime], str]
"""How the block prints an instant (``retrieval.context.block.Instants``)."""


@dataclass(frozen=True)
class Line:
    """One line as judged: its quote, its mark ("" for none), the keys it puts in doubt as
    newer than memory, and whether it is left out."""

    snippet: str
    mark: str
    newer_for: tuple[str, ...] = ()
    left_out: bool = False


def quote_line(
    candidate: EvidenceCandidate,
    keys: Sequence[KeyFacts],
    *,
    check: EvidenceCheck,
    question: str,
    cited: frozenset[str],
    when: When,
) -> Line:
    sentences = split_sentences(candidate.text)
    verdicts = {sentence: check.verdict(sentence) for sentence in sentences}
    states = check.states_routed_holding if check.routed else check.states_holding
    support = [s for s in sentences if verdicts[s] in ("holds", "disputed") and states(s)]
    if support:
        mark = DISPUTED if any(verdicts[s] == "disputed" for s in support) else ""
        return Line(_supporting(support[:_MAX_SENTENCES], check), mark)
    stale = [s for s in sentences if verdicts[s] in ("superseded", "in_conflict")]
    if stale:
        best = stale[0]
        return Line(_supporting([best], check), _stale_mark(verdicts[best], check, best, when))
    clean = [s for s in sentences if verdicts[s] == "holds"]
    if not clean:
        return Line("", "", left_out=True)
    snippet = _nearest(sentences, verdicts, question)
    if candidate.episode_id in cited or candidate.is_fact_source:
        return Line(snippet, "")
    return _judged_by_time(candidate, keys, snippet, sentences, check=check, when=when)


def _judged_by_time(
    candidate: EvidenceCandidate,
    keys: Sequence[KeyFacts],
    snippet: str,
    sentences: Sequence[str],
    *,
    check: EvidenceCheck,
    when: When,
) -> Line:
    """A line stating no known value, from an episode about shown keys: older, newer, or as
    it is (about none of them)."""
    about = [key for key in keys if key.attribute in candidate.about]
    if not about:
        return Line(snippet, "")
    if any(key.fact is None for key in about):
        return Line(snippet, "", left_out=True)
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
            return Line(snippet, "", left_out=True)
    newer = [name for name in newer if _may_state_value(sentences, _key(about, name), check)]
    if newer:
        return Line(snippet, NEWER, newer_for=tuple(newer))
    if older:
        return Line(snippet, older_than(when(max(older))))
    return Line(snippet, "")


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


def _stale_mark(verdict: Verdict, check: EvidenceCheck, sentence: str, when: When) -> str:
    if verdict == "in_conflict":
        return IN_CONFLICT
    windows = check.stale_windows(sentence)
    if not windows:
        return SUPERSEDED
    return f"{SUPERSEDED} ({'; '.join(_window(window, when) for window in windows)})"


def _window(window: Window, when: When) -> str:
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
