"""Period reads end to end: a question that states a range gets every value valid in it.

The real embedding model and the embedded PostgreSQL, as in test_read_path.py, on the same
Northwind history (five CEOs from 1975).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from retrieval.search.embeddings import Embedder
from store.contract.times import format_timestamp
from store.db.clock import ManualClock
from store.facts.reads import read_period
from tests.conftest import ts
from tests.read_helpers import ReadPath, read_path
from tests.store.test_read_path import NORTHWIND, NOW, _northwind

# The CEOs' windows, as the store holds them: each until the next one began.
WINDOWS = {
    row[0]: (row[1][:10], NORTHWIND[i + 1][1][:10] if i + 1 < len(NORTHWIND) else None)
    for i, row in enumerate(NORTHWIND)
}
NAMES = {row[0]: row[2] for row in NORTHWIND}
STATEMENTS = {row[0]: f"Northwind {row[3].format(row[2])}" for row in NORTHWIND}


def _key_line(episode_id: str) -> str:
    start, end = WINDOWS[episode_id]
    until = f" until {end}" if end else ""
    return f"ceo: {NAMES[episode_id]} (from {start}{until}; source {episode_id})"


def _superseded(episode_id: str) -> str:
    start, end = WINDOWS[episode_id]
    until = f" until {end}" if end else ""
    return f"[{episode_id}] superseded (from {start}{until}): {STATEMENTS[episode_id]}"


@pytest.fixture(scope="module")
def northwind(pool: ConnectionPool, embedder: Embedder) -> ReadPath:
    """Northwind's history, written once: the questions below only read it."""
    path = read_path(pool, ManualClock(ts(NOW)), embedder)
    _northwind(path)
    return path


@dataclass(frozen=True)
class PeriodCase:
    """A question stating a period, the range it plans and the CEOs valid in it."""

    question: str
    valid_from: str | None
    valid_to: str | None
    header: str
    sources: tuple[str, ...]


CASES = [
    PeriodCase(
        "Who was Northwind's CEO from 1980 to 1990?",
        "1980-01-01T00:00:00Z",
        "1991-01-01T00:00:00Z",
        "northwind from 1980-01-01 to 1991-01-01:",
        ("nw-1975", "nw-1982", "nw-1989"),
    ),
    PeriodCase(
        "Who was Northwind's CEO in 1985?",
        "1985-01-01T00:00:00Z",
        "1986-01-01T00:00:00Z",
        "northwind from 1985-01-01 to 1986-01-01:",
        ("nw-1982",),
    ),
    PeriodCase(
        "Who was Northwind's CEO between 1982 and 1988?",
        "1982-01-01T00:00:00Z",
        "1989-01-01T00:00:00Z",
        "northwind from 1982-01-01 to 1989-01-01:",
        ("nw-1975", "nw-1982"),
    ),
    PeriodCase(
        "Who was Northwind's CEO until 1980?",
        None,
        "1981-01-01T00:00:00Z",
        "northwind until 1981-01-01:",
        ("nw-1975",),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.question for case in CASES])
def test_a_period_question_gives_every_value_valid_in_it(
    northwind: ReadPath, case: PeriodCase
) -> None:
    result = northwind.context(case.question)

    plan = result.plan.model_dump(mode="json", exclude={"reasons"})
    expected: dict[str, Any] = {
        "mode": "period",
        "valid_at": case.valid_from or "1980-12-31T23:59:59Z",
        "known_at": NOW,
        "subject": "northwind",
        "attributes": ["ceo"],
        "routed": True,
    }
    expected.update({"valid_from": case.valid_from} if case.valid_from else {})
    expected.update({"valid_to": case.valid_to} if case.valid_to else {})
    assert plan == expected
    assert [(fact.value, fact.source_episode_id) for fact in result.facts] == [
        (NAMES[source], source) for source in case.sources
    ]
    lines = result.block.splitlines()
    shown = len(case.sources)
    assert lines[: shown + 1] == [case.header, *(_key_line(source) for source in case.sources)]
    assert lines[shown + 1] == "Evidence:"
    # Every value valid in the period is quoted unmarked, its source first; at most one
    # statement of another period follows, marked with that CEO's window.
    evidence = lines[shown + 2 :]
    assert evidence[:shown] == [f"[{source}] {STATEMENTS[source]}" for source in case.sources]
    others = {_superseded(row[0]) for row in NORTHWIND if row[0] not in case.sources}
    assert set(evidence[shown:]) <= others
    assert len(evidence[shown:]) <= 1
    assert [(c.episode_id, c.role) for c in result.citations][:shown] == [
        (source, "fact") for source in case.sources
    ]
    assert [item.superseded for item in result.evidence] == [
        line.split("] ", 1)[1].startswith("superseded") for line in evidence
    ]
    assert (result.uncertain, result.over_budget) == ([], False)


