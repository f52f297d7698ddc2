"""The equal-start policy trace, replayed: outranked, disputed, resolved, replaced, retracted.

Tenant acme, key (account:42, tier) under ``source_precedence``. Every assertion below is
about one start, 2026-06-01T09:00:00Z, that four sources disagree over.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from server.replay.runner import replay_file

TRACES = Path(__file__).resolve().parents[2] / "evals" / "traces"
TRACE = TRACES / "policies.jsonl"
EXPECTED = TRACES / "policies.expected.jsonl"
START = "2026-06-01T09:00:00Z"


@pytest.fixture(scope="module")
def results(server_conninfo: str) -> list[dict[str, Any]]:
    """The policy trace replayed on a temporary database of the session's server."""
    return replay_file(TRACE, database_url=server_conninfo)


def result(results: list[dict[str, Any]], line: int) -> dict[str, Any]:
    """The successful result of input line ``line``."""
    found = results[line - 1]
    assert found["line"] == line
    assert found["ok"], found
    body: dict[str, Any] = found["result"]
    return body


def read(fact: dict[str, Any]) -> tuple[Any, ...]:
    """What a reader of a fact relies on."""
    return (
        fact["value"],
        fact["source_episode_id"],
        fact["source_kind"],
        fact["valid_from"],
        fact["status"],
        fact["disputed"],
        [(c["value"], c["source_episode_id"]) for c in fact["challengers"]],
    )


def test_every_line_succeeds_and_matches_the_shipped_results(
    results: list[dict[str, Any]],
) -> None:
    expected = [json.loads(line) for line in EXPECTED.read_text().splitlines() if line]
    assert len(expected) == len(TRACE.read_text().splitlines()) == 21
    assert all(line["ok"] for line in results)
    assert results == expected


def test_a_lower_ranked_tool_result_is_outranked_and_changes_nothing(
    results: list[dict[str, Any]],
) -> None:
    written = result(results, 3)
    outranked = result(results, 5)
    assert (written["status"], outranked["status"], outranked["reason"]) == (
        "written",
        "unchanged",
        "outranked",
    )
    assert outranked["fact"] == written["fact"]  # the caller sees the incumbent, untouched
    assert read(result(results, 6)) == ("pro", "m1", "message", START, "current", False, [])


def test_an_equal_rank_message_disputes_the_key_on_every_read(
    results: list[dict[str, Any]],
) -> None:
    disputed = result(results, 8)
    assert (disputed["status"], disputed["fact"]) == ("conflict", None)
    assert disputed["reason"].startswith("disputed")
    incumbent_read = ("pro", "m1", "message", START, "current", True, [("business", "m2")])
    current = result(results, 9)
    [in_profile] = result(results, 10)["facts"]
    assert read(current) == incumbent_read
    assert in_profile == current
    assert current["challengers"][0]["conflict_id"] == disputed["conflict_id"]


def test_resolving_for_the_challenger_writes_it_over_the_incumbent(
    results: list[dict[str, Any]],
) -> None:
    incumbent = result(results, 3)["fact"]
    resolved = result(results, 11)
    conflict, fact = resolved["conflict"], resolved["fact"]
    assert (
        conflict["conflict_id"],
        conflict["status"],
        conflict["resolution"],
        conflict["resolved_fact_id"],
    ) == (result(results, 8)["conflict_id"], "resolved", "challenger", fact["fact_id"])
    assert fact["supersedes"] == incumbent["fact_id"]
    assert read(result(results, 12)) == (
        "business",
        "m2",
        "message",
        START,
        "current",
        False,
        [],
    )


def test_a_user_confirmation_replaces_and_its_retraction_restores_the_business_fact(
    results: list[dict[str, Any]],
) -> None:
    business = result(results, 12)
    confirmed = result(results, 14)
    assert (confirmed["status"], confirmed["fact"]["supersedes"]) == (
        "written",
        business["fact_id"],
    )
    assert read(result(results, 15)) == (
        "enterprise",
        "c1",
        "user_confirmation",
        START,
        "current",
        False,
        [],
    )
    assert result(results, 16) == {
        "status": "retracted",
        "fact_id": confirmed["fact"]["fact_id"],
        "restored_fact_id": business["fact_id"],
    }
    restored = result(results, 17)
    assert (restored["fact_id"], restored["value"], restored["recorded_at"]) == (
        business["fact_id"],
        "business",
        "2026-06-01T13:00:00Z",
    )


def test_erasing_the_winning_episode_brings_the_first_incumbent_back(
    results: list[dict[str, Any]],
) -> None:
    erased = result(results, 18)
    assert (
        erased["status"],
        erased["facts_retracted"],
        erased["conflicts_deleted"],
        erased["fact_versions_deleted"],
        erased["episodes_stubbed"],
        erased["episodes_deleted"],
    ) == ("erased", 1, 1, 2, 0, 1)
    back = result(results, 19)
    assert read(back) == ("pro", "m1", "message", START, "current", False, [])
    assert back["fact_id"] == result(results, 3)["fact"]["fact_id"]
    # What was believed at 12:30 (the confirmation) is still answerable.
    believed = result(results, 20)
    assert (believed["value"], believed["source_episode_id"], believed["status"]) == (
        "enterprise",
        "c1",
        "retired",
    )


def test_history_keeps_every_version_but_the_erased_episodes(
    results: list[dict[str, Any]],
) -> None:
    versions = result(results, 21)["versions"]
    assert [
        (v["value"], v["source_episode_id"], v["recorded_at"], v["retired_at"], v["evidence"])
        for v in versions
    ] == [
        (
            "pro",
            "m1",
            "2026-06-01T09:00:05Z",
            "2026-06-01T11:00:00Z",
            "account 42 moved to the pro tier this morning.",
        ),
        (
            "enterprise",
            "c1",
            "2026-06-01T12:00:00Z",
            "2026-06-01T13:00:00Z",
            "since this morning account 42 is on enterprise.",
        ),
        (
            "pro",
            "m1",
            "2026-06-01T14:00:00Z",
            None,
            "account 42 moved to the pro tier this morning.",
        ),
    ]
    assert all(v["valid_from"] == START and v["valid_to"] is None for v in versions)
    assert [v["status"] for v in versions] == ["retired"] * 2 + ["current"]
