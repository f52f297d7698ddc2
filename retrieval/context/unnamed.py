"""Evidence for a question that named no subject, judged by the subjects its episodes are about.

Without a subject no key is read, and the block's evidence is unverified; still, a line must
never state another period's value unmarked. Each evidence episode names the subjects it is
about (its ``subjects``), so the values those subjects held, hold and ever held are read as
for a named subject (``retrieval.context.stale``) and merged: a line stating a value no such subject
holds at the asked time is marked with its period, or dropped, like any other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar

from retrieval.context.block_inputs import EvidenceCandidate
from retrieval.context.stale import NO_VALUES, SubjectValues, subject_values
from store.contract.reads import QuestionPlan
from store.db.snapshot import ReadSnapshot
from store.subjects.reads import ValidRange

T = TypeVar("T")

MAX_SUBJECTS = 5
"""The most subjects read for one block's evidence (the first its episodes name)."""


def unnamed_values(
    snapshot: ReadSnapshot,
    evidence: Sequence[EvidenceCandidate],
    plan: QuestionPlan,
    *,
    period: ValidRange | None,
) -> SubjectValues:
    """The merged values of the subjects the evidence episodes are about, at the plan's times."""
    if not evidence:
        return NO_VALUES
    episodes = snapshot.episodes([candidate.episode_id for candidate in evidence])
    about = dict.fromkeys(
        subject
        for candidate in evidence
        if candidate.episode_id in episodes
        for subject in episodes[candidate.episode_id].subjects
    )
    subjects = list(about)[:MAX_SUBJECTS]
    return merge_values(
        subject_values(
            snapshot.subject_memory(
                subject, valid_at=plan.valid_at, known_at=plan.known_at, period=period
            )
        )
        for subject in subjects
    )


def merge_values(values: Iterable[SubjectValues]) -> SubjectValues:
    """Several subjects' values as one: a text held by any of them is held."""
    merged = list(values)
    if not merged:
        return NO_VALUES
    return SubjectValues(
        holding=_union(v.holding for v in merged),
        ever=_union(v.ever for v in merged),
        refused=_union(v.refused for v in merged),
        disputed=_union(v.disputed for v in merged),
        periods=_union(v.periods for v in merged),
    )


def _union(maps: Iterable[Mapping[str, tuple[T, ...]]]) -> dict[str, tuple[T, ...]]:
    joined: dict[str, dict[T, None]] = {}
    for one in maps:
        for name, items in one.items():
            joined.setdefault(name, {}).update(dict.fromkeys(items))
    return {name: tuple(items) for name, items in joined.items()}
