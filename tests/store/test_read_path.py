"""The read path end to end: questions in words become exact, cited reads and one small block.

Everything here runs on the real embedding model (all-MiniLM-L6-v2) and the embedded
PostgreSQL: routing, evidence search and token counting are the ones the server uses.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pytest
from psycopg_pool import ConnectionPool
from pydantic import BaseModel

from retrieval.context.block import UNVERIFIED_HEADING
from retrieval.reader import Reader
from retrieval.search.embeddings import Embedder
from store.contract.reads import DEFAULT_SEARCH_MODE, ContextResult, SearchPlan
from store.contract.times import format_timestamp
from store.db.clock import ManualClock
from store.episodes.evidence import EvidenceHit, SearchScope, scope_condition
from store.errors import NotFound
from store.service import MemoryStore
from tests.conftest import ts
from tests.read_helpers import ReadPath, read_path


@pytest.fixture
def reader(pool: ConnectionPool, clock: ManualClock, embedder: Embedder) -> ReadPath:
    """A store that embeds episodes, its reader, and a tenant of this test's own."""
    return read_path(pool, clock, embedder)


def _lines(result: ContextResult) -> list[str]:
    return result.block.splitlines()


def _facts(result: ContextResult) -> list[tuple[Any, str, str, str | None]]:
    return [
        (
            fact.value,
            fact.source_episode_id,
            format_timestamp(fact.valid_from),
            None if fact.valid_to is None else format_timestamp(fact.valid_to),
        )
        for fact in result.facts
    ]


def _plan(result: ContextResult) -> dict[str, Any]:
    return result.plan.model_dump(mode="json", exclude={"reasons"})


def _json(items: Sequence[BaseModel]) -> list[dict[str, Any]]:
    """Items as the answer's JSON carries them."""
    return [item.model_dump(mode="json") for item in items]


def _header(subject: str, *, valid_at: str | None = None, known_at: str | None = None) -> str:
    """The block's first line: the subject, and the instants a question asked for."""
    if valid_at is None:
        return ""
    if known_at == valid_at:
        return f"{subject} as known on {ts(valid_at).date()}:"
    header = f"{subject} as of {ts(valid_at).date()}"
    if known_at is not None:
        header += f", as known on {ts(known_at).date()}"
    return header + ":"


# -- 1. point in time from words --------------------------------------------------------------

NORTHWIND = [
    ("nw-1975", "1975-03-01T09:00:00Z", "Alice Moreno", "was founded today with {} as its CEO."),
    ("nw-1982", "1982-09-15T09:00:00Z", "Bruno Keller", "board appointed {} as CEO."),
    ("nw-1989", "1989-01-10T09:00:00Z", "Carla Diaz", "handed the chief executive role to {}."),
    ("nw-2026a", "2026-06-01T09:00:00Z", "Dmitri Volkov", "named {} interim CEO for now."),
    ("nw-2026b", "2026-06-03T10:00:00Z", "Elena Park", "named {} as its permanent CEO."),
]
NOW = "2026-06-10T00:00:00Z"


def _northwind(path: ReadPath) -> None:
    """Northwind's CEOs from 1975, the last two changing around June 2 of the clock's year."""
    path.declare(
        "ceo",
        "Chief executive officer of the company",
        aliases=["chief executive", "who runs it", "who leads it"],
    )
    path.declare("stock_ticker", "Ticker symbol the shares trade under")
    path.declare("website", "Web address of the company homepage")
    path.at("2026-06-05T00:00:00Z")
    path.record_batch(
        [
            {
                "id": episode_id,
                "occurred_at": occurred_at,
                "text": "Northwind " + template.format(name),
                "subjects": ["northwind"],
            }
            for episode_id, occurred_at, name, template in NORTHWIND
        ],
    )
    for episode_id, occurred_at, name, _ in NORTHWIND:
        written = path.assert_value(episode_id, "northwind", "ceo", name, occurred_at)
        assert written.status == "written"
    path.at(NOW)


def _evidence_line(episode_id: str, superseded: bool) -> str:
    """A CEO's statement as its line says it; superseded, with the period that CEO served."""
    [index] = [i for i, row in enumerate(NORTHWIND) if row[0] == episode_id]
    _, began, name, template = NORTHWIND[index]
    period = f"from {began[:10]}"
    if index + 1 < len(NORTHWIND):
        period += f" until {NORTHWIND[index + 1][1][:10]}"
    mark = f"superseded ({period}): " if superseded else ""
    return f"[{episode_id}] {mark}Northwind {template.format(name)}"


@dataclass(frozen=True)
class PointInTime:
    """A question in words, the read it must plan and the key line it must answer with."""

    question: str
    mode: str
    valid_at: str
    source: str
    line: str


