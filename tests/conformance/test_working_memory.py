"""Working memory, the same on every surface: a thread's checkpoints are versioned,
compared-and-set, walled by tenant, and refused whole, naming the field, when invalid."""

from __future__ import annotations

import pytest

from tests.conformance.surfaces import Json, Refused, Surface
from tests.conftest import ts

WRITTEN_AT = "2026-06-01T10:00:00Z"


def _written(surface: Surface, thread_id: str, body: Json) -> Json:
    surface.clock.set(ts(WRITTEN_AT))
    return surface.write_checkpoint(thread_id, body).model_dump(mode="json")


def _read(surface: Surface, thread_id: str, version: int | None = None) -> Json:
    return surface.checkpoint(thread_id, version).model_dump(mode="json")


def _checkpoint(version: int, goal: str | None, dependency: str | None, state: Json) -> Json:
    return {
        "thread_id": "t-1",
        "version": version,
        "active_goal_id": goal,
        "pending_dependency": dependency,
        "state": state,
        "written_at": WRITTEN_AT,
    }


def _refused_write(surface: Surface, thread_id: str, body: Json) -> tuple[str, str | None]:
    with pytest.raises(Refused) as refused:
        _written(surface, thread_id, body)
    return refused.value.fault


def _refused_read(
    surface: Surface, thread_id: str, version: int | None = None
) -> tuple[str, str | None]:
    with pytest.raises(Refused) as refused:
        _read(surface, thread_id, version)
    return refused.value.fault


def test_each_write_is_the_next_version_and_any_version_reads_back(surface: Surface) -> None:
    first = _written(
        surface,
        "t-1",
        {"active_goal_id": "renew-passport", "pending_dependency": "ep-7", "state": {"step": 1}},
    )
    assert first == _checkpoint(1, "renew-passport", "ep-7", {"step": 1})
    second = _written(
        surface, "t-1", {"active_goal_id": "book-flight", "state": {"step": 2, "seats": [1, 2]}}
    )
    assert second == _checkpoint(2, "book-flight", None, {"step": 2, "seats": [1, 2]})
    assert _read(surface, "t-1") == second
    assert _read(surface, "t-1", 1) == first
    assert _read(surface, "t-1", 2) == second


def test_a_thread_without_checkpoints_or_that_version_is_not_found(surface: Surface) -> None:
    assert _refused_read(surface, "t-none") == ("not_found", "thread_id")
    _written(surface, "t-1", {})
    assert _refused_read(surface, "t-1", 2) == ("not_found", "version")


def test_compare_and_set_writes_over_the_expected_version_only(surface: Surface) -> None:
    first = _written(surface, "t-1", {"active_goal_id": "g1", "expected_version": 0})
    second = _written(surface, "t-1", {"active_goal_id": "g2", "expected_version": 1})
    assert (first["version"], second["version"]) == (1, 2)
    for stale in (0, 1, 3):
        refused = _refused_write(
            surface, "t-1", {"active_goal_id": "g-stale", "expected_version": stale}
        )
        assert refused == ("conflict", "expected_version")
    assert _read(surface, "t-1") == _checkpoint(2, "g2", None, {})


def test_another_tenant_cannot_see_or_extend_the_thread(surface: Surface) -> None:
    other = surface.other()
    mine = _written(surface, "t-1", {"active_goal_id": "private-goal"})
    assert _refused_read(other, "t-1") == ("not_found", "thread_id")
    assert _refused_read(other, "t-1", 1)[0] == "not_found"
    # The other tenant's thread of the same id is its own, starting at version 1.
    assert _refused_write(other, "t-1", {"expected_version": 1}) == (
        "conflict",
        "expected_version",
    )
    assert _written(other, "t-1", {"expected_version": 0})["version"] == 1
    assert _read(surface, "t-1") == mine


def _nested(depth: int) -> Json:
    deep: Json = {}
    inner = deep
    for _ in range(depth):
        inner["next"] = {}
        inner = inner["next"]
    return deep


@pytest.mark.parametrize(
    ("thread_id", "body", "field"),
    [
        ("bad id!", {}, "thread_id"),
        ("t-1", {"state": [1, 2]}, "state"),
        ("t-1", {"state": "text"}, "state"),
        ("t-1", {"goal": "g1"}, "goal"),
        ("t-1", {"active_goal_id": "not an id"}, "active_goal_id"),
        ("t-1", {"pending_dependency": ""}, "pending_dependency"),
        ("t-1", {"expected_version": -1}, "expected_version"),
        ("t-1", {"expected_version": "1"}, "expected_version"),
        ("t-1", {"state": _nested(40)}, "state"),
        ("t-1", {"state": {"text": "x" * (64 * 1024)}}, "state"),
    ],
    ids=["bad-thread-id", "state-list", "state-text", "unknown-field", "bad-goal",
         "empty-dependency", "negative-version", "version-as-text", "state-too-deep",
         "state-too-large"],
)  # fmt: skip
def test_an_invalid_write_is_refused_whole_naming_its_field(
    surface: Surface, thread_id: str, body: Json, field: str
) -> None:
    assert _refused_write(surface, thread_id, body) == ("invalid", field)
    assert _refused_read(surface, "t-1")[0] == "not_found"


def test_a_bad_version_or_thread_to_read_is_refused_naming_it(surface: Surface) -> None:
    for version in (0, -1):
        assert _refused_read(surface, "t-1", version) == ("invalid", "version")
    assert _refused_read(surface, "bad id!") == ("invalid", "thread_id")
