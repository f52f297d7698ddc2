"""The bulk import against the write path on histories no one wrote by hand.

A seeded generator draws lines about a few keys: episodes arriving out of order, a key corrected
again and again (later starts, earlier starts, the same start with another value under each
equal-start policy), one key several times in one line, episodes recorded twice. The import,
its rows written in chunks of a few rows so that chunks overlap their planning, must store what
recording each episode and applying its candidates one call at a time stores: every version
and window, supersession, conflict, episode, each candidate's outcome, and the receipts. A line
that fails in the middle, or a chunk that fails, leaves nothing behind.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from store.db.clock import ManualClock
from store.episodes import bulk_copy
from store.errors import NotFound
from store.service import MemoryStore
from tests.conftest import ts
from tests.helpers import owner_connection
from tests.store import test_import as by_hand

_SUBJECTS = ("mira", "kai", "zed")
"""Few subjects, so candidates meet on the same keys."""
_DAYS = tuple(f"2026-05-{day:02d}T00:00:00Z" for day in (3, 9, 14, 20, 27))
"""The instants candidates start at: few, so starts meet, fall inside windows and come early."""
_VALUES: dict[str, Callable[[random.Random], str]] = {
    "deadline": lambda rng: f"2026-{rng.randint(7, 9):02d}-{rng.choice((1, 15)):02d}",
    "tier": lambda rng: rng.choice(("gold", "silver", "bronze")),
    "balance": lambda rng: rng.choice(("10", "20", "2.50", "1e3")),
}
_KINDS = ("message", "tool_result", "user_confirmation")


@pytest.fixture
def clock() -> ManualClock:
    """One system time for both ways of writing a history."""
    return ManualClock(ts("2026-06-10T00:00:00Z"))


def generated_history(
    seed: int, lines: int = 24, subjects: tuple[str, ...] = _SUBJECTS
) -> list[dict[str, Any]]:
    """A history drawn from ``seed``: out of order, corrected, repeated, re-recorded."""
    rng = random.Random(seed)
    history: list[dict[str, Any]] = []
    for number in range(lines):
        if history and rng.random() < 0.15:  # an episode recorded again, with new candidates
            again = dict(rng.choice(history))
            again["updates"] = [_candidate(rng, subjects) for _ in range(rng.randint(1, 3))]
            history.append(again)
            continue
        updates = [_candidate(rng, subjects) for _ in range(rng.randint(1, 6))]
        if rng.random() < 0.3:  # the same key corrected within the line
            first = updates[0]
            updates.append({**first, "value": _VALUES[first["attribute"]](rng)})
        occurred = f"2026-05-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:00:00Z"
        history.append(
            by_hand.episode_line(f"g{number}", occurred, *updates, kind=rng.choice(_KINDS))
        )
    return history


def _candidate(rng: random.Random, subjects: tuple[str, ...]) -> dict[str, Any]:
    attribute = rng.choice(tuple(_VALUES))
    extra = {"valid_from": rng.choice(_DAYS)} if rng.random() < 0.8 else {}
    return by_hand.candidate(rng.choice(subjects), attribute, _VALUES[attribute](rng), **extra)


def receipts_of(pool: ConnectionPool, tenant: str) -> Counter[tuple[Any, ...]]:
    """The tenant's receipts, a version named by what it says rather than by its id."""
    with owner_connection(pool) as conn, conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            "SELECT version_id::text AS id, subject, attribute, source_episode_id, valid_from,"
            " valid_to, retired_at IS NULL AS believed FROM fact_versions"
            " WHERE tenant_id = %s",
            [tenant],
        )
        named = {row.pop("id"): tuple(row.values()) for row in cur.fetchall()}
        cur.execute(
            "SELECT version, action, memory_type, written_at, provenance, activated,"
            " invalidation FROM receipts WHERE tenant_id = %s",
            [tenant],
        )
        rows = cur.fetchall()
    return Counter((named.get(row.pop("version")), *row.values()) for row in rows)


