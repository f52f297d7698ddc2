"""Context assembly: the smallest cited block a model needs for one read.

Pure: the chosen facts, the subject's value texts and the ranked evidence arrive from the read
path; here live only the block's rules (design section 5, read path steps 4-5). Facts decide
values; evidence only supports them, and a snippet stating a value no key of the subject holds
at the asked instant is never shown on a line that does not say ``superseded``
(``retrieval.stale`` has the rule, which holds whatever was routed).

The block spends tokens on content, not format::

    mira as of 2026-06-02:         <- only when a time was asked: the subject and the times
    passport_deadline: 2026-07-15 (from 2026-06-01 until 2026-06-03; source e1)
    home_city: not known
    Uncertain:
    - tier: gold (source e4) vs silver (source e5), disputed from 2026-06-01
    Evidence:
    [e1] Her passport deadline is 2026-07-15.
    [e0] superseded: Back in May she said it was 2026-08-01.

Instants print as dates; to the minute (``compact_time``) only where two instants of the block
fall on one day, the asked ones included. Each evidence line quotes the sentence of its episode
that states a value of a routed key (the clause, when the sentence is long), else the
sentences nearest the question; its citation is the episode id (``citations`` has the
episode's time). At most one superseded line is shown, and when evidence does not fit the
budget, superseded lines go first.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from retrieval.snippets import (
    clause_around,
    cut_at_word,
    one_line,
    split_sentences,
    trim_snippet,
)
from retrieval.stale import NO_VALUES, EvidenceCheck, SubjectValues, evidence_check
from store.models import Challenger, Fact
from store.times import format_timestamp
from store.values import display

StaleRule = Literal["mark", "drop"]
CitationRole = Literal["fact", "challenger", "evidence"]
Mode = Literal["current", "point_in_time", "known_at"]

_ROLE_RANK: dict[CitationRole, int] = {"fact": 0, "challenger": 1, "evidence": 2}

_MAX_QUOTE = 280  # as ``trim_snippet``'s default
UNVERIFIED_HEADING = "Evidence (unverified: no attribute matched the question):"


@dataclass(frozen=True)
class KeyFacts:
    """One asked key and the version valid at the read's time (None: not known)."""

    subject: str
    attribute: str
    fact: Fact | None


@dataclass(frozen=True)
class EvidenceCandidate:
    """An episode found for the question, with its text (the assembler quotes from it)."""

    episode_id: str
    occurred_at: datetime
    text: str
    score: float
    is_fact_source: bool = False


@dataclass(frozen=True)
class Assembled:
    """The block for one read and the structured parts it was built from."""

    block: str
    citations: list[dict[str, Any]]
    facts: list[Fact]
    evidence: list[dict[str, Any]]
    uncertain: list[dict[str, Any]]
    over_budget: bool
    tokens: int


@dataclass(frozen=True)
class _Shown:
    candidate: EvidenceCandidate
    when: str
    snippet: str
    superseded: bool

    @property
    def line(self) -> str:
        mark = "superseded: " if self.superseded else ""
        return f"[{self.candidate.episode_id}] {mark}{self.snippet}"


def assemble_context(
    *,
    keys: Sequence[KeyFacts],
    evidence: Sequence[EvidenceCandidate],
    valid_at: datetime,
    known_at: datetime,
    count_tokens: Callable[[str], int],
    subject: str | None = None,
    mode: Mode = "current",
    now: datetime | None = None,
    question: str = "",
    values: SubjectValues = NO_VALUES,
    evidence_k: int = 3,
    max_superseded: int = 1,
    token_budget: int = 512,
    stale: StaleRule = "mark",
    episode_times: Mapping[str, datetime] | None = None,
    unverified: bool = False,
) -> Assembled:
    """Assemble the cited block: key lines, uncertain keys, then evidence cut to the budget.

    ``values`` are the subject's value texts (``retrieval.stale.subject_values``); keys' facts
    count among them too, so a caller that passes none still gets the asked keys checked.
    There is a header only when a time was asked that differs from ``now`` (when given): it
    names the subject and the asked instants. A current read's block is its key lines alone.
    At most ``max_superseded`` lines marked superseded are shown (the most similar): one
    defuses the stale statement a model is likeliest to meet; more would only spend tokens.
    ``stale="drop"`` shows none.
    """
    _check_arguments(valid_at, known_at, evidence_k, token_budget, stale)
    if max_superseded < 0:
        raise ValueError("max_superseded must not be negative")
    asked = _distinct(keys)
    settled = [key for key in asked if key.fact is None or not key.fact.disputed]
    disputed = [key for key in asked if key.fact is not None and key.fact.disputed]

    when = _Instants.of(asked, valid_at, known_at)
    core = [
        line
        for line in (
            _header(subject, mode, valid_at=valid_at, known_at=known_at, now=now, when=when),
        )
        if line
    ]
    core.extend(_key_line(key, when) for key in settled)
    if disputed:
        core.append("Uncertain:")
        core.extend(_uncertain_line(key, when) for key in disputed)

    check = evidence_check(_with_keys(values, asked), routed=[key.attribute for key in asked])
    shown = _choose_evidence(
        evidence,
        asked,
        check=check,
        question=question,
        evidence_k=evidence_k,
        max_superseded=0 if stale == "drop" else max_superseded,
    )
    core_block = "\n".join(core)
    core_tokens = count_tokens(core_block)
    over_budget = core_tokens > token_budget
    kept: list[_Shown] = []
    block, tokens = core_block, core_tokens
    if not over_budget:
        for trial in _cuts(shown):
            lines = [item.line for item in trial]
            candidate_block = "\n".join([*core, _evidence_heading(unverified), *lines])
            candidate_tokens = count_tokens(candidate_block)
            if candidate_tokens <= token_budget:
                kept, block, tokens = trial, candidate_block, candidate_tokens
                break

    times = _episode_times(evidence, episode_times)
    return Assembled(
        block=block,
        citations=_citations(settled, disputed, kept, times),
        facts=[key.fact for key in asked if key.fact is not None],
        evidence=[_evidence_entry(item, unverified=unverified) for item in kept],
        uncertain=[_uncertain_entry(key) for key in disputed],
        over_budget=over_budget,
        tokens=tokens,
    )