POINT_IN_TIME = [
    PointInTime(
        "As of April 21, 1980: who was the CEO of Northwind?",
        "point_in_time",
        "1980-04-21T12:00:00Z",
        "nw-1975",
        "ceo: Alice Moreno (from 1975-03-01 until 1982-09-15; source nw-1975)",
    ),
    PointInTime(
        "Who was Northwind's CEO on July 1, 1985?",
        "point_in_time",
        "1985-07-01T12:00:00Z",
        "nw-1982",
        "ceo: Bruno Keller (from 1982-09-15 until 1989-01-10; source nw-1982)",
    ),
    PointInTime(
        "Who was Northwind's CEO on July 1, 1990?",
        "point_in_time",
        "1990-07-01T12:00:00Z",
        "nw-1989",
        "ceo: Carla Diaz (from 1989-01-10 until 2026-06-01; source nw-1989)",
    ),
    PointInTime(  # June 2 of the clock's year: after the interim took over, before Elena
        "Who was Northwind's CEO on June 2?",
        "point_in_time",
        "2026-06-02T12:00:00Z",
        "nw-2026a",
        "ceo: Dmitri Volkov (from 2026-06-01 until 2026-06-03; source nw-2026a)",
    ),
    PointInTime(
        "Who runs Northwind now?",
        "current",
        NOW,
        "nw-2026b",
        "ceo: Elena Park (from 2026-06-03; source nw-2026b)",
    ),
]


@pytest.fixture(scope="module")
def northwind(pool: ConnectionPool, embedder: Embedder) -> ReadPath:
    """Northwind's history, written once: the questions below only read it."""
    path = read_path(pool, ManualClock(ts(NOW)), embedder)
    _northwind(path)
    return path


@pytest.mark.parametrize("case", POINT_IN_TIME, ids=[case.question for case in POINT_IN_TIME])
def test_a_date_in_words_reads_the_value_valid_then(northwind: ReadPath, case: PointInTime) -> None:
    result = northwind.context(case.question)

    assert _plan(result) == {
        "mode": case.mode,
        "valid_at": case.valid_at,
        "known_at": NOW,
        "subject": "northwind",
        "attributes": ["ceo"],
        "routed": True,
    }
    [(_, occurred_at, name, _)] = [row for row in NORTHWIND if row[0] == case.source]
    assert [(fact.value, fact.source_episode_id) for fact in result.facts] == [(name, case.source)]
    assert result.facts[0].status == ("current" if case.mode == "current" else "past")
    lines = _lines(result)
    # The key line, then the fact's own source quoted first; every other CEO's statement the
    # similarity search adds says "superseded" on its line.
    if case.mode != "current":
        assert lines.pop(0) == _header("northwind", valid_at=case.valid_at)
    assert lines[:3] == [case.line, "Evidence:", _evidence_line(case.source, superseded=False)]
    others = {_evidence_line(row[0], superseded=True) for row in NORTHWIND if row[0] != case.source}
    # One superseded line at most; the other CEOs' statements are left out.
    assert len(lines) == 4
    assert set(lines[3:]) <= others
    assert _json(result.citations)[0] == {
        "episode_id": case.source,
        "occurred_at": occurred_at,
        "role": "fact",
    }
    assert [(c.episode_id, c.role) for c in result.citations] == [
        (item.episode_id, "fact" if index == 0 else "evidence")
        for index, item in enumerate(result.evidence)
    ]
    assert [item.superseded for item in result.evidence] == [False, True]
    assert (result.uncertain, result.over_budget) == ([], False)


# -- 2. belief wording reads past knowledge -----------------------------------------------------

E1_TEXT = "Mira says her passport deadline is 2026-07-15."
E2_TEXT = (
    "Correction from the consulate: Mira's passport deadline is 2026-06-30, in force since June 2."
)
E3_TEXT = "Mira's passport deadline moved to 2026-06-20."
E1_LINE = "[e1] " + E1_TEXT
E2_LINE = "[e2] " + E2_TEXT
CORRECTED = "passport_deadline: 2026-06-30 (from 2026-06-02; source e2)"


def _mira(path: ReadPath) -> None:
    """e1 (recorded June 1) says 2026-07-15; e2 (recorded June 4) corrects it from June 2."""
    path.declare(
        "passport_deadline", "Date by which the passport must be renewed", value_type="date"
    )
    path.declare("preferred_language", "Language the person prefers to be answered in")
    path.at("2026-06-01T09:00:05Z")
    path.record("e1", "2026-06-01T09:00:00Z", E1_TEXT)
    first = path.assert_value(
        "e1", "mira", "passport_deadline", "2026-07-15", "2026-06-01T09:00:00Z"
    )
    assert first.status == "written"
    path.at("2026-06-04T10:00:05Z")
    path.record("e2", "2026-06-04T10:00:00Z", E2_TEXT)
    second = path.assert_value(
        "e2", "mira", "passport_deadline", "2026-06-30", "2026-06-02T08:00:00Z"
    )
    assert second.status == "written"
    path.at("2026-06-05T00:00:00Z")


