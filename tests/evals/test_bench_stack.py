"""The stack's floor under GET fact: a bare app that reads the row the API reads, and its ratios."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from evals.bench.notes import receipt_note, stack_note
from evals.bench.served.data import TENANT
from evals.bench.served.stack import CASES, DATABASE_ENV, KEY_ENV, bare_app, stack_summary
from store.service import MemoryStore

KEY = "bench-key-for-the-bare-app"


@pytest.fixture
def bare(conninfo: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient[Litestar]]:
    monkeypatch.setenv(DATABASE_ENV, conninfo)
    monkeypatch.setenv(KEY_ENV, KEY)
    with TestClient(bare_app()) as client:
        yield client


def test_the_bare_app_reads_the_row_the_store_reads_and_refuses_another_key(
    store: MemoryStore, bare: TestClient[Litestar]
) -> None:
    store.admin.create_tenant(TENANT)
    store.admin.declare_attribute(TENANT, "plan", {"value_type": "string"})
    written = (
        ("e1", "gold", "2026-01-01", "Ada is on gold."),
        ("e2", "tin", "2026-02-01", "Ada moved to tin."),
    )
    for episode, value, start, text in written:
        occurred = f"{start}T00:00:00Z"
        store.episodes.record(TENANT, {"id": episode, "occurred_at": occurred, "text": text})
        candidate = {"subject": "ada", "attribute": "plan", "change": "update", "value": value}
        candidate |= {"valid_from": occurred, "evidence": text}
        [result] = store.facts.apply_candidates(TENANT, episode, [candidate])
        assert result.status == "written", result
    signed = {"Authorization": f"Bearer {KEY}"}

    answer = bare.get("/v1/facts/ada/plan", headers=signed)

    assert answer.status_code == 200, answer.text
    current = store.facts.at(TENANT, "ada", "plan")
    assert answer.json() == current.model_dump(mode="json")
    assert answer.json()["value"] == "tin"  # the current version, not the one it superseded
    assert bare.get("/v1/facts/ada/unknown", headers=signed).status_code == 404
    assert bare.get("/one", headers=signed).json() == {"one": 1}
    assert bare.get("/v1/facts/ada/plan", headers={"Authorization": "Bearer x"}).status_code == 401
    assert bare.get("/healthz").json() == {"status": "ok"}


def test_the_summary_takes_each_cases_median_over_rounds_and_reads_the_ratios() -> None:
    rounds = [
        dict(zip(CASES, (1.0, 2.0, 4.2, 6.0, 0.8, 1.0, 1.6), strict=True)),
        dict(zip(CASES, (0.6, 1.8, 3.6, 5.0, 0.6, 0.9, 1.2), strict=True)),
        dict(zip(CASES, (0.8, 2.4, 4.0, 5.4, 0.7, 1.4, 1.4), strict=True)),
    ]

    summary = stack_summary(rounds)

    assert summary["p50_ms"] == dict(zip(CASES, (0.8, 2.0, 4.0, 5.4, 0.7, 1.0, 1.4), strict=True))
    assert summary["sgam_fact_over_healthz"] == 2.5
    assert summary["bare_fact_over_healthz"] == 2.0
    assert summary["bare_one_over_healthz"] == pytest.approx(1.429)
    assert summary["sgam_fact_over_bare_fact"] == pytest.approx(1.429)
    assert summary["fact_for_decision_over_fact"] == 2.0
    assert summary["named_k0_over_fact"] == 2.7
    assert len(summary["rounds"]) == 3
    note = stack_note({"stack_floor": summary})
    assert "2.00x its /healthz" in note
    assert "SGAM 2.50x" in note
    said = receipt_note({"stack_floor": summary})
    assert "is 2.00x GET fact, the named context 2.70x" in said
    failed = {"stack_floor": {"error": "the bare app did not start"}}
    assert stack_note(failed) == receipt_note(failed) == ""