def compact_time(value: datetime) -> str:
    """An instant as the block prints it: a date at midnight, minutes when seconds are zero."""
    text = _when(value)
    if text.endswith("T00:00:00Z"):
        return text[:10]
    if text.endswith(":00Z") and len(text) == len("2026-06-03T10:00:00Z"):
        return text[:-4] + "Z"
    return text


def _cuts(shown: Sequence[_Shown]) -> list[list[_Shown]]:
    """Evidence sets to try, largest first: superseded lines go before the others, last first."""
    if not shown:
        return []
    trials = [list(shown)]
    current = list(shown)
    while current:
        marked = [i for i, item in enumerate(current) if item.superseded]
        drop = marked[-1] if marked else len(current) - 1
        current = current[:drop] + current[drop + 1 :]
        if current:
            trials.append(current)
    return trials


def _with_keys(values: SubjectValues, keys: Sequence[KeyFacts]) -> SubjectValues:
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


@dataclass(frozen=True)
class _Instants:
    """How the block prints instants: a date, unless another instant of the block (the asked
    ones included) falls on the same day; then to the minute (``compact_time``)."""

    crowded: frozenset[str]

    @classmethod
    def of(cls, keys: Sequence[KeyFacts], *asked: datetime) -> _Instants:
        instants = [*asked]
        for key in keys:
            if key.fact is not None:
                instants.append(key.fact.valid_from)
                if key.fact.valid_to is not None:
                    instants.append(key.fact.valid_to)
        days = [_when(instant)[:10] for instant in dict.fromkeys(instants)]
        return cls(frozenset(day for day in days if days.count(day) > 1))

    def __call__(self, instant: datetime) -> str:
        text = compact_time(instant)
        return text if text[:10] in self.crowded else text[:10]


def _header(
    subject: str | None,
    mode: Mode,
    *,
    valid_at: datetime,
    known_at: datetime,
    now: datetime | None,
    when: _Instants,
) -> str:
    asked = [
        f"as of {when(valid_at)}" if mode != "current" and valid_at != now else "",
        f"as known on {when(known_at)}" if mode == "known_at" and known_at != now else "",
    ]
    if mode == "known_at" and valid_at == known_at and known_at != now:
        asked = [f"as known on {when(known_at)}"]  # what was believed then about then
    times = ", ".join(part for part in asked if part)
    if not times:
        return ""
    return f"{subject} {times}:" if subject else f"{times[0].upper()}{times[1:]}:"


def _check_arguments(
    valid_at: datetime, known_at: datetime, evidence_k: int, token_budget: int, stale: str
) -> None:
    """Refuse arguments no block can be built from."""
    _when(valid_at)
    _when(known_at)
    if evidence_k < 0:
        raise ValueError("evidence_k must not be negative")
    if token_budget < 0:
        raise ValueError("token_budget must not be negative")
    if stale not in ("mark", "drop"):
        raise ValueError("stale must be 'mark' or 'drop'")


def _when(value: datetime) -> str:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{value.isoformat()} has no UTC offset")
    return format_timestamp(value)


def _distinct(keys: Sequence[KeyFacts]) -> list[KeyFacts]:
    seen: set[tuple[str, str]] = set()
    distinct: list[KeyFacts] = []
    for key in keys:
        if (key.subject, key.attribute) not in seen:
            seen.add((key.subject, key.attribute))
            distinct.append(key)
    return distinct