def test_belief_wording_reads_what_was_known_then_and_plain_wording_the_correction(
    reader: ReadPath,
) -> None:
    _mira(reader)
    june_3 = "2026-06-03T12:00:00Z"  # after e1 was recorded, before the correction was
    now = "2026-06-05T00:00:00Z"

    believed = reader.context("What did we believe about Mira's passport deadline on June 3?")
    assert _plan(believed) == {
        "mode": "known_at",
        "valid_at": june_3,
        "known_at": june_3,
        "subject": "mira",
        "attributes": ["passport_deadline"],
        "routed": True,
    }
    # Then nothing had closed e1's value, and e2 (recorded June 4) is not even evidence.
    assert _lines(believed) == [
        _header("mira", valid_at=june_3, known_at=june_3),
        "passport_deadline: 2026-07-15 (from 2026-06-01; source e1)",
        "Evidence:",
        E1_LINE,
    ]
    assert _facts(believed) == [("2026-07-15", "e1", "2026-06-01T09:00:00Z", None)]
    assert believed.facts[0].status == "retired"
    assert _json(believed.citations) == [
        {"episode_id": "e1", "occurred_at": "2026-06-01T09:00:00Z", "role": "fact"}
    ]

    # An explicit known_at with plain wording is the same read.
    explicit = reader.context("What is Mira's passport deadline?", known_at=ts(june_3))
    assert (explicit.plan.mode, explicit.block) == ("known_at", believed.block)

    corrected_block = [CORRECTED, "Evidence:", E2_LINE]
    stale_e1 = "[e1] superseded (from 2026-06-01 until 2026-06-02): " + E1_TEXT

    # The same date without belief wording is a valid time, read as known now.
    on_june_3 = reader.context("What was Mira's passport deadline on June 3?")
    assert (on_june_3.plan.mode, on_june_3.plan.valid_at, on_june_3.plan.known_at) == (
        "point_in_time",
        ts(june_3),
        ts(now),
    )
    assert _lines(on_june_3) == [_header("mira", valid_at=june_3), *corrected_block, stale_e1]
    assert _facts(on_june_3) == [("2026-06-30", "e2", "2026-06-02T08:00:00Z", None)]

    # Asked as current, the correction too.
    current = reader.context("What is Mira's passport deadline?")
    assert _plan(current) == {
        "mode": "current",
        "valid_at": now,
        "known_at": now,
        "subject": "mira",
        "attributes": ["passport_deadline"],
        "routed": True,
    }
    assert _lines(current) == [*corrected_block, stale_e1]
    assert _json(current.citations) == [
        {"episode_id": "e2", "occurred_at": "2026-06-04T10:00:00Z", "role": "fact"},
        {"episode_id": "e1", "occurred_at": "2026-06-01T09:00:00Z", "role": "evidence"},
    ]


def test_a_facts_source_is_scored_by_its_similarity_to_the_question(reader: ReadPath) -> None:
    _mira(reader)
    question = "What is Mira's passport deadline?"

    result = reader.context(question)

    # The stored vectors a search compares, so the source scores what a search gives it. The
    # context embeds the question in one batch with its routing text, which moves the floats
    # in the last digits only.
    searched = {hit.episode_id: hit.score for hit in reader.search(question, k=50).results}
    assert [item.episode_id for item in result.evidence] == ["e2", "e1"]
    assert [item.score for item in result.evidence] == pytest.approx(
        [searched["e2"], searched["e1"]], abs=1e-4
    )
    assert searched["e2"] < 1  # the made-up 1.0 of old

    # A source without a vector of the model (recorded before a re-embed) is embedded to score.
    unembedded = MemoryStore(reader.store.pool, clock=reader.clock)
    later = ReadPath(
        unembedded,
        Reader(unembedded, reader.embedder),
        reader.clock,
        reader.embedder,
        reader.tenant,
    )
    later.at("2026-06-06T00:00:00Z")
    later.record("e3", "2026-06-05T10:00:00Z", E3_TEXT)
    moved_on = later.assert_value(
        "e3", "mira", "passport_deadline", "2026-06-20", "2026-06-05T10:00:00Z"
    )
    assert moved_on.status == "written"
    moved = later.context(question)
    assert moved.evidence[0].episode_id == "e3"
    question_vector, text_vector = reader.embedder.embed([question, E3_TEXT])
    assert moved.evidence[0].score == pytest.approx(float(question_vector @ text_vector), abs=1e-5)


# -- 3. a question no attribute matches ---------------------------------------------------------


