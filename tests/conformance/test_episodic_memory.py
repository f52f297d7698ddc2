"""Outcomes on episodes, the same on every surface: an outcome reads back, a later one
supersedes it and the old one stays as history, a bad one is refused naming its field, and
erasure takes outcomes along. (Experience search is the HTTP API's: tests/http.)"""

from __future__ import annotations

from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from tests.conformance.surfaces import Json, Refused, Surface
from tests.conftest import ts
from tests.helpers import owner_connection
from tests.http_helpers import candidate

FIRST_AT = "2026-04-01T10:00:00Z"
LATER_AT = "2026-04-02T10:00:00Z"
FAILED = {
    "status": "failed",
    "outcome_receipt_id": "receipt-1",
    "verified": True,
    "human_intervened": False,
    "budget_exhausted": True,
}
SUCCEEDED = {
    "status": "succeeded",
    "outcome_receipt_id": None,
    "verified": True,
    "human_intervened": True,
    "budget_exhausted": False,
}


def _record(surface: Surface, episode_id: str, text: str, *updates: Json) -> None:
    surface.clock.set(ts(FIRST_AT))
    surface.record({"id": episode_id, "occurred_at": FIRST_AT, "text": text}, updates)


def _outcome(surface: Surface, episode_id: str, body: Json, *, now: str = FIRST_AT) -> Json:
    surface.clock.set(ts(now))
    return surface.record_outcome(episode_id, body).model_dump(mode="json")


def _current(surface: Surface, episode_id: str) -> Json | None:
    """The episode's current outcome; None when it has none."""
    try:
        outcome = surface.outcome(episode_id)
    except Refused as refused:
        if refused.fault != ("not_found", "episode_id"):
            raise
        return None
    return outcome.model_dump(mode="json")


def _refused(surface: Surface, episode_id: str, body: Json) -> tuple[str, str | None]:
    with pytest.raises(Refused) as refused:
        _outcome(surface, episode_id, body)
    return refused.value.fault


def _stored(pool: ConnectionPool, surface: Surface) -> list[tuple[Any, ...]]:
    with owner_connection(pool) as conn:
        return conn.execute(
            "SELECT episode_id, revision, status, superseded_at IS NULL FROM episode_outcomes"
            " WHERE tenant_id = %s ORDER BY episode_id, revision",
            (surface.tenant,),
        ).fetchall()


def test_an_outcome_attached_to_an_episode_reads_back(surface: Surface) -> None:
    _record(surface, "deploy-1", "Deployed the billing service to production.")
    assert _current(surface, "deploy-1") is None

    answered = _outcome(surface, "deploy-1", FAILED)

    expected = {"episode_id": "deploy-1", "revision": 1, **FAILED, "recorded_at": FIRST_AT}
    assert answered == expected | {"observed": True}
    assert _current(surface, "deploy-1") == answered
    assert surface.episode("deploy-1").text == "Deployed the billing service to production."


def test_a_later_outcome_supersedes_the_current_one_and_the_old_one_stays_as_history(
    surface: Surface, pool: ConnectionPool
) -> None:
    _record(surface, "deploy-2", "Deployed the search service to production.")
    first = _outcome(surface, "deploy-2", {**FAILED, "status": "unknown"})
    assert first["observed"] is False
    # The same outcome again (a retried request) changes nothing.
    assert _outcome(surface, "deploy-2", {**FAILED, "status": "unknown"}, now=LATER_AT) == first

    later = _outcome(surface, "deploy-2", SUCCEEDED, now=LATER_AT)

    assert later == {
        "episode_id": "deploy-2",
        "revision": 2,
        **SUCCEEDED,
        "recorded_at": LATER_AT,
        "observed": True,
    }
    assert _current(surface, "deploy-2") == later
    assert _stored(pool, surface) == [
        ("deploy-2", 1, "unknown", False),
        ("deploy-2", 2, "succeeded", True),
    ]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({**FAILED, "status": "great"}, "status"),
        ({**FAILED, "verified": "true"}, "verified"),
        ({**FAILED, "human_intervened": 1}, "human_intervened"),
        ({**FAILED, "outcome_receipt_id": "not an id"}, "outcome_receipt_id"),
        ({key: value for key, value in FAILED.items() if key != "status"}, "status"),
        ({**FAILED, "recorded_at": FIRST_AT}, "recorded_at"),
    ],
)
def test_a_bad_outcome_is_refused_naming_its_field_and_writes_nothing(
    surface: Surface, pool: ConnectionPool, body: Json, field: str
) -> None:
    _record(surface, "bad-input", "Rebuilt the search index.")

    assert _refused(surface, "bad-input", body) == ("invalid", field)
    assert _current(surface, "bad-input") is None
    assert _stored(pool, surface) == []


def test_an_outcome_for_an_episode_the_tenant_does_not_have_is_not_found(
    surface: Surface, pool: ConnectionPool
) -> None:
    other = surface.other()
    _record(surface, "shared-id", "Restarted the payment gateway after an outage.")
    _outcome(surface, "shared-id", SUCCEEDED)

    assert _refused(surface, "never-recorded", FAILED) == ("not_found", "episode_id")
    assert _refused(other, "shared-id", FAILED) == ("not_found", "episode_id")
    assert _stored(pool, other) == []
    assert _stored(pool, surface) == [("shared-id", 1, "succeeded", True)]


def test_erasing_an_episode_takes_its_outcome_along(surface: Surface, pool: ConnectionPool) -> None:
    _record(surface, "to-erase", "Paged the on-call engineer about disk space.")
    _outcome(surface, "to-erase", FAILED)

    assert surface.erase_episode("to-erase").episodes_deleted == 1

    assert _stored(pool, surface) == []
    assert _refused(surface, "to-erase", FAILED)[0] == "not_found"


def test_an_erased_episode_kept_as_a_stub_keeps_no_outcome_and_takes_none(
    surface: Surface, pool: ConnectionPool
) -> None:
    surface.declare_attribute("team", {"value_type": "string"})
    _record(
        surface,
        "both",
        "Ana and Ben moved to the platform team.",
        candidate("ana", "team", "platform"),
        candidate("ben", "team", "platform"),
    )
    _outcome(surface, "both", SUCCEEDED)

    # Ben's fact still cites the episode: erasing Ana leaves it as a stub.
    assert surface.erase_subject("ana").episodes_stubbed == 1

    assert surface.episode("both").erased_at is not None
    assert _current(surface, "both") is None
    assert _stored(pool, surface) == []
    assert _refused(surface, "both", SUCCEEDED) == ("conflict", "episode_id")
    assert _stored(pool, surface) == []
