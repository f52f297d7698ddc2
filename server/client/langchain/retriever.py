"""``SGAMContextRetriever``: SGAM's cited context block as LangChain documents.

One document per fact line of the block and one per evidence line, each line as the block
writes it; the metadata cites it: the fact's id, its source episode, its valid window and
the source's kind, or the evidence's episode, time, score and mark, with the decision the
block was read for.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables.config import run_in_executor

from server.client import read_calls
from server.client.aio import AsyncSGAMClient
from server.client.call import Call
from server.client.sync import SGAMClient
from store.contract.facts import Fact
from store.contract.reads import ContextEvidence, ContextResult
from store.contract.times import format_timestamp
from store.contract.values import display


class SGAMContextRetriever(BaseRetriever):
    """Documents for a query: the lines of the context block ``POST /v1/context`` gives.

    The query is the block's question; ``subject``, ``attributes``, ``valid_at``,
    ``known_at``, ``token_budget`` and ``evidence_k`` are sent with it as set (unset: the
    server's defaults). ``async_client`` serves ``ainvoke`` (without one, the blocking
    client runs on a thread).
    """

    client: SGAMClient
    async_client: AsyncSGAMClient | None = None
    subject: str | None = None
    attributes: list[str] | None = None
    valid_at: datetime | None = None
    known_at: datetime | None = None
    token_budget: int | None = None
    evidence_k: int | None = None

    def context_call(self, query: str) -> Call[ContextResult]:
        """The context call a query makes."""
        return read_calls.context(
            query,
            subject=self.subject,
            attributes=self.attributes,
            valid_at=self.valid_at,
            known_at=self.known_at,
            token_budget=self.token_budget,
            evidence_k=self.evidence_k,
        )

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return documents(self.client.send(self.context_call(query)))

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        if self.async_client is None:
            result = await run_in_executor(None, self.client.send, self.context_call(query))
        else:
            result = await self.async_client.send(self.context_call(query))
        return documents(result)


def documents(context: ContextResult) -> list[Document]:
    """The block's fact lines, then its evidence lines, as documents citing their sources."""
    lines = context.block.splitlines()
    taken: set[int] = set()
    decision = str(context.decision_id)
    found = []
    for fact in context.facts:
        line = _fact_line(lines, taken, fact)
        found.append(Document(page_content=line, metadata=fact_citation(fact, decision)))
    for evidence in context.evidence:
        found.append(
            Document(
                page_content=evidence_line(evidence),
                metadata=evidence_citation(evidence, decision),
            )
        )
    return found


def _fact_line(lines: Sequence[str], taken: set[int], fact: Fact) -> str:
    """The block's line for the fact (a disputed key's under "Uncertain:"), each line taken
    once; the fact in the block's words if no line is its own."""
    source = f"source {fact.source_episode_id})"
    for number, line in enumerate(lines):
        if (
            number not in taken
            and line.removeprefix("- ").startswith(f"{fact.attribute}: ")
            and source in line
        ):
            taken.add(number)
            return line
    return f"{fact.attribute}: {display(fact.value)} ({source}"


def evidence_line(evidence: ContextEvidence) -> str:
    """An evidence line as the block writes it: ``[episode] mark: snippet``."""
    mark = f"{evidence.mark}: " if evidence.mark else ""
    return f"[{evidence.episode_id}] {mark}{evidence.snippet}"


def fact_citation(fact: Fact, decision_id: str) -> dict[str, Any]:
    """A fact line's metadata: what it states, its valid window and its source."""
    return {
        "kind": "fact",
        "decision_id": decision_id,
        "fact_id": str(fact.fact_id),
        "episode_id": fact.source_episode_id,
        "source_kind": fact.source_kind,
        "subject": fact.subject,
        "attribute": fact.attribute,
        "value": fact.value,
        "valid_from": format_timestamp(fact.valid_from),
        "valid_to": None if fact.valid_to is None else format_timestamp(fact.valid_to),
        "status": fact.status,
        "label": fact.label,
    }


def evidence_citation(evidence: ContextEvidence, decision_id: str) -> dict[str, Any]:
    """An evidence line's metadata: its episode, when it occurred, its score and its mark."""
    return {
        "kind": "evidence",
        "decision_id": decision_id,
        "episode_id": evidence.episode_id,
        "occurred_at": format_timestamp(evidence.occurred_at),
        "score": evidence.score,
        "superseded": evidence.superseded,
        "unverified": evidence.unverified,
        "mark": evidence.mark,
    }