def test_an_unrelated_question_is_not_routed_and_its_evidence_is_unverified(
    reader: ReadPath,
) -> None:
    _mira(reader)
    question = "What's the weather in Paris today?"
    now = "2026-06-05T00:00:00Z"

    result = reader.context(question)

    assert _plan(result) == {
        "mode": "current",  # "today" is not a date
        "valid_at": now,
        "known_at": now,
        "subject": None,
        "attributes": [],
        "routed": False,
    }
    assert result.plan.reasons["attributes"] == (
        "No subject is known for the question, so no key was read."
    )
    # Without a subject the evidence comes from the whole tenant, in similarity order, judged
    # by the subjects its episodes are about: mira's replaced deadline is marked with its period.
    ranked = reader.search(question, k=3).results
    texts = {"e1": f"superseded (from 2026-06-01 until 2026-06-02): {E1_TEXT}", "e2": E2_TEXT}
    assert _lines(result) == [
        UNVERIFIED_HEADING,
        *(f"[{hit.episode_id}] {texts[hit.episode_id]}" for hit in ranked),
    ]
    assert {hit.episode_id for hit in ranked} == {"e1", "e2"}
    assert (result.facts, result.uncertain) == ([], [])
    assert [(item.unverified, item.superseded) for item in result.evidence] == [
        (True, hit.episode_id == "e1") for hit in ranked
    ]
    assert [c.role for c in result.citations] == ["evidence", "evidence"]


# -- 4. tenants ---------------------------------------------------------------------------------


def test_evidence_never_crosses_tenants_even_from_the_nearest_vector(reader: ReadPath) -> None:
    _mira(reader)
    question = "What is Mira's passport deadline?"
    other = ReadPath(
        reader.store, reader.reader, reader.clock, reader.embedder, f"{reader.tenant}-b"
    )
    reader.store.admin.create_tenant(other.tenant)
    other.declare(
        "passport_deadline", "Date by which the passport must be renewed", value_type="date"
    )
    other.at("2026-06-04T12:00:00Z")
    other.record("b-echo", "2026-06-04T11:00:00Z", question)  # the query, word for word
    other.record("e1", "2026-06-04T11:30:00Z", "Otto's passport deadline is 2027-01-31.")
    otto = other.assert_value(
        "e1", "otto", "passport_deadline", "2027-01-31", "2026-06-04T11:30:00Z"
    )
    assert otto.status == "written"
    other.at("2026-06-05T00:00:00Z")

    # In its own tenant the echo is the nearest vector there is.
    echo = other.search(question, k=1).results
    assert [hit.episode_id for hit in echo] == ["b-echo"]
    assert echo[0].score > 0.99

    found = reader.search(question, k=50)
    assert sorted(hit.episode_id for hit in found.results) == ["e1", "e2"]
    assert {hit.snippet for hit in found.results} == {E1_TEXT, E2_TEXT}
    assert found.search == SearchPlan(
        method="exact", scope_size=2, scope_size_capped=False, mode=DEFAULT_SEARCH_MODE
    )

    context = reader.context(question, evidence_k=20)
    assert _lines(context) == [
        CORRECTED,
        "Evidence:",
        E2_LINE,
        "[e1] superseded (from 2026-06-01 until 2026-06-02): " + E1_TEXT,  # A's e1, not B's
    ]
    assert [c.episode_id for c in context.citations] == ["e2", "e1"]
    assert [(item.snippet, item.superseded) for item in context.evidence] == [
        (E2_TEXT, False),
        (E1_TEXT, True),
    ]
    unrouted = reader.context("Tell me anything at all", evidence_k=20)
    assert sorted(item.episode_id for item in unrouted.evidence) == ["e1", "e2"]
    assert "Otto" not in unrouted.block
    assert question not in unrouted.block

    # B reads nothing of A's subject, by question, by name or by search.
    asked = other.context(question)
    assert asked.plan.subject is None
    assert asked.facts == []
    assert "2026-06-30" not in asked.block
    assert "2026-07-15" not in asked.block
    assert sorted(item.episode_id for item in asked.evidence) == ["b-echo", "e1"]  # B's own
    named = other.context(question, subject="mira", attributes=["passport_deadline"])
    assert _lines(named) == ["passport_deadline: not known"]
    assert (named.facts, named.evidence, named.citations) == ([], [], [])
    assert other.search(question, subject="mira").results == []
    with pytest.raises(NotFound):
        other.store.facts.at(other.tenant, "mira", "passport_deadline")
    assert other.store.facts.history(other.tenant, "mira", "passport_deadline") == []


# -- 5. the token budget ------------------------------------------------------------------------

TRIPS = [
    ("Porto", "July", "Portugal", "river"),
    ("Kyoto", "August", "Japan", "old temples"),
    ("Nairobi", "September", "Kenya", "national park"),
    ("Quebec", "October", "Canada", "citadel"),
    ("Hanoi", "November", "Vietnam", "lake"),
    ("Lima", "December", "Peru", "coast"),
    ("Oslo", "January", "Norway", "harbour"),
    ("Cusco", "February", "Peru", "plaza"),
    ("Seville", "March", "Spain", "cathedral"),
    ("Tbilisi", "April", "Georgia", "old town"),
]


