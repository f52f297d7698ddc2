"""The replay format: clock rules, op table, result lines and errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from server.replay.runner import CountingIds, ReplayClock, replay_lines
from store.service import open_store

DEFINE = {
    "op": "define",
    "tenant": "acme",
    "attribute": "passport_deadline",
    "value_type": "date",
    "description": "renewal date",
}


@pytest.fixture
def run(conninfo: str) -> Iterator[Any]:
    """Replay a list of line objects (or raw strings) on the module's database."""
    clock = ReplayClock()
    with open_store(conninfo, clock=clock, new_id=CountingIds()) as store:

        def replay(*lines: dict[str, Any] | str) -> list[dict[str, Any]]:
            texts = [line if isinstance(line, str) else json.dumps(line) for line in lines]
            return list(replay_lines(store, clock, texts))

        yield replay


def test_a_write_that_goes_back_in_system_time_is_invalid(run: Any) -> None:
    results = run(
        DEFINE | {"tenant": "clock-1", "now": "2026-06-02T00:00:00Z"},
        {
            "op": "episode",
            "tenant": "clock-1",
            "id": "e1",
            "occurred_at": "2026-06-01T00:00:00Z",
            "text": "x",
            "now": "2026-06-01T00:00:00Z",
        },
        {
            "op": "episode",
            "tenant": "clock-1",
            "id": "e2",
            "occurred_at": "2026-06-01T00:00:00Z",
            "text": "y",
            "now": "2026-06-02T00:00:00Z",
        },
    )
    assert [r["ok"] for r in results] == [True, False, True]
    assert results[1]["error"] == {
        "code": "invalid",
        "detail": "writes may not go back in system time (this line's now is before an"
        " earlier write's)",
        "field": "now",
    }


def test_reads_may_look_back_and_lines_keep_the_previous_clock(run: Any) -> None:
    results = run(
        DEFINE | {"tenant": "clock-2", "now": "2026-06-01T09:00:05Z"},
        {
            "op": "episode",
            "tenant": "clock-2",
            "id": "e1",
            "occurred_at": "2026-06-01T09:00:00Z",
            "text": "deadline 2026-07-15",
        },
        {
            "op": "update",
            "tenant": "clock-2",
            "episode": "e1",
            "candidate": {
                "evidence": "deadline 2026-07-15",
                "subject": "mira",
                "attribute": "passport_deadline",
                "change": "new",
                "value": "2026-07-15",
            },
        },
        {
            "op": "current",
            "tenant": "clock-2",
            "subject": "mira",
            "attribute": "passport_deadline",
            "now": "2026-06-01T09:00:00Z",
        },
        {
            "op": "current",
            "tenant": "clock-2",
            "subject": "mira",
            "attribute": "passport_deadline",
            "now": "2026-05-01T00:00:00Z",
        },
    )
    assert results[1]["result"]["recorded_at"] == "2026-06-01T09:00:05Z"  # kept clock
    assert results[2]["result"]["fact"]["recorded_at"] == "2026-06-01T09:00:05Z"
    # At 09:00:00 the fact is valid but not yet known (recorded 5 s later): not known.
    assert results[3]["error"]["code"] == "not_found"
    assert results[4]["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    ("line", "field", "detail"),
    [
        ("{not json", None, "not a JSON line"),
        ("[1, 2]", None, "a replay line must be a JSON object"),
        ({"op": "teleport", "tenant": "t"}, "op", "unknown op 'teleport'"),
        ({"op": "current", "subject": "mira", "attribute": "a"}, "tenant", "needs a tenant"),
        ({"op": "current", "tenant": "t", "subject": "mira"}, "attribute", "current needs"),
        (
            {"op": "current", "tenant": "t", "subject": "mira", "attribute": "a", "colour": 1},
            "colour",
            "does not take colour",
        ),
        (
            {
                "op": "current",
                "tenant": "t",
                "subject": "m",
                "attribute": "a",
                "now": "2026-06-01T00:00:00",
            },
            "now",
            "no UTC offset",
        ),
        (
            {"op": "at", "tenant": "t", "subject": "m", "attribute": "a", "valid_at": "June 2"},
            "valid_at",
            "not an RFC 3339 timestamp",
        ),
        (
            {"op": "current", "tenant": "bad tenant", "subject": "m", "attribute": "a"},
            "tenant_id",
            "tenant_id must be",
        ),
        ({"op": "erase", "tenant": "t"}, "subject", "exactly one of subject or episode"),
        (
            {"op": "define", "tenant": "t", "attribute": "a", "value_type": "colour"},
            "value_type",
            "Input should be",
        ),
    ],
)
def test_bad_lines_answer_an_error_line_and_the_replay_goes_on(
    run: Any, line: dict[str, Any] | str, field: str | None, detail: str
) -> None:
    bad, good = run(line, DEFINE | {"tenant": "after-bad-line"})
    assert bad["line"] == 1
    assert bad["ok"] is False
    assert bad["error"]["code"] == "invalid"
    assert bad["error"].get("field") == field
    assert detail in bad["error"]["detail"]
    assert good == {"line": 2, "ok": True, "result": good["result"]}


def test_tenants_are_created_on_first_use_and_reads_name_not_found(run: Any) -> None:
    read = {"op": "current", "tenant": "fresh", "subject": "mira", "attribute": "passport_deadline"}
    [undeclared, _, unknown] = run(read, DEFINE | {"tenant": "fresh"}, read)
    assert undeclared == {
        "line": 1,
        "ok": False,
        "error": {
            "code": "not_found",
            "field": "attribute",
            "detail": "attribute 'passport_deadline' is not declared",
        },
    }
    assert unknown == {
        "line": 3,
        "ok": False,
        "error": {
            "code": "not_found",
            "field": "attribute",
            "detail": "mira.passport_deadline is not known at that time",
        },
    }


def test_blank_lines_are_skipped_but_counted(run: Any) -> None:
    results = run("", DEFINE | {"tenant": "blank"})
    assert [r["line"] for r in results] == [2]
