"""The seed's trace, replayed: the contract's worked example must hold (scores within noise)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from retrieval.search.embeddings import Embedder
from server.cli import app
from server.replay.compare import result_differences
from server.replay.runner import replay_file

TRACES = Path(__file__).resolve().parents[2] / "evals" / "traces"
SEED = TRACES / "seed_mira.jsonl"
EXPECTED = TRACES / "seed_mira.expected.jsonl"


@pytest.fixture(scope="module")
def results(server_conninfo: str, embedder: Embedder) -> list[dict[str, Any]]:
    """The seed trace replayed on a temporary database of the session's server."""
    return replay_file(SEED, database_url=server_conninfo, embedder=embedder)


def _fact(results: list[dict[str, Any]], line: int) -> dict[str, Any]:
    result = results[line - 1]
    assert result["line"] == line
    assert result["ok"], result
    fact: dict[str, Any] = result["result"]
    return fact


def test_every_line_succeeds_and_matches_the_shipped_results(
    results: list[dict[str, Any]],
) -> None:
    expected = [json.loads(line) for line in EXPECTED.read_text().splitlines() if line]
    assert result_differences(results, expected) == []


def test_now_is_e2s_value_and_june_2_is_e1s(results: list[dict[str, Any]]) -> None:
    now = _fact(results, 7)
    june_2 = _fact(results, 8)
    assert (now["value"], now["source_episode_id"], now["status"]) == (
        "2026-06-30",
        "e2",
        "current",
    )
    assert (june_2["value"], june_2["source_episode_id"]) == ("2026-07-15", "e1")
    assert (june_2["valid_from"], june_2["valid_to"]) == (
        "2026-06-01T09:00:00Z",
        "2026-06-03T10:00:00Z",
    )
    assert now["supersedes"] == june_2["fact_id"]
    assert june_2["ended_by"] == now["fact_id"]


def test_known_at_before_e2_was_recorded_returns_e1s_value(results: list[dict[str, Any]]) -> None:
    believed = _fact(results, 9)
    assert (believed["value"], believed["source_episode_id"]) == ("2026-07-15", "e1")
    assert believed["valid_to"] is None  # then, nothing had closed it yet
    assert believed["status"] == "retired"  # no longer believed now


def test_delayed_e0_fills_the_gap_before_e1_and_changes_nothing_else(
    results: list[dict[str, Any]],
) -> None:
    written = results[10]["result"]["fact"]
    assert (written["valid_from"], written["valid_to"]) == (
        "2026-05-30T08:00:00Z",
        "2026-06-01T09:00:00Z",
    )
    assert written["supersedes"] is None
    e1_fact = _fact(results, 8)["fact_id"]
    assert written["ended_by"] == e1_fact
    assert _fact(results, 12)["value"] == "2026-08-01"
    assert _fact(results, 13) == _fact(results, 8)  # June 2 unchanged, same version
    assert _fact(results, 14) == _fact(results, 7)  # e2 still current, same version


def test_history_shows_every_version_with_both_windows(results: list[dict[str, Any]]) -> None:
    versions = results[14]["result"]["versions"]
    summary = [
        (
            v["value"],
            v["source_episode_id"],
            v["valid_from"],
            v["valid_to"],
            v["recorded_at"],
            v["retired_at"],
            v["status"],
        )
        for v in versions
    ]
    assert summary == [
        (
            "2026-08-01",
            "e0",
            "2026-05-30T08:00:00Z",
            "2026-06-01T09:00:00Z",
            "2026-06-05T12:00:00Z",
            None,
            "past",
        ),
        (
            "2026-07-15",
            "e1",
            "2026-06-01T09:00:00Z",
            None,
            "2026-06-01T09:00:05Z",
            "2026-06-03T10:00:05Z",
            "retired",
        ),
        (
            "2026-07-15",
            "e1",
            "2026-06-01T09:00:00Z",
            "2026-06-03T10:00:00Z",
            "2026-06-03T10:00:05Z",
            None,
            "past",
        ),
        ("2026-06-30", "e2", "2026-06-03T10:00:00Z", None, "2026-06-03T10:00:05Z", None, "current"),
    ]
    e0, e1_open, e1_closed, e2 = versions
    assert e1_open["fact_id"] == e1_closed["fact_id"] != e2["fact_id"]
    assert e1_closed["ended_by"] == e2["fact_id"]
    assert e1_closed["ended_by_kind"] == "fact"
    assert e2["supersedes"] == e1_closed["fact_id"]
    assert e0["ended_by"] == e1_closed["fact_id"]


