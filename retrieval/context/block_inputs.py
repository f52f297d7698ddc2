"""What a context block is built from: the asked keys with their facts, and the episodes found."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from store.contract.facts import Fact


@dataclass(frozen=True)
class KeyFacts:
    """One asked key and the version valid at the read's time (None: not known); for a period
    read, the latest version valid in the period, after the ``earlier`` ones."""

    subject: str
    attribute: str
    fact: Fact | None
    earlier: tuple[Fact, ...] = ()
    """A period read's other versions valid in the period, by valid_from, before ``fact``."""

    def facts(self) -> tuple[Fact, ...]:
        """Every version the key shows: ``earlier``, then ``fact``."""
        return (*self.earlier, self.fact) if self.fact is not None else self.earlier


@dataclass(frozen=True)
class EvidenceCandidate:
    """An episode found for the question, with its text (the assembler quotes from it)."""

    episode_id: str
    occurred_at: datetime
    text: str
    score: float
    is_fact_source: bool = False
    recorded_at: datetime | None = None
    """When the server recorded it (its receipt's write time), where the read knew it."""
    search_rank: int | None = None
    """Its place in the search's order (0 first), which ranks it among the found episodes:
    in the lexical and hybrid modes that order is not the score's."""
    about: frozenset[str] = frozenset()
    """The asked keys' attributes the episode is about, by the similarity routing uses: an
    episode about a key that states none of its shown value is judged by its time."""