def test_the_token_budget_cuts_evidence_first_and_counts_with_the_model_tokenizer(
    reader: ReadPath,
) -> None:
    reader.declare(
        "passport_deadline", "Date by which the passport must be renewed", value_type="date"
    )
    reader.declare("preferred_language", "Language the person prefers to be answered in")
    reader.declare("home_city", "City the person lives in")
    reader.at("2026-06-01T10:00:00Z")
    sources = [
        ("p-1", "passport_deadline", "2026-07-15", "Mira's passport deadline is 2026-07-15."),
        ("p-2", "preferred_language", "Portuguese", "Mira prefers answers in Portuguese."),
        ("p-3", "home_city", "Lisbon", "Mira lives in Lisbon, close to the airport."),
    ]
    for episode_id, _, _, text in sources:
        reader.record(episode_id, "2026-06-01T09:00:00Z", text)
    for episode_id, attribute, value, _ in sources:
        written = reader.assert_value(episode_id, "mira", attribute, value, "2026-06-01T09:00:00Z")
        assert written.status == "written"
    reader.store.episodes.record_batch(
        reader.tenant,
        [
            {
                "id": f"trip-{index}",
                "occurred_at": f"2026-05-{index + 10:02d}T08:00:00Z",
                "subjects": ["mira"],
                "text": (
                    f"Trip note {index}: Mira is planning a journey to {city} in {month} and"
                    f" asked whether her passport stays valid long enough for {country}."
                    f" She booked a small hotel near the {sight} and wants a window seat on"
                    " every flight of the trip. Her travel agent reminded her to carry printed"
                    " copies of each booking, the insurance policy and any visa letter."
                ),
            }
            for index, (city, month, country, sight) in enumerate(TRIPS)
        ],
    )
    reader.at("2026-06-02T00:00:00Z")
    ask = {
        "subject": "mira",
        "attributes": ["passport_deadline", "preferred_language", "home_city"],
        "evidence_k": 8,
    }
    question = "Is Mira's passport valid for her trips, and where is she flying?"
    count = reader.embedder.count_tokens

    full = reader.context(question, token_budget=32_768, **ask)
    full_lines = _lines(full)
    core = [
        "passport_deadline: 2026-07-15 (from 2026-06-01; source p-1)",
        "preferred_language: Portuguese (from 2026-06-01; source p-2)",
        "home_city: Lisbon (from 2026-06-01; source p-3)",
    ]
    assert full_lines[:4] == [*core, "Evidence:"]
    assert len(full_lines) == 4 + 8
    full_ids = [item.episode_id for item in full.evidence]
    assert full_ids[:3] == ["p-1", "p-2", "p-3"]  # fact sources first
    assert all(episode_id.startswith("trip-") for episode_id in full_ids[3:])

    # Tokens of the block keeping the first c evidence lines (c = 0: the facts alone).
    sizes = [count("\n".join(core))] + [
        count("\n".join(full_lines[: 4 + kept])) for kept in range(1, 9)
    ]
    assert sizes == sorted(sizes)
    assert full.tokens == sizes[8]
    assert sizes[8] <= 512  # the default budget keeps all eight lines

    # None: the default budget of 512, which the full block fits.
    budgets = [16, sizes[0] - 1, sizes[0], sizes[1], sizes[3] - 1, sizes[8] - 1, None]
    for given in budgets:
        extra = {} if given is None else {"token_budget": given}
        result = reader.context(question, **ask, **extra)
        budget = 512 if given is None else given
        lines = _lines(result)
        assert result.tokens == count(result.block), budget
        assert lines[:3] == core, budget  # every fact, whatever the budget
        if budget < sizes[0]:
            assert (result.over_budget, lines, result.evidence) == (True, core, []), budget
            assert result.tokens > budget
            assert [c.role for c in result.citations] == ["fact", "fact", "fact"]
            continue
        # Otherwise the most evidence lines that fit, dropped from the least similar end.
        kept = max(k for k, size in enumerate(sizes) if size <= budget)
        assert kept == 8 if budget >= sizes[8] else kept < 8, budget
        assert result.over_budget is False, budget
        assert result.tokens <= budget, budget
        assert lines == (core if kept == 0 else full_lines[: 4 + kept]), budget
        assert [item.episode_id for item in result.evidence] == full_ids[:kept], budget


# -- 6. search scopes ---------------------------------------------------------------------------

FOUR_SENTENCES = (
    "Mira called on Monday. She asked about the weather in Lisbon."
    " Her passport expires in July. She wants to renew it before the trip."
)
SEARCH_EPISODES: list[tuple[str, str, str | None, list[str], str]] = [
    ("s-1", "2026-05-01T10:00:00Z", "chat-1", ["mira"], FOUR_SENTENCES),
    ("s-2", "2026-05-10T10:00:00Z", "chat-2", ["mira"], "Mira booked a flight for the trip."),
    ("s-3", "2026-05-20T10:00:00Z", "chat-1", ["otto"], "Otto's passport expires next spring."),
    (
        "s-4",
        "2026-05-31T10:00:00Z",
        "chat-2",
        ["mira", "otto"],
        "Mira and Otto renew their passports together. They go to the office before the trip.",
    ),
    ("s-5", "2026-05-31T12:00:00Z", None, [], "The passport office closes early on Fridays."),
]