def test_profile_lists_the_current_value(results: list[dict[str, Any]]) -> None:
    profile = results[15]["result"]
    assert [(f["attribute"], f["value"]) for f in profile["facts"]] == [
        ("passport_deadline", "2026-06-30")
    ]


def test_sgam_replay_command_checks_the_expected_results(tmp_path: Path) -> None:
    """The console command, on its own temporary embedded database, end to end."""
    out = tmp_path / "results.jsonl"
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "server.cli",
            "replay",
            str(SEED),
            "--out",
            str(out),
            "--expected",
            str(EXPECTED),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    written = [json.loads(line) for line in out.read_text().splitlines()]
    expected = [json.loads(line) for line in EXPECTED.read_text().splitlines()]
    assert result_differences(written, expected) == []
    assert "all 19 results match" in completed.stderr


def test_sgam_replay_names_each_difference_beyond_noise_by_its_path(
    tmp_path: Path, server_conninfo: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A token count off by one and a score off by 1e-3 fail; a score off by 5e-5 does not."""
    expected = [json.loads(line) for line in EXPECTED.read_text().splitlines()]
    search, context = expected[16]["result"], expected[17]["result"]
    search["results"][0]["score"] += 1e-3
    search["results"][1]["score"] += 5e-5
    context["tokens"] += 1
    changed = tmp_path / "changed.expected.jsonl"
    changed.write_text("".join(json.dumps(line) + "\n" for line in expected))
    monkeypatch.setenv("DATABASE_URL", server_conninfo)

    completed = CliRunner().invoke(
        app, ["replay", str(SEED), "--out", str(tmp_path / "out.jsonl"), "--expected", str(changed)]
    )

    assert completed.exit_code == 1, completed.output
    reported = [line for line in completed.stderr.splitlines() if line.startswith("result ")]
    assert [line.partition(": got ")[0] for line in reported] == [
        "result 17: $.result.results[0].score",
        "result 18: $.result.tokens",
    ]
    tokens = context["tokens"]
    assert reported[1] == f"result 18: $.result.tokens: got {tokens - 1}, want {tokens}"


def _block_lines(results: list[dict[str, Any]], line: int) -> list[str]:
    block: str = results[line - 1]["result"]["block"]
    return block.splitlines()


def test_naive_similarity_ranks_the_stale_statements_above_the_correction(
    results: list[dict[str, Any]],
) -> None:
    """The baseline the product exists for: search alone (similarity and words, the default
    hybrid mode) prefers the old deadlines."""
    found = [hit["episode_id"] for hit in results[16]["result"]["results"]]
    assert found.index("e1") < found.index("e2")
    assert results[16]["result"]["search"] == {
        "method": "exact",
        "scope_size": 3,
        "scope_size_capped": False,
        "mode": "hybrid",
    }


def test_the_context_now_states_the_correction_and_never_the_old_value_as_current(
    results: list[dict[str, Any]],
) -> None:
    context = results[17]["result"]
    lines = _block_lines(results, 18)
    assert "passport_deadline: 2026-06-30 (from 2026-06-03; source e2)" in lines
    for line in lines:
        if "2026-07-15" in line or "2026-08-01" in line:
            assert "superseded" in line, line
    assert context["citations"][0] == {
        "episode_id": "e2",
        "occurred_at": "2026-06-03T10:00:00Z",
        "role": "fact",
    }
    assert [fact["value"] for fact in context["facts"]] == ["2026-06-30"]
    assert context["plan"]["mode"] == "current"
    assert context["over_budget"] is False
    # e0 was recorded on June 5: a read as known on June 4 does not quote it.
    assert all(item["episode_id"] != "e0" for item in context["evidence"])


def test_the_context_for_june_2_states_the_value_valid_then(
    results: list[dict[str, Any]],
) -> None:
    context = results[18]["result"]
    lines = _block_lines(results, 19)
    assert lines[1] == (
        "passport_deadline: 2026-07-15 (from 2026-06-01 until 2026-06-03; source e1)"
    )
    for line in lines:
        if "2026-06-30" in line:
            assert "superseded" in line, line
    assert (context["plan"]["mode"], context["plan"]["subject"]) == ("point_in_time", "mira")
    assert context["plan"]["valid_at"].startswith("2026-06-02")
    assert context["citations"][0]["episode_id"] == "e1"
