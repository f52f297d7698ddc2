"""What the listing pages' tests share: the seed scenario, a second subject with a declared
name, an outcome for e2, and a decision that read mira's deadline."""

from __future__ import annotations

from uuid import uuid4

from tests.ui_helpers import Http, Key, seed_mira

LATER = "2026-06-10T08:00:00Z"
"""When the writes after the seed scenario are made (before the pages' clock)."""


def seed_lists(http: Http, key: Key) -> str:
    """The seed scenario, then an episode b1 naming ``ben``, declared as Benedict Okafor, an
    outcome for e2, and a decision that read mira's deadline: that decision's id."""
    seed_mira(http, key)
    at = key.headers(LATER)
    named = http.post(
        "/v1/episodes",
        json={"id": "b1", "occurred_at": LATER, "text": "Ben called.", "subjects": ["ben"]},
        headers=at,
    )
    assert named.status_code in {200, 201}, named.text
    declared = http.put("/v1/subjects/ben", json={"display_name": "Benedict Okafor"}, headers=at)
    assert declared.status_code == 200, declared.text
    outcome = http.post(
        "/v1/episodes/e2/outcome", json={"status": "succeeded", "verified": True}, headers=at
    )
    assert outcome.status_code == 200, outcome.text
    decision_id = str(uuid4())
    read = http.get(
        "/v1/facts/mira/passport_deadline", headers={**at, "X-SGAM-Decision": decision_id}
    )
    assert read.status_code == 200, read.text
    return decision_id
