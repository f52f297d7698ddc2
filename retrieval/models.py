"""The read path's request and response bodies, in the HTTP contract's words."""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from store.models import MAX_TEXT, Fact, Identifier, NoNul, Timestamp

MAX_QUESTION = 4_000


class SearchRequest(BaseModel):
    """``POST /v1/evidence/search``: episodes similar to ``query``, optionally narrowed."""

    model_config = ConfigDict(extra="forbid")

    query: Annotated[str, NoNul] = Field(min_length=1, max_length=MAX_QUESTION)
    subject: Identifier | None = None
    session_id: Identifier | None = None
    occurred_from: Timestamp | None = None
    occurred_to: Timestamp | None = None
    k: int = Field(default=5, ge=1, le=50)


class EvidenceItem(BaseModel):
    """One cited episode: id, time, trimmed snippet and cosine similarity."""

    episode_id: str
    occurred_at: Timestamp
    kind: str
    session_id: str | None
    snippet: str = Field(max_length=MAX_TEXT)
    score: float


class SearchResult(BaseModel):
    """Evidence found, best first, and how the search ran."""

    results: list[EvidenceItem]
    search: dict[str, Any]


class ContextRequest(BaseModel):
    """``POST /v1/context``: a question and what the caller already knows about it."""

    model_config = ConfigDict(extra="forbid")

    question: Annotated[str, NoNul] = Field(min_length=1, max_length=MAX_QUESTION)
    subject: Identifier | None = None
    attributes: list[Identifier] | None = Field(default=None, max_length=50)
    valid_at: Timestamp | None = None
    known_at: Timestamp | None = None
    token_budget: int = Field(default=512, ge=16, le=32_768)
    evidence_k: int = Field(default=3, ge=0, le=20)


class ContextResult(BaseModel):
    """The smallest cited block for one model call, and what it was built from."""

    block: str
    citations: list[dict[str, Any]]
    facts: list[Fact]
    evidence: list[dict[str, Any]]
    uncertain: list[dict[str, Any]]
    plan: dict[str, Any]
    decision_id: UUID
    over_budget: bool
    tokens: int
