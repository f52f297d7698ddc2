"""Erasure, the same on every surface: erasing an episode retracts what it said, erasing a
subject deletes what is held about it, each leaves a tombstone and counts what went, a second
erasure finds nothing, and an erased episode's id is never recorded again. (What every column
of every table keeps afterwards is the store's: tests/store/test_erasure.py.)"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.conformance.surfaces import Refused, Surface
from tests.conftest import ts
from tests.http_helpers import candidate

KEY = ("ada", "home_city")
NOW = "2026-04-03T00:00:00Z"
COUNTS = {
    "facts_retracted": 0,
    "episodes_deleted": 0,
    "episodes_stubbed": 0,
    "fact_versions_deleted": 0,
    "conflicts_deleted": 0,
    "expiries_deleted": 0,
    "checkpoints_deleted": 0,
}


def _said(surface: Surface, number: int, city: str, episode_id: str | None = None) -> None:
    """Ada's city said on April ``number``, recorded an hour later."""
    at = f"2026-04-0{number}T09:00:00Z"
    surface.clock.set(ts(f"2026-04-0{number}T10:00:00Z"))
    episode = {"id": episode_id or f"said-{number}", "occurred_at": at, "text": f"Ada: {city}."}
    [result] = surface.record(episode, [candidate(*KEY, city, valid_from=at)])
    assert result.status == "written", result


def _fault(call: Callable[[], object]) -> tuple[str, str | None]:
    with pytest.raises(Refused) as refused:
        call()
    return refused.value.fault


def test_erasing_an_episode_retracts_its_facts_and_leaves_a_tombstone(surface: Surface) -> None:
    surface.declare_attribute("home_city", {"value_type": "string"})
    _said(surface, 1, "Porto")
    porto = surface.fact(*KEY)
    _said(surface, 2, "Lisbon", "wrong")
    surface.clock.set(ts(NOW))

    erased = surface.erase_episode("wrong")

    assert erased.model_dump(exclude={"tombstone_id"}) == {
        **COUNTS,
        "status": "erased",
        "facts_retracted": 1,
        "episodes_deleted": 1,
        "fact_versions_deleted": 1,
    }
    assert _fault(lambda: surface.episode("wrong"))[0] == "not_found"
    # Porto reads as if Lisbon had never been said; no version cites the erased episode.
    current = surface.fact(*KEY)
    assert current == porto.model_copy(
        update={"version_id": current.version_id, "recorded_at": ts(NOW)}
    )
    assert {version.source_episode_id for version in surface.history(*KEY)} == {"said-1"}
    assert _fault(lambda: surface.erase_episode("wrong"))[0] == "not_found"


def test_erasing_a_subject_deletes_what_is_held_about_it_once(surface: Surface) -> None:
    surface.declare_attribute("home_city", {"value_type": "string"})
    _said(surface, 1, "Porto")
    _said(surface, 2, "Lisbon")
    surface.clock.set(ts(NOW))
    assert _fault(lambda: surface.erase_subject("nobody")) == ("not_found", "subject")

    erased = surface.erase_subject("ada")

    assert erased.model_dump(exclude={"tombstone_id"}) == {
        **COUNTS,
        "status": "erased",
        "episodes_deleted": 2,
        "fact_versions_deleted": 3,  # Porto open (retired), Porto closed, Lisbon
    }
    for episode_id in ("said-1", "said-2"):
        with pytest.raises(Refused) as gone:
            surface.episode(episode_id)
        assert gone.value.code == "not_found"
    assert _fault(lambda: surface.fact(*KEY))[0] == "not_found"
    assert surface.history(*KEY) == []
    assert _fault(lambda: surface.erase_subject("ada")) == ("not_found", "subject")


def test_an_erased_episode_id_cannot_be_recorded_again(surface: Surface) -> None:
    """Re-recording a stub must not confirm or deny a guess of the erased text."""
    surface.declare_attribute("city", {"value_type": "string"})
    surface.declare_attribute("seat", {"value_type": "string"})
    text = "Lena moves to Oslo; omar takes seat 3C"
    memo = {"id": "memo", "occurred_at": "2026-06-01T09:00:00Z", "subjects": ["lena"]}
    surface.record(
        memo | {"text": text},
        [candidate("lena", "city", "Oslo"), candidate("omar", "seat", "3C")],
    )
    surface.erase_subject("lena")  # omar's seat still cites the memo: it stays as a stub
    for guess in (text, "Lena moves to Rome; omar takes seat 3C"):
        with pytest.raises(Refused) as refused:
            surface.record(memo | {"text": guess})
        assert (refused.value.code, refused.value.detail) == (
            "conflict",
            "episode 'memo' was erased; its id cannot be reused",
        )
