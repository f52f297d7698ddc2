"""The read path's request and response bodies, in the HTTP contract's words.

Every object a client reads has a model here, so the OpenAPI document describes it field by
field; the read path builds these models directly. Where an answer repeats a store object (a
conflict's challenger), it is that object's own model.
"""

from __future__ import annotations

from typing import Annotated, Literal
from uuid import UUID

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, SkipValidation
from typing_extensions import TypedDict

from store.contract.common import MAX_TEXT, EpisodeKind, Identifier, Integer, NoNul, Timestamp
from store.contract.facts import Challenger, Fact
from store.contract.memory import EpisodeOutcome
from store.contract.values import JsonValue

MAX_QUESTION = 4_000

Mode = Literal["current", "point_in_time", "known_at", "period"]
SearchMode = Literal["vector", "lexical", "hybrid"]
"""How evidence is found: by the embedding (``vector``), by the words (``lexical``: PostgreSQL
full-text search, rare words weighing most), or both ranks fused (``hybrid``: reciprocal rank
fusion)."""
DEFAULT_SEARCH_MODE: SearchMode = "hybrid"
"""Chosen by measurement: evals/results/evidence.json, ``modes`` (docs/guides/rag-context.md)."""
_MODE_DESCRIPTION = (
    "How evidence is found: `vector` (embedding similarity), `lexical` (full-text search,"
    " rare words weighing most) or `hybrid` (both ranks fused by reciprocal rank fusion)."
)
CitationRole = Literal["fact", "challenger", "evidence"]

SCORE_PLACES = 6
"""Decimals an answer's similarity scores keep: past them, scores differ from CPU to CPU."""


def _rounded(score: float) -> float:
    return round(score, SCORE_PLACES)


Score = Annotated[float, AfterValidator(_rounded)]
"""A cosine similarity as answers carry it, rounded to ``SCORE_PLACES``."""


class SearchRequest(BaseModel):
    """``POST /v1/evidence/search``: episodes similar to ``query``, optionally narrowed."""

    model_config = ConfigDict(extra="forbid")

    query: Annotated[str, NoNul] = Field(min_length=1, max_length=MAX_QUESTION)
    subject: Identifier | None = None
    session_id: Identifier | None = None
    occurred_from: Timestamp | None = None
    occurred_to: Timestamp | None = None
    k: Integer = Field(default=5, ge=1, le=50)
    mode: SearchMode = Field(default=DEFAULT_SEARCH_MODE, description=_MODE_DESCRIPTION)


class EvidenceItem(BaseModel):
    """One cited episode: id, time, trimmed snippet and cosine similarity."""

    episode_id: str
    occurred_at: Timestamp
    kind: str
    session_id: str | None
    snippet: str = Field(max_length=MAX_TEXT)
    score: Score = Field(
        description="Cosine similarity of the episode to the query (0 for an episode without"
        " a vector of the model); results come in the mode's order, which in the `lexical`"
        " and `hybrid` modes is not this score's."
    )


class SearchPlan(BaseModel):
    """How a search ran: its mode, exact scan or HNSW, and how many vectors the scope held
    (capped)."""

    model_config = ConfigDict(frozen=True)

    method: Literal["exact", "hnsw", "full_text"] = Field(
        description="How the vectors were searched: every one of the scope (`exact`) or by the"
        " HNSW index (`hnsw`); `full_text` in the lexical mode, which searches none."
    )
    scope_size: int
    scope_size_capped: bool = Field(
        description="Counting stopped past the exact-scan limit: the scope holds at least this."
    )
    mode: SearchMode = Field(description="The mode the search ran in.")


class SearchResult(BaseModel):
    """Evidence found, best first, and how the search ran."""

    results: list[EvidenceItem]
    search: SearchPlan


class ContextRequest(BaseModel):
    """``POST /v1/context``: a question and what the caller already knows about it."""

    model_config = ConfigDict(extra="forbid")

    question: Annotated[str, NoNul] = Field(min_length=1, max_length=MAX_QUESTION)
    subject: Identifier | None = None
    attributes: list[Identifier] | None = Field(default=None, max_length=50)
    valid_at: Timestamp | None = None
    known_at: Timestamp | None = None
    token_budget: Integer = Field(default=512, ge=16, le=32_768)
    evidence_k: Integer = Field(default=3, ge=0, le=20)
    mode: SearchMode = Field(default=DEFAULT_SEARCH_MODE, description=_MODE_DESCRIPTION)
    valid_from: Timestamp | None = Field(
        default=None,
        description="Ask about a valid-time period starting here (with valid_to, or open"
        " ended); not with valid_at. It wins over a period the question states",
    )
    valid_to: Timestamp | None = Field(
        default=None,
        description="The end of the period asked about, not included (open start without"
        " valid_from); later than valid_from",
    )