def _same_as_one_call_at_a_time(
    store: MemoryStore, pool: ConnectionPool, history: list[dict[str, Any]]
) -> Counter[str]:
    one_by_one, imported = by_hand.new_tenant(store, "calls"), by_hand.new_tenant(store, "import")
    results = by_hand.one_call_at_a_time(store, one_by_one, history)
    outcome = store.episodes.import_lines(by_hand.import_text(imported, history))

    assert by_hand.stored_rows(pool, imported) == by_hand.stored_rows(pool, one_by_one)
    assert receipts_of(pool, imported) == receipts_of(pool, one_by_one)
    statuses = Counter(result.status for _, result in results)
    assert outcome.candidates == dict(sorted(statuses.items()))
    refused = [
        {"line": line, **result.model_dump(include={"index", "status", "reason", "field"})}
        for line, result in results
        if result.status in {"invalid", "conflict"}
    ]
    assert [item.model_dump() for item in outcome.refused] == refused
    return statuses


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_generated_history_imports_as_one_call_at_a_time_stores_it(
    store: MemoryStore, pool: ConnectionPool, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    monkeypatch.setattr(bulk_copy, "CHUNK_ROWS", 3)  # many chunks, each beside the next's plan
    history = generated_history(seed)
    statuses = _same_as_one_call_at_a_time(store, pool, history)
    # The draw reaches the rules it is meant to: versions written, values repeated, and
    # equal starts logged as conflicts by the attribute's policy.
    assert statuses["written"] > 10
    assert statuses["unchanged"] > 0
    assert statuses["conflict"] > 0


def test_the_hand_written_history_leaves_the_receipts_one_call_at_a_time_leaves(
    store: MemoryStore, pool: ConnectionPool
) -> None:
    _same_as_one_call_at_a_time(store, pool, by_hand.HISTORY)


def test_a_failing_line_in_the_middle_leaves_nothing_of_the_lines_before_it(
    store: MemoryStore, pool: ConnectionPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bulk_copy, "CHUNK_ROWS", 2)
    tenant = by_hand.new_tenant(store, "a-middle")  # sorts before the missing tenant: written first
    history = generated_history(4)
    middle = len(history) // 2
    lines = by_hand.import_text(tenant, history[:middle])
    lines += by_hand.import_text("nobody-here", history[middle : middle + 1])
    lines += by_hand.import_text(tenant, history[middle + 1 :])
    with pytest.raises(NotFound, match=rf"^line {middle + 1}: tenant 'nobody-here'"):
        store.episodes.import_lines(lines)
    assert by_hand.stored_rows(pool, tenant) == {
        "versions": [],
        "conflicts": [],
        "episodes": [],
        "expiries": [],
    }
    assert receipts_of(pool, tenant) == Counter()


def test_a_chunk_the_database_refuses_after_others_were_sent_leaves_nothing(
    store: MemoryStore, pool: ConnectionPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bulk_copy, "CHUNK_ROWS", 2)
    send_chunk = bulk_copy.send_chunk
    chunks = Counter[str]()

    def third_cites_no_episode(conn: Any, columns: dict[str, list[Any]], params: Any) -> None:
        chunks["sent"] += 1
        if chunks["sent"] == 3:  # its rows' foreign key fails, at the server
            columns = {**columns, "source_episode_id": ["nowhere"] * len(columns["n"])}
        send_chunk(conn, columns, params)

    monkeypatch.setattr(bulk_copy, "send_chunk", third_cites_no_episode)
    tenant = by_hand.new_tenant(store, "chunks")
    history = generated_history(5, subjects=tuple(f"s{n}" for n in range(20)))
    with pytest.raises(NotFound, match="a referenced record does not exist"):
        store.episodes.import_lines(by_hand.import_text(tenant, history))
    assert chunks["sent"] > 3  # later chunks were sent before the refusal came back
    assert by_hand.stored_rows(pool, tenant)["versions"] == []
    assert by_hand.stored_rows(pool, tenant)["episodes"] == []
    assert receipts_of(pool, tenant) == Counter()
