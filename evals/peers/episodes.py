"""What every peer arm shares: episodes placed under their subjects, erasures, a timed ask.

An arm stores an episode once per subject (given, or cited by a candidate, as the baselines
keep them), so that its own scoping (a namespace, a user id) can find it by the question's
tenant and subject; an episode without a subject is stored under its tenant alone. Candidates,
expiries and the other fact operations have no counterpart in a store of texts and are skipped.
Only the search is timed, from the question's text to the context: the question's embedding is
inside it, as it is for ``dm``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from time import perf_counter
from typing import Any

from evals.arms.systems import Context, Question, body_fields
from evals.leakage.lines import baseline_context
from retrieval.context.snippets import one_line

WIDEN_UNSCOPED = 4
"""A question without a subject asks for this many times k hits, so copies do not crowd out
other episodes."""


@dataclass(frozen=True)
class Placed:
    """One stored copy of an episode: the subject it is filed under and the arm's id for it."""

    subject: str | None
    stored_id: str


class PeerMemory(ABC):
    """An arm's store of raw episodes, written and asked as the evaluation replays a trace."""

    def __init__(self, *, subjects: Mapping[tuple[str, str], set[str]], k: int) -> None:
        self.subjects = subjects
        self.k = k
        self.outcomes: Counter[str] = Counter()
        self.placed: dict[tuple[str, str], list[Placed]] = defaultdict(list)

    @abstractmethod
    def put(self, tenant: str, subject: str | None, *, episode_id: str, text: str) -> str:
        """Store one copy of an episode; return the arm's id for it."""

    @abstractmethod
    def delete(self, tenant: str, placed: Placed) -> None:
        """Remove one stored copy."""

    @abstractmethod
    def search(
        self, tenant: str, subject: str | None, *, query: str, k: int
    ) -> list[tuple[str, str]]:
        """The ``k`` best hits in the arm's scope, best first: (episode id, text)."""

    def write(self, line: Mapping[str, Any], now: str | None) -> None:
        """Store an episode under each of its subjects, or apply an erasure."""
        del now  # neither arm takes a system time: each stores at the wall clock
        tenant, op = line["tenant"], line["op"]
        if op == "episode":
            body = body_fields(line, "updates")
            episode_id = str(body["id"])
            given = set(body.get("subjects") or ())
            subjects = sorted(given | self.subjects.get((tenant, episode_id), set()))
            for subject in subjects or [None]:
                stored = self.put(tenant, subject, episode_id=episode_id, text=body["text"])
                self.placed[tenant, episode_id].append(Placed(subject, stored))
        elif op == "erase":
            for episode_id in self._erased(tenant, line):
                for placed in self.placed.pop((tenant, episode_id), []):
                    self.delete(tenant, placed)
        else:
            return
        self.outcomes[op] += 1

    def _erased(self, tenant: str, line: Mapping[str, Any]) -> list[str]:
        """The episodes an erase line removes: the one named, or all filed under the subject."""
        if "episode" in line:
            return [line["episode"]]
        return [
            episode_id
            for (owner, episode_id), copies in self.placed.items()
            if owner == tenant and any(copy.subject == line["subject"] for copy in copies)
        ]

    def ask(self, question: Question) -> Context:
        """The top k texts in the question's tenant and subject, one per line."""
        start = perf_counter()
        # A tenant-wide search meets an episode once per subject it is filed under.
        limit = self.k if question.subject else self.k * WIDEN_UNSCOPED
        hits = self.search(question.tenant, question.subject, query=question.question, k=limit)
        text = baseline_context([one_line(hit) for _, hit in _first(hits, self.k)])
        return Context(text, (perf_counter() - start) * 1000)


def _first(hits: Sequence[tuple[str, str]], k: int) -> list[tuple[str, str]]:
    """The first ``k`` hits of distinct episodes, in order."""
    seen: dict[str, str] = {}
    for episode_id, text in hits:
        seen.setdefault(episode_id, text)
    return list(seen.items())[:k]