class Citation(BaseModel):
    """An episode the block cites, once, under its strongest role (fact, challenger, evidence)."""

    episode_id: str
    occurred_at: Timestamp | None = Field(description="Null when the episode's time is unknown.")
    role: CitationRole


class ContextEvidence(BaseModel):
    """One evidence line of the block: the episode, its quote and how it was judged."""

    episode_id: str
    occurred_at: Timestamp
    snippet: str
    score: Score = Field(description="Cosine similarity of the episode to the question.")
    superseded: bool = Field(description="The line states a value that does not hold then.")
    unverified: bool = Field(description="No key was named or routed: no fact vouches for it.")
    mark: str | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Present when the line is marked: the words after its citation, such as"
        " 'superseded (from 2014-03-01 until 2016-05-01)', 'in conflict', 'disputed',"
        " 'older than the value since 2026-06-03', 'newer than memory' or 'uncertain'",
    )


class Incumbent(BaseModel):
    """The side of a disputed key that reads return: the fact in force."""

    fact_id: UUID
    value: JsonValue
    valid_from: Timestamp
    valid_to: Timestamp | None
    source_episode_id: str
    source_kind: EpisodeKind


class UncertainKey(BaseModel):
    """A disputed key, or one later evidence may change: the incumbent reads return, every
    open challenger, and the newer episodes."""

    subject: str
    attribute: str
    incumbent: Incumbent
    challengers: list[Challenger]
    newer_evidence: list[str] | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Present when episodes about the key that occurred after its value began"
        " state none of it: their ids. Memory may be behind them",
    )


class PlanReasons(TypedDict):
    """Why the plan chose what it did, one sentence or more per choice."""

    subject: str
    valid_at: str
    known_at: str
    mode: str
    attributes: str


class RenamedAttribute(BaseModel):
    """An attribute a request named by its name before a rename."""

    attribute: str = Field(description="The name read")
    migrated_from: str = Field(description="The old name the request gave")


class SubjectCandidate(BaseModel):
    """A subject the question's words may name, as the plan weighed it."""

    subject: str
    name: str = Field(description="The name the words were matched to (or the id)")
    text: str = Field(description="The question's words, as written")
    how: str = Field(description="How the words fit the name: the id, an alias, its last word…")
    score: float = Field(description="How well they fit, 0 to 1")


class QuestionPlan(BaseModel):
    """The read a question asks for, with the reason for every choice."""

    model_config = ConfigDict(frozen=True)

    mode: Mode
    valid_at: Timestamp
    known_at: Timestamp
    subject: str | None
    attributes: tuple[str, ...]
    routed: bool = Field(
        description="False when no key was named or routed: the evidence is then unverified."
    )
    # Not re-validated, so the reasons stay in the order the planner settled them.
    reasons: SkipValidation[PlanReasons]
    migrated_from: list[RenamedAttribute] | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Present when the request named attributes by the names they had before a"
        " rename (within the dual-read window): each attribute read, with the old name asked",
    )
    valid_from: Timestamp | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Present when a period read (mode period) has a start: the first instant of"
        " the valid-time range asked about",
    )
    valid_to: Timestamp | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Present when a period read (mode period) has an end: the first instant"
        " after the valid-time range asked about",
    )
    subject_candidates: list[SubjectCandidate] | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Present when no subject was chosen from the question's names: the"
        " subjects it weighed (several fitting about equally, or none well enough), best first",
    )


class ContextResult(BaseModel):
    """The smallest cited block for one model call, and what it was built from."""

    block: str
    citations: list[Citation]
    facts: list[Fact]
    evidence: list[ContextEvidence]
    uncertain: list[UncertainKey]
    plan: QuestionPlan
    decision_id: UUID
    over_budget: bool
    tokens: int


class ExperienceRequest(SearchRequest):
    """``POST /v1/experiences/search``: the situation at hand, optionally narrowed."""


class ExperienceItem(EvidenceItem):
    """A similar past episode and its current outcome."""

    outcome: EpisodeOutcome | None = Field(description="Null when no outcome was recorded.")
    experience: bool = Field(
        description="Whether the episode counts as experience: it has an observed outcome"
        " (succeeded, failed or partial). Without one it is only a similar episode."
    )


class ExperienceResult(BaseModel):
    """Similar episodes, best first, and how many of them are experience."""

    results: list[ExperienceItem]
    experience_count: int = Field(description="How many results have an observed outcome.")
    search: SearchPlan