def test_search_scopes_narrow_k_caps_and_scores_fall(reader: ReadPath) -> None:
    reader.at("2026-06-01T00:00:00Z")
    reader.store.episodes.record_batch(
        reader.tenant,
        [
            {
                "id": episode_id,
                "occurred_at": occurred_at,
                "text": text,
                "subjects": subjects,
                **({"session_id": session} if session else {}),
            }
            for episode_id, occurred_at, session, subjects, text in SEARCH_EPISODES
        ],
    )
    query = "When does Mira's passport expire before the trip?"
    snippets = {row[0]: row[4] for row in SEARCH_EPISODES}
    snippets["s-1"] = "Her passport expires in July. She wants to renew it before the trip."
    rows = {row[0]: row for row in SEARCH_EPISODES}

    everything = reader.search(query, k=50, mode="vector")
    ids = [hit.episode_id for hit in everything.results]
    assert sorted(ids) == ["s-1", "s-2", "s-3", "s-4", "s-5"]
    scores = [hit.score for hit in everything.results]
    assert scores == sorted(scores, reverse=True)
    for hit in everything.results:
        _, occurred_at, session, _, _ = rows[hit.episode_id]
        assert (hit.snippet, format_timestamp(hit.occurred_at), hit.session_id, hit.kind) == (
            snippets[hit.episode_id],
            occurred_at,
            session,
            "message",
        )

    capped = reader.search(query, k=2, mode="vector")
    assert [hit.episode_id for hit in capped.results] == ids[:2]
    assert capped.search == SearchPlan(
        method="exact", scope_size=5, scope_size_capped=False, mode="vector"
    )

    scopes: list[tuple[dict[str, Any], list[str]]] = [
        ({"subject": "mira"}, ["s-1", "s-2", "s-4"]),
        ({"session_id": "chat-1"}, ["s-1", "s-3"]),
        (  # from is inclusive, to exclusive
            {
                "occurred_from": ts("2026-05-10T10:00:00Z"),
                "occurred_to": ts("2026-05-31T10:00:00Z"),
            },
            ["s-2", "s-3"],
        ),
        ({"subject": "mira", "session_id": "chat-2"}, ["s-2", "s-4"]),
        ({"subject": "otto", "occurred_from": ts("2026-05-25T00:00:00Z")}, ["s-4"]),
    ]
    for scope, expected in scopes:
        found = reader.search(query, k=50, mode="vector", **scope)
        assert sorted(hit.episode_id for hit in found.results) == expected, scope
        # The same episodes in the same order as the unscoped search, with the same scores.
        assert [(hit.episode_id, hit.score) for hit in found.results] == [
            (hit.episode_id, hit.score) for hit in everything.results if hit.episode_id in expected
        ], scope
        assert found.search.scope_size == len(expected), scope
        for hit in found.results:
            episode = reader.store.episodes.get(reader.tenant, hit.episode_id)
            assert _in_scope(episode.subjects, episode.session_id, episode.occurred_at, scope)
        one = reader.search(query, k=1, mode="vector", **scope)
        assert [hit.episode_id for hit in one.results] == [found.results[0].episode_id], scope

    # Past the exact limit the scope is counted (to the limit and one), never scanned exactly,
    # and the HNSW index finds the same nearest episodes in this small store.
    vector = reader.embedder.embed([query])[0]

    def search_to(limit: int) -> tuple[list[EvidenceHit], SearchPlan]:
        return reader.store.snapshots.read(
            reader.tenant,
            lambda snapshot: snapshot.search_evidence(
                vector,
                model=reader.embedder.model_id,
                dimensions=reader.embedder.dimensions,
                k=3,
                exact_limit=limit,
            ),
        )

    for limit, method in ((5, "exact"), (4, "hnsw"), (1, "hnsw")):
        hits, plan = search_to(limit)
        over = method == "hnsw"
        assert plan == SearchPlan(
            method=method,
            scope_size=limit + 1 if over else 5,
            scope_size_capped=over,
            mode="vector",
        ), limit
        assert [hit.episode_id for hit in hits] == ids[:3], limit


def _in_scope(
    subjects: list[str], session_id: str | None, occurred_at: datetime, scope: dict[str, Any]
) -> bool:
    return (
        ("subject" not in scope or scope["subject"] in subjects)
        and ("session_id" not in scope or scope["session_id"] == session_id)
        and ("occurred_from" not in scope or occurred_at >= scope["occurred_from"])
        and ("occurred_to" not in scope or occurred_at < scope["occurred_to"])
    )


# -- 7. a disputed key --------------------------------------------------------------------------


