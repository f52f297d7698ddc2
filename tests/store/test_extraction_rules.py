"""The rule-based stand-in of ``sgam extractor dev`` as the extractor of a real store: what its
rules find in raw text becomes facts through the write path, typed, updated against the current
facts, and what they cannot read is left alone."""

from __future__ import annotations

from datetime import timedelta

import psycopg
import pytest

from extraction.extractor import PROMPT_VERSION, Extractor
from extraction.jobs import WorkPolicy, drain
from server.extraction.rules import rule_based
from server.extraction.standin import STAND_IN_MODEL, stand_in
from store.episodes.extraction import Queued
from store.errors import NotFound
from store.service import MemoryStore
from tests.helpers import declare

POLICY = WorkPolicy(max_attempts=1, backoff=timedelta(seconds=1))


@pytest.fixture(autouse=True)
def _empty_queue(conninfo: str) -> None:
    """The module's database is shared, and a worker serves every tenant."""
    with psycopg.connect(conninfo) as conn:
        conn.execute("DELETE FROM extraction_jobs")


def _extract(
    store: MemoryStore, tenant: str, *episodes: tuple[str, str, list[str]]
) -> list[list[str]]:
    """Queue each (id, text, subjects) episode, a day apart, and work them with the rules; each
    episode's candidate statuses."""
    for day, (episode_id, text, subjects) in enumerate(episodes, start=1):
        store.episodes.record_with_candidates(
            tenant,
            [({"id": episode_id, "occurred_at": f"2026-05-0{day}T09:00:00Z", "text": text,
               "subjects": subjects}, ())],
            queue=[Queued(PROMPT_VERSION)],
        )  # fmt: skip
        with stand_in(rule_based) as endpoint:
            extractor = Extractor(base_url=endpoint.base_url, model=STAND_IN_MODEL, api_key=None)
            assert drain(store, extractor, POLICY) == 1
    statuses = []
    for episode_id, _, _ in episodes:
        state = store.extraction.state(tenant, episode_id)
        assert state is not None
        assert (state.status, state.last_error) == ("done", None)
        statuses.append([candidate.status for candidate in state.candidates])
    return statuses


def test_the_rules_read_each_type_after_the_attributes_name(
    store: MemoryStore, tenant: str
) -> None:
    declare(store, tenant, "city", "string")
    declare(store, tenant, "passport_deadline", "date")
    declare(store, tenant, "plan", "enum", enum_values=["free", "pro"])
    declare(store, tenant, "seats", "integer")
    declare(store, tenant, "newsletter", "boolean", aliases=["mailing list"])
    text = (
        "Mira called on Monday. Her city is Tromsø. Her passport deadline is 2026-06-30. "
        "She moved to the pro plan. Her seats: 12 from July.\nMailing list: yes"
    )
    [statuses] = _extract(store, tenant, ("e1", text, ["mira"]))
    assert statuses == ["written"] * 5
    current = {
        attribute: store.facts.current(tenant, "mira", attribute)
        for attribute in ("city", "passport_deadline", "plan", "seats", "newsletter")
    }
    assert {name: fact.value for name, fact in current.items()} == {
        "city": "Tromsø",
        "passport_deadline": "2026-06-30",
        "plan": "pro",
        "seats": 12,
        "newsletter": True,
    }
    assert {fact.source_episode_id for fact in current.values()} == {"e1"}


def test_the_rules_update_against_the_current_facts_and_skip_what_they_cannot_read(
    store: MemoryStore, tenant: str
) -> None:
    declare(store, tenant, "city", "string")
    declare(store, tenant, "plan", "enum", enum_values=["free", "pro"])
    first, second, unread, two = _extract(
        store,
        tenant,
        ("e1", "Her city is Tromsø. Her plan is free.", ["mira"]),
        ("e2", "Her city is now Bergen. Still on the free plan.", ["mira"]),
        ("e3", "Mira moved to Oslo last week.", ["mira"]),  # names no attribute
        ("e4", "Jonas says his city is Oslo. Their city is Paris.", ["mira", "jonas"]),
    )
    assert first == ["written", "written"]
    assert second[0] == "written"
    assert sorted(v.value for v in store.facts.history(tenant, "mira", "city")) == [
        "Bergen",
        "Tromsø",
    ]
    assert len(store.facts.history(tenant, "mira", "plan")) == 1  # no_change: no new version
    assert unread == []
    assert two == ["written"]  # the sentence naming neither subject is skipped
    assert store.facts.current(tenant, "jonas", "city").value == "Oslo"
    assert store.facts.current(tenant, "mira", "city").value == "Bergen"
    with pytest.raises(NotFound):
        store.facts.current(tenant, "jonas", "plan")
