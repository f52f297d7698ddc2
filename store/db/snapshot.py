"""A read snapshot: the reads one request makes, in one transaction that sees one state.

The read path plans a question, reads the subject it names, and searches evidence; in one
snapshot those reads agree with each other (a write committing meanwhile is seen by none of
them) and share one ``now``. ``MemoryStore.snapshots.read`` opens it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import psycopg

from store.attributes.names import renamed_targets, renames_and_survivor
from store.attributes.registry import current_attributes
from store.contract.episodes import Episode
from store.contract.facts import Attribute
from store.contract.memory import EpisodeOutcome
from store.contract.reads import SearchPlan
from store.episodes import evidence
from store.episodes.evidence import EXACT_SCAN_LIMIT, HNSW_EF_SEARCH, EvidenceHit, SearchScope
from store.episodes.lexical import TextQuery, search_words
from store.episodes.outcomes import current_outcomes
from store.episodes.record import episode_times, get_episodes
from store.facts.reads import find_subjects
from store.governance.receipts import Touched, Trace, leave_receipts
from store.subjects.merged_ids import resolve_subject, resolve_subjects
from store.subjects.names import (
    AskedKeys,
    NameRow,
    SimilarRow,
    find_by_keys,
    find_similar,
    value_names,
)
from store.subjects.reads import SubjectMemory, ValidRange, read_subject_memory

_WHOLE_TENANT = SearchScope()


@dataclass(frozen=True)
class ReadSnapshot:
    """One tenant's reads in one REPEATABLE READ transaction at one system time ``now``."""

    _conn: psycopg.Connection[Any]
    """The transaction's connection: the store's own, never handed out."""
    tenant_id: str
    now: datetime
    _schema: list[Attribute] = field(default_factory=list, compare=False, repr=False)
    """The tenant's attributes once read: the transaction sees one schema."""

    def find_subjects(self, names: Sequence[str]) -> list[str]:
        """The tenant's subjects among ``names`` (case-insensitive), for question planning; a
        merged id found there counts as its survivor."""
        found = find_subjects(self._conn, self.tenant_id, names=list(names))
        survivors = resolve_subjects(self._conn, self.tenant_id, found)
        if not survivors:
            return found
        return list(dict.fromkeys(survivors.get(subject, subject) for subject in found))

    def names_by_key(self, asked: AskedKeys) -> list[NameRow]:
        """The tenant's subject names the keys asked find (``store.subjects.names``)."""
        return find_by_keys(self._conn, self.tenant_id, asked)

    def similar_names(
        self, texts: Sequence[str], *, threshold: float, best: int
    ) -> list[SimilarRow]:
        """The tenant's whole subject names whose trigrams are like one of ``texts``."""
        return find_similar(self._conn, texts, threshold=threshold, best=best)

    def value_names(self, subjects: Sequence[str]) -> dict[str, set[str]]:
        """The text values each subject ever held, folded as names (``value_names``)."""
        return value_names(self._conn, self.tenant_id, subjects)

    def resolve_subject(self, subject: str) -> str:
        """The subject ``subject`` names now: its survivor, if it was merged."""
        return resolve_subject(self._conn, self.tenant_id, subject)

    def attributes(self) -> list[Attribute]:
        """The tenant's declared attributes, by name (routing scores a question among them);
        read once a snapshot, since routing and the evidence's topics both ask for them, and
        read whole only when they changed (``current_attributes``)."""
        if not self._schema:
            self._schema.extend(current_attributes(self._conn, self.tenant_id))
        return list(self._schema)

    def subject_memory(
        self,
        subject: str,
        *,
        valid_at: datetime,
        known_at: datetime,
        history: bool = True,
        attributes: Sequence[str] | None = None,
        period: ValidRange | None = None,
    ) -> SubjectMemory:
        """The subject's facts at (``valid_at``, or in ``period``; ``known_at``) with its whole
        history (``read_subject_memory``)."""
        return read_subject_memory(
            self._conn,
            self.tenant_id,
            subject=subject,
            valid_at=valid_at,
            known_at=known_at,
            now=self.now,
            history=history,
            attributes=attributes,
            period=period,
        )

    def episodes(self, episode_ids: Collection[str]) -> dict[str, Episode]:
        """The tenant's episodes (or stubs) among ``episode_ids``, by id."""
        return get_episodes(self._conn, self.tenant_id, episode_ids)

    def episode_times(self, episode_ids: Collection[str]) -> dict[str, datetime]:
        """When each of the tenant's episodes (or stubs) among ``episode_ids`` occurred."""
        return episode_times(self._conn, self.tenant_id, episode_ids)

    def search_evidence(
        self,
        query: np.ndarray[Any, Any],
        *,
        model: str,
        dimensions: int,
        k: int,
        scope: SearchScope = _WHOLE_TENANT,
        exact_limit: int = EXACT_SCAN_LIMIT,
        ef_search: int = HNSW_EF_SEARCH,
        words: TextQuery | None = None,
    ) -> tuple[list[EvidenceHit], SearchPlan]:
        """The ``k`` episodes of the scope nearest to ``query``, best first, with the plan
        (``store.episodes.evidence.search_evidence``); with ``words`` in the lexical or hybrid
        mode, those that mode ranks first (``store.episodes.lexical.search_words``)."""
        return search_words(
            self._conn,
            self.tenant_id,
            query=query,
            words=words,
            model=model,
            dimensions=dimensions,
            k=k,
            scope=scope,
            exact_limit=exact_limit,
            ef_search=ef_search,
        )

    def episode_scores(
        self, query: np.ndarray[Any, Any], *, model: str, episode_ids: Sequence[str]
    ) -> dict[str, float]:
        """Each named episode's cosine similarity to ``query``, as an exact search scores it."""
        return evidence.episode_scores(
            self._conn, self.tenant_id, query=query, model=model, episode_ids=episode_ids
        )

    def episode_vectors(
        self, *, model: str, episode_ids: Sequence[str]
    ) -> dict[str, np.ndarray[Any, Any]]:
        """Each named episode's vector of ``model``; an episode without one is left out."""
        return evidence.episode_vectors(
            self._conn, self.tenant_id, model=model, episode_ids=episode_ids
        )

    def renamed_targets(self, names: Sequence[str]) -> dict[str, str]:
        """Each old attribute name among ``names`` still in its dual-read window, with the new
        name it stands for (``store.attributes.names``)."""
        return renamed_targets(self._conn, self.tenant_id, names, now=self.now)

    def renames_and_survivor(
        self, names: Sequence[str], subject: str
    ) -> tuple[dict[str, str], str]:
        """``renamed_targets`` of ``names`` and ``resolve_subject`` of ``subject``, in one
        statement (``store.attributes.names``)."""
        return renames_and_survivor(
            self._conn, self.tenant_id, names, subject=subject, now=self.now
        )

    def outcomes(self, episode_ids: Sequence[str]) -> dict[str, EpisodeOutcome]:
        """The current outcome of each named episode that has one."""
        return current_outcomes(self._conn, self.tenant_id, list(episode_ids))

    def leave_receipts(self, touched: Sequence[Touched], *, trace: Trace) -> None:
        """Write the read's receipts in the snapshot's transaction, at its ``now``
        (``store.governance.receipts``)."""
        leave_receipts(
            self._conn, self.tenant_id, touched, action="read", trace=trace, now=self.now
        )
