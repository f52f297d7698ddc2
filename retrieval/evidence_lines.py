"""Which evidence lines a block shows, and what each quotes of its episode. Pure.

The chosen facts' own sources come first, in the order of their keys; then the other episodes,
most similar first. A line that states a value no key holds at the asked instant is marked
superseded (at most ``max_superseded`` of them), and a line judged ambiguous or off topic by
``retrieval.stale`` is left out. Each line quotes the sentence of its episode that states a
value of a routed key (the clause, when the sentence is long), else the sentences nearest the
question.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from retrieval.block_inputs import EvidenceCandidate, KeyFacts
from retrieval.snippets import clause_around, cut_at_word, split_sentences, trim_snippet
from retrieval.stale import EvidenceCheck, SubjectValues
from store.values import display

_MAX_QUOTE = 280  # as ``trim_snippet``'s default


@dataclass(frozen=True)
class Shown:
    """An evidence line the block may show: its episode, its quote, and whether it is stale."""

    candidate: EvidenceCandidate
    snippet: str
    superseded: bool

    @property
    def line(self) -> str:
        """The line as the block prints it, cited by episode id."""
        mark = "superseded: " if self.superseded else ""
        return f"[{self.candidate.episode_id}] {mark}{self.snippet}"


def with_keys(values: SubjectValues, keys: Sequence[KeyFacts]) -> SubjectValues:
    """``values`` plus the asked keys' own facts and challengers (holding at the instant)."""
    holding = {name: tuple(texts) for name, texts in values.holding.items()}
    ever = {name: tuple(texts) for name, texts in values.ever.items()}
    for key in keys:
        if key.fact is None:
            continue
        texts = [display(key.fact.value), *(display(c.value) for c in key.fact.challengers)]
        holding[key.attribute] = tuple(dict.fromkeys([*holding.get(key.attribute, ()), *texts]))
        ever[key.attribute] = tuple(dict.fromkeys([*ever.get(key.attribute, ()), *texts]))
    return SubjectValues(holding=holding, ever=ever)


def choose_evidence(
    candidates: Sequence[EvidenceCandidate],
    keys: Sequence[KeyFacts],
    *,
    check: EvidenceCheck,
    question: str,
    evidence_k: int,
    max_superseded: int,
) -> list[Shown]:
    """At most ``evidence_k`` lines, fact sources first, one per episode."""
    sources: dict[str, int] = {}
    for key in keys:
        if key.fact is not None:
            sources.setdefault(key.fact.source_episode_id, len(sources))

    def rank(position: int) -> tuple[int, float, int]:
        candidate = candidates[position]
        if candidate.episode_id in sources or candidate.is_fact_source:
            return (0, sources.get(candidate.episode_id, len(sources)), position)
        score = candidate.score if math.isfinite(candidate.score) else -math.inf
        return (1, -score, position)

    shown: list[Shown] = []
    seen: set[str] = set()
    for position in sorted(range(len(candidates)), key=rank):
        if len(shown) >= evidence_k:
            break
        candidate = candidates[position]
        snippet = quote(candidate.text, question=question, check=check)
        if not snippet or candidate.episode_id in seen:
            continue
        verdict = check.verdict(snippet)
        marked = sum(item.superseded for item in shown)
        if verdict in ("ambiguous", "off_topic") or (
            verdict == "superseded" and marked >= max_superseded
        ):
            continue
        seen.add(candidate.episode_id)
        shown.append(Shown(candidate, snippet, superseded=verdict == "superseded"))
    return shown


def quote(text: str, *, question: str, check: EvidenceCheck, long_sentence: int = 160) -> str:
    """What an evidence line shows of an episode: the sentence stating a value of the subject
    (its clause, when the sentence is longer than ``long_sentence``), else the question's best
    sentences."""
    spans = {sentence: check.value_spans(sentence) for sentence in split_sentences(text)}
    stating = [sentence for sentence, found in spans.items() if found]
    if not stating:
        return trim_snippet(text, question)
    best = next((s for s in stating if check.states_routed_holding(s)), stating[0])
    if len(best) <= long_sentence or len(best.casefold()) != len(best):
        return cut_at_word(best, _MAX_QUOTE)
    return clause_around(best, spans[best][0], max_chars=long_sentence)
