"""A read snapshot: the reads one request makes, in one transaction that sees one state.

The read path plans a question, reads the subject it names, and searches evidence; in one
snapshot those reads agree with each other (a write committing meanwhile is seen by none of
them) and share one ``now``. ``MemoryStore.snapshots.read`` opens it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from store.attributes.registry import list_attributes
from store.contract.episodes import Episode
from store.contract.facts import Attribute
from store.episodes.record import get_episodes
from store.facts.reads import find_subjects
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


@dataclass(frozen=True)
class ReadSnapshot:
    """One tenant's reads in one REPEATABLE READ transaction at one system time ``now``."""

    conn: psycopg.Connection[Any]
    """The transaction's connection, for reads the store does not own (evidence search)."""
    tenant_id: str
    now: datetime

    def find_subjects(self, names: Sequence[str]) -> list[str]:
        """The tenant's subjects among ``names`` (case-insensitive), for question planning; a
        merged id found there counts as its survivor."""
        found = find_subjects(self.conn, self.tenant_id, names=list(names))
        survivors = resolve_subjects(self.conn, self.tenant_id, found)
        if not survivors:
            return found
        return list(dict.fromkeys(survivors.get(subject, subject) for subject in found))

    def names_by_key(self, asked: AskedKeys) -> list[NameRow]:
        """The tenant's subject names the keys asked find (``store.subjects.names``)."""
        return find_by_keys(self.conn, self.tenant_id, asked)

    def similar_names(
        self, texts: Sequence[str], *, threshold: float, best: int
    ) -> list[SimilarRow]:
        """The tenant's whole subject names whose trigrams are like one of ``texts``."""
        return find_similar(self.conn, texts, threshold=threshold, best=best)

    def value_names(self, subjects: Sequence[str]) -> dict[str, set[str]]:
        """The text values each subject ever held, folded as names (``value_names``)."""
        return value_names(self.conn, self.tenant_id, subjects)

    def resolve_subject(self, subject: str) -> str:
        """The subject ``subject`` names now: its survivor, if it was merged."""
        return resolve_subject(self.conn, self.tenant_id, subject)

    def attributes(self) -> list[Attribute]:
        """The tenant's declared attributes, by name (routing scores a question among them)."""
        return list_attributes(self.conn, self.tenant_id)

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
            self.conn,
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
        return get_episodes(self.conn, self.tenant_id, episode_ids)
