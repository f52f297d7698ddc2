"""Context assembly: the smallest cited block a model needs for one read.

Pure: the chosen facts, the text of their keys' other versions and the ranked evidence arrive
from the read path; here live only the block's rules (design section 5, read path steps 4-5).
Facts decide values; evidence only supports them, and a snippet stating another version's value
is never shown on a line that does not say ``superseded``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from retrieval.snippets import one_line, value_pattern
from store.models import Challenger, Fact
from store.times import format_timestamp
from store.values import display

StaleRule = Literal["mark", "drop"]
CitationRole = Literal["fact", "challenger", "evidence"]

_ROLE_RANK: dict[CitationRole, int] = {"fact": 0, "challenger": 1, "evidence": 2}
_MASK = "\x00"

UNVERIFIED_NOTE = "No declared attribute matches the question; the evidence below is unverified."


@dataclass(frozen=True)
class KeyFacts:
    """One asked key: the version valid at the read's time and its other versions' value text."""

    subject: str
    attribute: str
    fact: Fact | None
    other_values: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The key as the block names it: ``subject.attribute``."""
        return f"{self.subject}.{self.attribute}"


@dataclass(frozen=True)
class EvidenceCandidate:
    """An episode found for the question, with its snippet already trimmed."""

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
        return f"- [{self.candidate.episode_id}, {self.when}] {mark}{self.snippet}"


@dataclass(frozen=True)
class StaleCheck:
    """One key's stale rule: mask its chosen value's text, then search its other values' text."""

    own: re.Pattern[str] | None
    others: tuple[re.Pattern[str], ...]

    def finds(self, folded: str) -> bool:
        """Whether the case-folded one-line text states one of the key's other values."""
        text = folded if self.own is None else self.own.sub(_MASK, folded)
        return any(pattern.search(text) for pattern in self.others)


def assemble_context(
    *,
    keys: Sequence[KeyFacts],
    evidence: Sequence[EvidenceCandidate],
    valid_at: datetime,
    known_at: datetime,
    evidence_k: int = 3,
    token_budget: int = 512,
    count_tokens: Callable[[str], int],
    stale: StaleRule = "mark",
    episode_times: Mapping[str, datetime] | None = None,
    unverified: bool = False,
) -> Assembled:
    """Assemble the cited block: key lines, uncertain keys, then evidence cut to the budget."""
    _check_arguments(valid_at, known_at, evidence_k, token_budget, stale)
    asked = _distinct(keys)
    settled = [key for key in asked if key.fact is None or not key.fact.disputed]
    disputed = [key for key in asked if key.fact is not None and key.fact.disputed]

    core = [f"Facts valid at {_when(valid_at)}, known at {_when(known_at)}:"]
    if unverified:
        core.append(UNVERIFIED_NOTE)
    core.extend(_key_line(key) for key in settled)
    if disputed:
        core.append("Uncertain:")
        core.extend(_uncertain_line(key) for key in disputed)

    shown = _choose_evidence(evidence, asked, evidence_k=evidence_k, stale=stale)
    core_block = "\n".join(core)
    core_tokens = count_tokens(core_block)
    over_budget = core_tokens > token_budget
    kept: list[_Shown] = []
    block, tokens = core_block, core_tokens
    if not over_budget:
        for count in range(len(shown), 0, -1):
            lines = [s.line for s in shown[:count]]
            candidate_block = "\n".join([*core, _evidence_heading(unverified), *lines])
            candidate_tokens = count_tokens(candidate_block)
            if candidate_tokens <= token_budget:
                kept, block, tokens = shown[:count], candidate_block, candidate_tokens
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


def stale_checks(keys: Sequence[KeyFacts]) -> list[StaleCheck]:
    """Per key, the patterns of its other versions' values that differ from its chosen value."""
    checks: list[StaleCheck] = []
    for key in keys:
        own_text = "" if key.fact is None else display(key.fact.value)
        own = value_pattern(own_text)
        others: list[re.Pattern[str]] = []
        for text in key.other_values:
            pattern = value_pattern(text)
            if pattern is None or (own is not None and pattern.pattern == own.pattern):
                continue
            if pattern.pattern not in {known.pattern for known in others}:
                others.append(pattern)
        if others:
            checks.append(StaleCheck(own=own, others=tuple(others)))
    return checks


def is_stale(snippet: str, checks: Sequence[StaleCheck]) -> bool:
    """Whether the snippet states another version's value of any asked key."""
    folded = one_line(snippet).casefold()
    return any(check.finds(folded) for check in checks)


def _check_arguments(
    valid_at: datetime, known_at: datetime, evidence_k: int, token_budget: int, stale: str
) -> None:
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


def _window(fact: Fact) -> str:
    until = "" if fact.valid_to is None else f" until {_when(fact.valid_to)}"
    return f"valid from {_when(fact.valid_from)}{until}"


def _value(value: Any) -> str:
    return one_line(display(value))


def _key_line(key: KeyFacts) -> str:
    if key.fact is None:
        return f"{key.name}: not known"
    fact = key.fact
    return f"{key.name}: {_value(fact.value)} ({_window(fact)}; source {fact.source_episode_id})"


def _uncertain_line(key: KeyFacts) -> str:
    fact = key.fact
    assert fact is not None
    incumbent = f"{_value(fact.value)} (incumbent; source {fact.source_episode_id})"
    sides = [incumbent] + [
        f"{_value(challenger.value)} (challenger; source {challenger.source_episode_id})"
        for challenger in fact.challengers
    ]
    return f"- {key.name} ({_window(fact)}, disputed): {' vs '.join(sides)}"


def _choose_evidence(
    candidates: Sequence[EvidenceCandidate],
    keys: Sequence[KeyFacts],
    *,
    evidence_k: int,
    stale: StaleRule,
) -> list[_Shown]:
    sources = {key.fact.source_episode_id for key in keys if key.fact is not None}
    checks = stale_checks(keys)

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
        snippet = one_line(candidate.text)
        if not snippet or candidate.episode_id in seen:
            continue
        when = _when(candidate.occurred_at)
        superseded = is_stale(snippet, checks)
        if superseded and stale == "drop":
            continue
        seen.add(candidate.episode_id)
        shown.append(_Shown(candidate=candidate, when=when, snippet=snippet, superseded=superseded))
    return shown


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
    return "Evidence (unverified):" if unverified else "Evidence:"


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