def test_a_disputed_key_is_uncertain_and_cites_both_sides(reader: ReadPath) -> None:
    reader.declare("home_city", "City the person lives in", on_equal_start="source_precedence")
    reader.declare(
        "passport_deadline", "Date by which the passport must be renewed", value_type="date"
    )
    reader.at("2026-06-04T14:00:00Z")
    reader.record("m1", "2026-06-04T12:00:00Z", "Mira: I moved to Lisbon last month.")
    reader.record("m2", "2026-06-04T13:00:00Z", "Mira: my new home is in Porto.")
    incumbent = reader.assert_value("m1", "mira", "home_city", "Lisbon", "2026-05-01T00:00:00Z")
    challenger = reader.assert_value("m2", "mira", "home_city", "Porto", "2026-05-01T00:00:00Z")
    assert incumbent.status == "written"
    assert incumbent.fact is not None
    assert (challenger.status, challenger.reason) == (
        "conflict",
        "disputed: a source of equal rank starts a different value here",
    )
    reader.at("2026-06-05T00:00:00Z")
    now = "2026-06-05T00:00:00Z"

    result = reader.context("Where does Mira live?")

    assert _plan(result) == {
        "mode": "current",
        "valid_at": now,
        "known_at": now,
        "subject": "mira",
        "attributes": ["home_city"],
        "routed": True,
    }
    assert _lines(result) == [
        "Uncertain:",
        "- home_city: Lisbon (source m1) vs Porto (source m2), disputed from 2026-05-01",
        "Evidence:",
        "[m1] Mira: I moved to Lisbon last month.",
        "[m2] disputed: Mira: my new home is in Porto.",  # the challenger's line says so
    ]
    assert _json(result.uncertain) == [
        {
            "subject": "mira",
            "attribute": "home_city",
            "incumbent": {
                "fact_id": str(incumbent.fact.fact_id),
                "value": "Lisbon",
                "valid_from": "2026-05-01T00:00:00Z",
                "valid_to": None,
                "source_episode_id": "m1",
                "source_kind": "message",
            },
            "challengers": [
                {
                    "conflict_id": str(challenger.conflict_id),
                    "value": "Porto",
                    "source_episode_id": "m2",
                    "source_kind": "message",
                    "evidence": "Mira: my new home is in Porto.",
                    "evidence_verified": True,
                }
            ],
        }
    ]
    assert [(f.value, f.source_episode_id, f.disputed) for f in result.facts] == [
        ("Lisbon", "m1", True)
    ]
    assert _json(result.citations) == [
        {"episode_id": "m1", "occurred_at": "2026-06-04T12:00:00Z", "role": "fact"},
        {"episode_id": "m2", "occurred_at": "2026-06-04T13:00:00Z", "role": "challenger"},
    ]


def test_a_read_as_known_before_a_dispute_was_raised_is_not_disputed(reader: ReadPath) -> None:
    reader.declare("home_city", "City the person lives in", on_equal_start="source_precedence")
    reader.at("2026-06-01T10:00:00Z")
    reader.record("m1", "2026-06-01T09:00:00Z", "Mira: I moved to Lisbon.")
    reader.assert_value("m1", "mira", "home_city", "Lisbon", "2026-05-01T00:00:00Z")
    reader.at("2026-06-04T10:00:00Z")
    reader.record("m2", "2026-06-04T09:00:00Z", "Mira: my home is in Porto.")
    disputed = reader.assert_value("m2", "mira", "home_city", "Porto", "2026-05-01T00:00:00Z")
    assert disputed.status == "conflict"
    reader.at("2026-06-05T00:00:00Z")

    before = reader.store.facts.at(
        reader.tenant, "mira", "home_city", known_at="2026-06-02T00:00:00Z"
    )
    now = reader.store.facts.current(reader.tenant, "mira", "home_city")
    assert (before.value, before.disputed, before.challengers) == ("Lisbon", False, [])
    assert (now.value, now.disputed, [c.value for c in now.challengers]) == (
        "Lisbon",
        True,
        ["Porto"],
    )
    then = reader.context(
        "Where did Mira live?", attributes=["home_city"], known_at="2026-06-02T00:00:00Z"
    )
    assert "Uncertain:" not in then.block
    assert _lines(then)[1] == "home_city: Lisbon (from 2026-05-01; source m1)"


def test_a_challenger_is_cited_with_its_time_even_without_evidence(reader: ReadPath) -> None:
    reader.declare("home_city", "City the person lives in", on_equal_start="source_precedence")
    reader.at("2026-06-04T14:00:00Z")
    reader.record("m1", "2026-06-04T12:00:00Z", "Mira: I moved to Lisbon last month.")
    reader.record("m2", "2026-06-04T13:00:00Z", "Mira: my new home is in Porto.")
    reader.assert_value("m1", "mira", "home_city", "Lisbon", "2026-05-01T00:00:00Z")
    reader.assert_value("m2", "mira", "home_city", "Porto", "2026-05-01T00:00:00Z")

    result = reader.context("Where does Mira live?", evidence_k=0)

    assert _json(result.citations) == [
        {"episode_id": "m1", "occurred_at": "2026-06-04T12:00:00Z", "role": "fact"},
        {"episode_id": "m2", "occurred_at": "2026-06-04T13:00:00Z", "role": "challenger"},
    ]