def test_the_request_body_names_the_period(northwind: ReadPath) -> None:
    result = northwind.context(
        "Who runs Northwind?",
        valid_from=ts("2026-06-02T00:00:00Z"),
        valid_to=ts("2026-06-04T00:00:00Z"),
        evidence_k=0,
    )
    assert result.block.splitlines() == [
        "northwind from 2026-06-02 to 2026-06-04:",
        "ceo: Dmitri Volkov (from 2026-06-01 until 2026-06-03; source nw-2026a)",
        "ceo: Elena Park (from 2026-06-03; source nw-2026b)",
    ]
    assert (result.plan.mode, result.plan.valid_from, result.plan.valid_to) == (
        "period",
        ts("2026-06-02T00:00:00Z"),
        ts("2026-06-04T00:00:00Z"),
    )


def _read(
    path: ReadPath, *, valid_from: str | None, valid_to: str | None, known_at: str = NOW
) -> list[tuple[str, str | None, str | None]]:
    """The CEOs ``read_period`` finds in the range, as known at ``known_at``."""
    facts = path.store.snapshots.read(
        path.tenant,
        lambda snapshot: read_period(
            snapshot._conn,  # the store's own reads, tested below the snapshot
            path.tenant,
            subject="northwind",
            attributes=["ceo"],
            valid_from=ts(valid_from) if valid_from else None,
            valid_to=ts(valid_to) if valid_to else None,
            known_at=ts(known_at),
            now=ts(NOW),
        ),
    )
    return [
        (fact.source_episode_id, _text(fact.valid_from), _text(fact.valid_to)) for fact in facts
    ]


def _text(value: datetime | None) -> str | None:
    return None if value is None else format_timestamp(value)[:10]


def _windows(*episodes: str) -> list[tuple[str, str | None, str | None]]:
    return [(episode, *WINDOWS[episode]) for episode in episodes]


def test_read_period_returns_every_version_overlapping_the_range(northwind: ReadPath) -> None:
    assert _read(northwind, valid_from="1982-09-15T09:00:00Z", valid_to="1989-01-10T09:00:00Z") == (
        _windows("nw-1982")  # half-open on both sides: the neighbours only touch it
    )
    assert _read(northwind, valid_from="1982-09-15T08:59:59Z", valid_to="1989-01-10T09:00:01Z") == (
        _windows("nw-1975", "nw-1982", "nw-1989")
    )
    assert _read(northwind, valid_from="2026-05-31T00:00:00Z", valid_to=None) == _windows(
        "nw-1989", "nw-2026a", "nw-2026b"
    )
    assert _read(northwind, valid_from="2026-06-02T00:00:00Z", valid_to=None) == _windows(
        "nw-2026a", "nw-2026b"
    )
    assert _read(northwind, valid_from=None, valid_to="1975-03-01T09:00:00Z") == []
    assert _read(northwind, valid_from=None, valid_to=None) == _windows(*WINDOWS)


def test_read_period_sees_knowledge_as_it_was(northwind: ReadPath) -> None:
    period = {"valid_from": "1980-01-01T00:00:00Z", "valid_to": "1991-01-01T00:00:00Z"}
    assert _read(northwind, **period, known_at="2026-06-04T00:00:00Z") == []  # nothing yet
    # The first write (one second after the episodes) knew Alice Moreno alone, open ended:
    # the later CEOs' writes closed her window.
    assert _read(northwind, **period, known_at="2026-06-05T00:00:01.500000Z") == [
        ("nw-1975", "1975-03-01", None)
    ]