def _window(fact: Fact, when: _Instants) -> str:
    until = "" if fact.valid_to is None else f" until {when(fact.valid_to)}"
    return f"from {when(fact.valid_from)}{until}"


def _value(value: Any) -> str:
    return one_line(display(value))


def _key_line(key: KeyFacts, when: _Instants) -> str:
    if key.fact is None:
        return f"{key.attribute}: not known"
    fact = key.fact
    source = fact.source_episode_id
    return f"{key.attribute}: {_value(fact.value)} ({_window(fact, when)}; source {source})"


def _uncertain_line(key: KeyFacts, when: _Instants) -> str:
    fact = key.fact
    assert fact is not None
    sides = [f"{_value(fact.value)} (source {fact.source_episode_id})"] + [
        f"{_value(challenger.value)} (source {challenger.source_episode_id})"
        for challenger in fact.challengers
    ]
    return f"- {key.attribute}: {' vs '.join(sides)}, disputed {_window(fact, when)}"


def _choose_evidence(
    candidates: Sequence[EvidenceCandidate],
    keys: Sequence[KeyFacts],
    *,
    check: EvidenceCheck,
    question: str,
    evidence_k: int,
    max_superseded: int,
) -> list[_Shown]:
    sources = {key.fact.source_episode_id for key in keys if key.fact is not None}

    def rank(position: int) -> tuple[bool, float, int]:
        candidate = candidates[position]
        is_source = candidate.is_fact_source or candidate.episode_id in sources
        score = candidate.score if math.isfinite(candidate.score) else -math.inf
        return (not is_source, -score, position)

    shown: list[_Shown] = []
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
        shown.append(
            _Shown(
                candidate=candidate,
                when=_when(candidate.occurred_at),
                snippet=snippet,
                superseded=verdict == "superseded",
            )
        )
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


def _episode_times(
    candidates: Sequence[EvidenceCandidate], given: Mapping[str, datetime] | None
) -> dict[str, str]:
    times: dict[str, str] = {}
    for candidate in candidates:
        times.setdefault(candidate.episode_id, _when(candidate.occurred_at))
    for episode_id, occurred_at in (given or {}).items():
        times[episode_id] = _when(occurred_at)
    return times


def _citations(
    settled: Sequence[KeyFacts],
    disputed: Sequence[KeyFacts],
    kept: Sequence[_Shown],
    times: Mapping[str, str],
) -> list[dict[str, Any]]:
    cited: list[tuple[str, CitationRole]] = []
    for key in settled:
        if key.fact is not None:
            cited.append((key.fact.source_episode_id, "fact"))
    for key in disputed:
        assert key.fact is not None
        cited.append((key.fact.source_episode_id, "fact"))
        cited.extend((c.source_episode_id, "challenger") for c in key.fact.challengers)
    cited.extend((item.candidate.episode_id, "evidence") for item in kept)

    roles: dict[str, CitationRole] = {}
    for episode_id, role in cited:
        held = roles.get(episode_id)
        if held is None or _ROLE_RANK[role] < _ROLE_RANK[held]:
            roles[episode_id] = role
    return [
        {"episode_id": episode_id, "occurred_at": times.get(episode_id), "role": role}
        for episode_id, role in roles.items()
    ]


def _evidence_heading(unverified: bool) -> str:
    return UNVERIFIED_HEADING if unverified else "Evidence:"


def _evidence_entry(item: _Shown, *, unverified: bool) -> dict[str, Any]:
    return {
        "episode_id": item.candidate.episode_id,
        "occurred_at": item.when,
        "snippet": item.snippet,
        "score": item.candidate.score,
        "superseded": item.superseded,
        "unverified": unverified,
    }


def _challenger_entry(challenger: Challenger) -> dict[str, Any]:
    return {
        "conflict_id": str(challenger.conflict_id),
        "value": challenger.value,
        "source_episode_id": challenger.source_episode_id,
        "source_kind": challenger.source_kind,
        "evidence": challenger.evidence,
        "evidence_verified": challenger.evidence_verified,
    }


def _uncertain_entry(key: KeyFacts) -> dict[str, Any]:
    fact = key.fact
    assert fact is not None
    return {
        "subject": key.subject,
        "attribute": key.attribute,
        "incumbent": {
            "fact_id": str(fact.fact_id),
            "value": fact.value,
            "valid_from": _when(fact.valid_from),
            "valid_to": None if fact.valid_to is None else _when(fact.valid_to),
            "source_episode_id": fact.source_episode_id,
            "source_kind": fact.source_kind,
        },
        "challengers": [_challenger_entry(challenger) for challenger in fact.challengers],
    }
