"""A request that records episodes with their candidates is one transaction, on every surface:
refused by the database while applying a candidate, it changed nothing."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from psycopg_pool import ConnectionPool

from store.facts import candidates
from tests.conformance.surfaces import Json, Refused, Surface
from tests.http_helpers import candidate, tenant_rows


def _episode(episode_id: str, value: str) -> Json:
    return {
        "id": episode_id,
        "occurred_at": "2026-05-01T09:00:00Z",
        "text": f"Mira's note {episode_id}: {value}.",
        "updates": [candidate("mira", "n_str", value)],
    }


@pytest.mark.parametrize("episodes", [1, 2], ids=["one-episode", "a-batch"])
def test_a_database_refusal_while_applying_candidates_leaves_nothing_recorded(
    surface: Surface, pool: ConnectionPool, monkeypatch: pytest.MonkeyPatch, episodes: int
) -> None:
    surface.declare_attribute("n_str", {"value_type": "string"})
    before = tenant_rows(pool, surface.tenant)
    real = candidates.lock_keys  # type: ignore[attr-defined]
    calls: list[object] = []

    def refusing(*args: Any, **kwargs: Any) -> Any:
        # The first episode's candidates are written; the last one's are refused.
        calls.append(kwargs["keys"])
        if len(calls) == episodes:
            raise psycopg.errors.CheckViolation("a value the database refuses")
        return real(*args, **kwargs)

    monkeypatch.setattr(candidates, "lock_keys", refusing)
    if episodes == 1:  # the single episode's route, then the batch's
        episode, updates = _split(_episode("one", "good"))
        with pytest.raises(Refused) as refused:
            surface.record(episode, updates)
    else:
        with pytest.raises(Refused) as refused:
            surface.record_batch([_episode("first", "good"), _episode("second", "better")])

    assert refused.value.code == "conflict"
    assert tenant_rows(pool, surface.tenant) == before


def _split(episode: Json) -> tuple[Json, list[Json]]:
    return {k: v for k, v in episode.items() if k != "updates"}, episode["updates"]