def test_a_scoped_search_states_only_its_filters_each_in_a_form_an_index_serves(
    pool: ConnectionPool,
) -> None:
    # "x IS NULL OR ..." filters defeat the indexes once a prepared plan turns generic, and
    # under row-level security an index serves only leakproof conditions (array containment
    # is not): a scope states only what it sets, the subject by equality on episode_subjects.
    scope = SearchScope(subject="mira", occurred_to=ts("2026-06-01T00:00:00Z"))
    # As the API runs it: the pooled role, held by row-level security to one tenant.
    with pool.connection() as conn, conn.transaction():
        where = scope_condition("a-model", scope).as_string(conn)
        conn.execute("SELECT set_config('sgam.tenant_id', 'a-tenant', true)")
        conn.execute("SET LOCAL enable_seqscan = off")
        [[plan]] = conn.execute(
            "EXPLAIN (FORMAT JSON) SELECT 1 FROM episode_vectors AS v"
            " JOIN episodes AS e ON e.tenant_id = v.tenant_id AND e.id = v.episode_id" + where,
            {
                "tenant_id": "a-tenant",
                "subject": "mira",
                "occurred_to": scope.occurred_to,
                "known_at": None,
            },
        ).fetchall()
    assert "s.subject = %(subject)s" in where
    assert "e.occurred_at < %(occurred_to)s" in where
    for absent in ("IS NULL OR", "session_id", "occurred_from", "recorded_at", "@>"):
        assert absent not in where
    assert "episode_subjects_pkey" in json.dumps(plan)


def test_a_challenger_refused_under_reject_is_in_conflict_never_superseded(
    reader: ReadPath,
) -> None:
    reader.declare("home_city", "City the person lives in")  # on_equal_start: reject
    reader.at("2026-06-04T14:00:00Z")
    reader.record("s1", "2026-06-04T12:00:00Z", "Mira: I live in Bergen.")
    reader.record("s4", "2026-06-04T13:00:00Z", "Mira said she lives in Trondheim.")
    reader.assert_value("s1", "mira", "home_city", "Bergen", "2026-05-01T00:00:00Z")
    refused = reader.assert_value("s4", "mira", "home_city", "Trondheim", "2026-05-01T00:00:00Z")
    assert refused.status == "conflict"
    reader.at("2026-06-05T00:00:00Z")

    result = reader.context("Where does Mira live?")

    assert _lines(result) == [
        "home_city: Bergen (from 2026-05-01; source s1)",
        "Evidence:",
        "[s1] Mira: I live in Bergen.",
        "[s4] in conflict: Mira said she lives in Trondheim.",
    ]
    assert result.uncertain == []
    assert [(item.superseded, item.mark) for item in result.evidence] == [
        (False, None),
        (True, "in conflict"),
    ]


def test_an_episode_the_store_never_learned_from_is_judged_by_its_time(reader: ReadPath) -> None:
    """A missed extraction: e7 states a new deadline no candidate carried."""
    reader.declare(
        "passport_deadline", "Date by which the passport must be renewed", value_type="date"
    )
    reader.at("2026-06-09T00:00:00Z")
    reader.record(
        "e0",
        "2026-05-20T09:00:00Z",
        "Mira's passport renewal deadline is in July.",
        subjects=["mira"],
    )
    reader.record("e2", "2026-06-03T10:00:00Z", "Her passport deadline is 2026-06-30.")
    reader.record(
        "e7",
        "2026-06-08T10:00:00Z",
        "Mira's passport renewal deadline moved to August.",
        subjects=["mira"],
    )
    reader.assert_value("e2", "mira", "passport_deadline", "2026-06-30", "2026-06-03T10:00:00Z")
    reader.at("2026-06-10T00:00:00Z")

    result = reader.context("When is Mira's passport deadline?")

    lines = _lines(result)
    assert lines[:4] == [
        "Uncertain:",
        "- passport_deadline: 2026-06-30 (source e2); newer evidence e7 may change it",
        "Evidence:",
        "[e2] uncertain: Her passport deadline is 2026-06-30.",  # no firmer than its key
    ]
    assert set(lines[4:]) == {  # in the order of their similarity to the question
        "[e7] newer than memory: Mira's passport renewal deadline moved to August.",
        "[e0] older than the value since 2026-06-03: Mira's passport renewal deadline is in July.",
    }
    [entry] = result.uncertain
    assert (entry.attribute, entry.newer_evidence) == ("passport_deadline", ["e7"])
