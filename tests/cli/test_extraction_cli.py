"""``sgam worker``: the extraction worker as a process of its own."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from extraction.extractor import PROMPT_VERSION
from server.cli import app
from server.extraction.standin import stand_in, updates
from store.episodes.extraction import Queued
from store.service import MemoryStore
from tests.helpers import declare

runner = CliRunner()


def test_sgam_worker_once_works_the_queue(
    store: MemoryStore, tenant: str, conninfo: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    declare(store, tenant, "city", "string")
    episode = {"id": "e1", "occurred_at": "2026-05-28T09:00:00Z", "subjects": ["mira"],
               "text": "Mira moved to Tromsø."}  # fmt: skip
    store.episodes.record_with_candidates(tenant, [(episode, ())], queue=[Queued(PROMPT_VERSION)])
    candidate = {"evidence": "moved to Tromsø", "subject": "mira", "attribute": "city",
                 "change": "new", "value": "Tromsø"}  # fmt: skip
    monkeypatch.setenv("DATABASE_URL", conninfo)
    with stand_in(lambda _: updates(candidate)) as endpoint:
        monkeypatch.setenv("SGAM_EXTRACTOR_URL", endpoint.base_url)
        monkeypatch.setenv("SGAM_EXTRACTOR_MODEL", "stand-in")
        result = runner.invoke(app, ["worker", "--once"])
    assert result.exit_code == 0, result.output
    assert "claimed 1 jobs" in result.output
    # Written at the worker's (wall-clock) system time, later than the test clock's.
    [fact] = store.facts.history(tenant, "mira", "city")
    assert (fact.value, fact.source_episode_id) == ("Tromsø", "e1")


def test_sgam_worker_without_an_extractor_is_a_clear_error(
    conninfo: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_URL", conninfo)
    monkeypatch.delenv("SGAM_EXTRACTOR_URL", raising=False)
    monkeypatch.delenv("SGAM_EXTRACTOR_MODEL", raising=False)
    result = runner.invoke(app, ["worker", "--once"])
    assert result.exit_code == 2
    assert "no extractor is configured" in result.output
