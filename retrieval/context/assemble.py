"""Context assembly: the smallest cited block a model needs for one read.

Pure: the chosen facts, the subject's value texts and the ranked evidence arrive from the read
path; here live only the block's rules (design section 5, read path steps 4-5). Facts decide
values; evidence only supports them, and a snippet stating a value no key of the subject holds
at the asked instant is never shown on a line without a mark (``retrieval.context.marks``):
``superseded`` with the period the value held, or ``in conflict`` for a challenger that did
not win (``retrieval.context.stale`` has the rule, which holds whatever was routed). A key that an
episode newer than its value puts in doubt (``retrieval.context.evidence_lines``) goes under
"Uncertain:" with the episodes named.

The block spends tokens on content, not format::

    mira as of 2026-06-02:         <- only when a time was asked: the subject and the times
    passport_deadline: 2026-07-15 (from 2026-06-01 until 2026-06-03; source e1)
    home_city: not known
    Uncertain:
    - tier: gold (source e4) vs silver (source e5), disputed from 2026-06-01
    - employer: Statoil (source e6); newer evidence e9 may change it
    Evidence:
    [e1] Her passport deadline is 2026-07-15.
    [e0] superseded (from 2026-05-01 until 2026-06-01): Back in May she said 2026-08-01.
    [e9] newer than memory: In June she moved to a new job.

The lines themselves are ``retrieval.context.block``'s; which evidence is shown and what it quotes,
``retrieval.context.evidence_lines``'; the cut to the token budget, ``retrieval.context.budget``'s;
the citations (each evidence line's citation is its episode id, ``citations`` has the episode's
time), ``retrieval.context.citations``'.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from retrieval.context.block import (
    Instants,
    evidence_heading,
    header,
    key_line,
    key_lines,
    uncertain_line,
    utc_text,
)
from retrieval.context.block_inputs import EvidenceCandidate, KeyFacts
from retrieval.context.budget import fit_to_budget
from retrieval.context.citations import citation_times, citations
from retrieval.context.evidence_lines import choose_evidence, with_keys
from retrieval.context.snippets import one_line
from retrieval.context.stale import NO_VALUES, SubjectValues, evidence_check
from store.contract.facts import Fact
from store.contract.reads import Citation, ContextEvidence, Incumbent, Mode, UncertainKey
from store.contract.values import display
from store.subjects.reads import ValidRange

__all__ = ["Assembled", "EvidenceCandidate", "KeyFacts", "StaleRule", "assemble_context"]

StaleRule = Literal["mark", "drop"]


@dataclass(frozen=True)
class Assembled:
    """The block for one read and the structured parts it was built from."""

    block: str
    citations: list[Citation]
    facts: list[Fact]
    evidence: list[ContextEvidence]
    uncertain: list[UncertainKey]
    over_budget: bool
    tokens: int


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
    period: ValidRange | None = None,
    unsure_subject: str | None = None,
) -> Assembled:
    """Assemble the cited block: key lines, uncertain keys, then evidence cut to the budget.

    ``values`` are the subject's value texts (``retrieval.context.stale.subject_values``); keys'
    facts count among them too, so a caller that passes none still gets the asked keys checked.
    There is a header only when a time was asked that differs from ``now`` (when given): it names
    the subject and the asked instants. A current read's block is its key lines alone. At most
    ``max_superseded`` lines marked superseded are shown (the most similar): one defuses the stale
    statement a model is likeliest to meet; more would only spend tokens. ``stale="drop"`` shows
    none. A period read (mode ``period``, with its ``period``) shows every version of a key valid in
    it (``KeyFacts.earlier``), one line each, and its header names the period. ``unsure_subject`` is
    a line saying which subjects the question's name may mean when none was chosen; it goes under
    "Uncertain:".
    """
    _check_arguments(valid_at, known_at, evidence_k, token_budget, stale)
    if max_superseded < 0:
        raise ValueError("max_superseded must not be negative")
    asked = _distinct(keys)
    bounds = [end for end in period or () if end is not None]
    when = Instants.of(asked, *(bounds or [valid_at]), known_at)
    check = evidence_check(
        with_keys(values, asked) if evidence else NO_VALUES, routed=[key.attribute for key in asked]
    )
    chosen = choose_evidence(
        evidence,
        asked,
        check=check,
        question=question,
        evidence_k=evidence_k,
        max_superseded=0 if stale == "drop" else max_superseded,
        when=when,
    )
    newer = {
        key.attribute: chosen.newer[key.attribute]
        for key in asked
        if key.fact is not None and key.attribute in chosen.newer
    }
    settled = [key for key in asked if key.fact is None or not key.fact.disputed]
    doubted = [key for key in settled if key.attribute in newer]
    settled = [key for key in settled if key.attribute not in newer]
    disputed = [key for key in asked if key.fact is not None and key.fact.disputed]

    first = header(
        subject, mode, valid_at=valid_at, known_at=known_at, now=now, when=when, period=period
    )
    core = [first] if first else []
    for key in asked:  # an uncertain key's earlier versions in the period are settled lines
        if key in settled:
            core.extend(key_lines(key, when))
        else:
            core.extend(
                key_line(KeyFacts(key.subject, key.attribute, f), when) for f in key.earlier
            )
    if disputed or doubted or unsure_subject:
        core.append("Uncertain:")
        core.extend([unsure_subject] if unsure_subject else [])
        core.extend(
            _with_newer(uncertain_line(key, when), newer.get(key.attribute)) for key in disputed
        )
        core.extend(_newer_line(key, newer[key.attribute]) for key in doubted)

    fitted = fit_to_budget(
        core,
        chosen.shown,
        heading=evidence_heading(unverified),
        token_budget=token_budget,
        count_tokens=count_tokens,
    )
    times = citation_times(evidence, episode_times)
    return Assembled(
        block=fitted.block,
        citations=citations(
            [key for key in asked if key not in disputed],
            disputed,
            kept=fitted.kept,
            times=times,
            newer=[episode for episodes in newer.values() for episode in episodes],
        ),
        facts=[fact for key in asked for fact in key.facts()],
        evidence=[
            ContextEvidence(
                episode_id=item.candidate.episode_id,
                occurred_at=item.candidate.occurred_at,
                snippet=item.snippet,
                score=item.candidate.score,
                superseded=item.superseded,
                unverified=unverified,
                mark=item.mark or None,
            )
            for item in fitted.kept
        ],
        uncertain=[
            _uncertain(key, newer.get(key.attribute))
            for key in asked
            if key in disputed or key in doubted
        ],
        over_budget=fitted.over_budget,
        tokens=fitted.tokens,
    )


def _newer_line(key: KeyFacts, episodes: Sequence[str]) -> str:
    """A key later evidence may change, under "Uncertain:"."""
    fact = key.fact
    assert fact is not None
    return _with_newer(
        f"- {key.attribute}: {one_line(display(fact.value))} (source {fact.source_episode_id})",
        episodes,
    )


def _with_newer(line: str, episodes: Sequence[str] | None) -> str:
    if not episodes:
        return line
    return f"{line}; newer evidence {', '.join(episodes)} may change it"


def _uncertain(key: KeyFacts, newer: Sequence[str] | None) -> UncertainKey:
    fact = key.fact
    assert fact is not None
    return UncertainKey(
        subject=key.subject,
        attribute=key.attribute,
        incumbent=Incumbent.model_validate(fact, from_attributes=True),
        challengers=fact.challengers,
        newer_evidence=list(newer) if newer else None,
    )


def _check_arguments(
    valid_at: datetime, known_at: datetime, evidence_k: int, token_budget: int, stale: str
) -> None:
    """Refuse arguments no block can be built from."""
    utc_text(valid_at)
    utc_text(known_at)
    if evidence_k < 0:
        raise ValueError("evidence_k must not be negative")
    if token_budget < 0:
        raise ValueError("token_budget must not be negative")
    if stale not in ("mark", "drop"):
        raise ValueError("stale must be 'mark' or 'drop'")


def _distinct(keys: Sequence[KeyFacts]) -> list[KeyFacts]:
    seen: set[tuple[str, str]] = set()
    distinct: list[KeyFacts] = []
    for key in keys:
        if (key.subject, key.attribute) not in seen:
            seen.add((key.subject, key.attribute))
            distinct.append(key)
    return distinct
