"""Background extraction against a stand-in OpenAI-compatible endpoint on localhost.

Episodes queued for extraction become facts through the normal write path; a failing endpoint
leads to retries with backoff, then ``dead``; a dead job can be requeued; a job of a worker
killed mid-way is taken again once its lease ran out, and written once; two workers never take
one job twice; the tenant wall holds for jobs.
"""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from prometheus_client import REGISTRY

from extraction.extractor import PROMPT_VERSION, Extractor
from extraction.jobs import WorkPolicy, drain, run_job, work_once
from server.extraction.standin import Reply, StandIn, stand_in, updates
from server.extraction.worker import METRICS
from store.db.clock import ManualClock
from store.db.database import APP_ROLE
from store.episodes.extraction import Queued
from store.errors import Conflict, NotFound
from store.service import MemoryStore
from tests.conftest import ts
from tests.helpers import declare

POLICY = WorkPolicy(max_attempts=3, backoff=timedelta(seconds=10), lease=timedelta(seconds=60))
TEXT = "Mira said she moved to Tromsø last week."


@pytest.fixture(autouse=True)
def _empty_queue(conninfo: str) -> None:
    """Each test starts from an empty queue: the module's database is shared, and a worker
    serves every tenant."""
    with psycopg.connect(conninfo) as conn:
        conn.execute("DELETE FROM extraction_jobs")


def _city(value: str = "Tromsø", **extra: Any) -> dict[str, Any]:
    return {
        "evidence": "moved to Tromsø",
        "subject": "mira",
        "attribute": "city",
        "change": "new",
        "value": value,
        **extra,
    }


def _queue(
    store: MemoryStore,
    tenant: str,
    episode_id: str,
    text: str = TEXT,
    occurred_at: str = "2026-05-28T09:00:00Z",
) -> None:
    store.episodes.record_with_candidates(
        tenant,
        [({"id": episode_id, "occurred_at": occurred_at, "text": text,
           "subjects": ["mira"]}, ())],
        queue=[Queued(PROMPT_VERSION)],
    )  # fmt: skip


def _extractor(endpoint: StandIn, timeout_s: float = 10.0) -> Extractor:
    return Extractor(base_url=endpoint.base_url, model="stand-in", api_key="k", timeout_s=timeout_s)


def test_a_queued_episode_becomes_a_cited_fact_written_later(
    store: MemoryStore, tenant: str, clock: ManualClock
) -> None:
    declare(store, tenant, "city", "string")
    declare(store, tenant, "employer", "string")
    _queue(store, tenant, "e1")
    assert store.extraction.state(tenant, "e1").status == "queued"  # type: ignore[union-attr]
    assert store.extraction.lag() == 0.0
    clock.set(ts("2026-06-01T00:05:00Z"))
    assert store.extraction.lag() >= 300.0
    with pytest.raises(NotFound):
        store.facts.current(tenant, "mira", "city")
    with stand_in(lambda _: updates(_city())) as endpoint:
        assert drain(store, _extractor(endpoint), POLICY) == 1
        context = endpoint.user_context()
    fact = store.facts.current(tenant, "mira", "city")
    assert (fact.value, fact.source_episode_id) == ("Tromsø", "e1")
    assert fact.recorded_at == ts("2026-06-01T00:05:00Z")  # the system time of the write
    state = store.extraction.state(tenant, "e1")
    assert state is not None
    assert state.status == "done"
    assert state.attempts == 1
    assert [(c.status, c.reason) for c in state.candidates] == [("written", None)]
    assert state.prompt_version == PROMPT_VERSION
    # The prompt carried the episode, the declared attributes and the subject's facts.
    assert context["episode"]["text"] == TEXT
    assert {a["name"] for a in context["attributes"]} == {"city", "employer"}
    assert context["current_facts"] == []


def test_the_prompt_carries_current_facts_so_the_model_can_update(
    store: MemoryStore, tenant: str
) -> None:
    declare(store, tenant, "city", "string")
    _queue(store, tenant, "e1")
    _queue(store, tenant, "e2", "Mira moved on to Bergen.", "2026-05-30T09:00:00Z")
    answers = iter([updates(_city()), updates(_city("Bergen", change="update",
                                                   current_value="Tromsø",
                                                   evidence="moved on to Bergen"))])  # fmt: skip
    with stand_in(lambda _: next(answers)) as endpoint:
        policy = WorkPolicy(batch=1)
        assert work_once(store, _extractor(endpoint), policy) == 1
        assert work_once(store, _extractor(endpoint), policy) == 1
        second = endpoint.user_context()
    assert second["current_facts"][0]["value"] == "Tromsø"
    assert store.facts.current(tenant, "mira", "city").value == "Bergen"


def test_invalid_candidates_are_results_not_failures(store: MemoryStore, tenant: str) -> None:
    declare(store, tenant, "city", "string")
    _queue(store, tenant, "e1")
    bad = _city(attribute="shoe_size")
    with stand_in(lambda _: updates(bad, {"subject": "mira"})) as endpoint:
        drain(store, _extractor(endpoint), POLICY)
    state = store.extraction.state(tenant, "e1")
    assert state is not None
    assert state.status == "done"
    assert [c.status for c in state.candidates] == ["invalid", "invalid"]
    assert "shoe_size" in (state.candidates[0].reason or "")
    assert "Tromsø" not in state.model_dump_json()  # statuses and reasons, no values


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (Reply(status=500), "endpoint answered 500"),
        (Reply("this is not json"), "malformed answer: not JSON"),
        (Reply('{"candidates": []}'), "malformed answer: no updates list"),
        (Reply(delay_s=1.5), "timeout"),
    ],
)
def test_a_failing_endpoint_is_retried_with_backoff_then_dead(
    store: MemoryStore, tenant: str, clock: ManualClock, reply: Reply, error: str
) -> None:
    declare(store, tenant, "city", "string")
    _queue(store, tenant, "e1")
    with stand_in(lambda _: reply) as endpoint:
        extractor = _extractor(endpoint, timeout_s=0.5)
        assert drain(store, extractor, POLICY) == 1
        state = store.extraction.state(tenant, "e1")
        assert state is not None
        assert (state.status, state.attempts, state.last_error) == ("failed", 1, error)
        assert state.run_after == clock() + timedelta(seconds=10)
        assert drain(store, extractor, POLICY) == 0  # not due yet
        clock.set(clock() + timedelta(seconds=10))
        assert drain(store, extractor, POLICY) == 1
        state = store.extraction.state(tenant, "e1")
        assert state is not None
        assert state.status == "failed"
        assert state.run_after == clock() + timedelta(seconds=20)  # the wait doubles
        clock.set(clock() + timedelta(seconds=20))
        assert drain(store, extractor, POLICY) == 1
    state = store.extraction.state(tenant, "e1")
    assert state is not None
    assert (state.status, state.attempts) == ("dead", 3)
    assert state.finished_at == clock()
    clock.set(clock() + timedelta(days=1))
    assert drain(store, extractor, POLICY) == 0  # dead jobs are never taken again


def test_a_dead_job_is_requeued_by_retry(store: MemoryStore, tenant: str) -> None:
    declare(store, tenant, "city", "string")
    _queue(store, tenant, "e1")
    store.episodes.record(tenant, {"id": "plain", "occurred_at": "2026-05-28T09:00:00Z",
                                   "text": "not sent"})  # fmt: skip
    with stand_in(lambda _: Reply(status=503)) as endpoint:
        drain(store, _extractor(endpoint), WorkPolicy(max_attempts=1))
    with pytest.raises(NotFound):
        store.extraction.retry(tenant, "unknown")
    with pytest.raises(Conflict):
        store.extraction.retry(tenant, "plain")
    requeued = store.extraction.retry(tenant, "e1")
    assert (requeued.status, requeued.attempts) == ("queued", 0)
    with pytest.raises(Conflict):
        store.extraction.retry(tenant, "e1")  # queued, not dead
    with stand_in(lambda _: updates(_city())) as endpoint:
        drain(store, _extractor(endpoint), POLICY)
    assert store.facts.current(tenant, "mira", "city").value == "Tromsø"


def test_a_job_of_a_killed_worker_is_taken_again_and_written_once(
    store: MemoryStore, tenant: str, clock: ManualClock
) -> None:
    declare(store, tenant, "city", "string")
    _queue(store, tenant, "e1")
    _queue(store, tenant, "e2", "Mira moved to Tromsø, she says.")
    [killed, _] = store.extraction.claim(wanted=2, lease=timedelta(seconds=60))  # then it dies
    with stand_in(lambda _: updates(_city())) as endpoint:
        extractor = _extractor(endpoint)
        assert store.extraction.claim(wanted=5, lease=timedelta(seconds=60)) == []  # leased
        clock.set(clock() + timedelta(seconds=61))
        assert drain(store, extractor, POLICY) == 2  # both leases ran out: taken again
        assert len(endpoint.requests) == 2
        # The killed worker coming back finishes nothing: its lease is not the job's any more.
        assert run_job(store, extractor, killed, POLICY) is None
    history = store.facts.history(tenant, "mira", "city")
    assert [f.source_episode_id for f in history] == ["e1"]
    for episode_id in ("e1", "e2"):
        state = store.extraction.state(tenant, episode_id)
        assert state is not None
        assert (state.status, state.attempts) == ("done", 2)


def test_two_workers_never_take_one_job_twice(store: MemoryStore, tenant: str) -> None:
    declare(store, tenant, "city", "string")
    for n in range(24):
        _queue(store, tenant, f"e{n}", f"Episode {n}: Mira moved to Tromsø.")
    seen: list[str] = []
    lock = threading.Lock()

    def script(request: dict[str, Any]) -> Reply:
        episode = json.loads(request["messages"][-1]["content"])["episode"]["id"]
        with lock:
            seen.append(episode)
        return Reply(delay_s=0.02)

    with stand_in(script) as endpoint:
        extractor = _extractor(endpoint)
        policy = WorkPolicy(batch=3)
        workers = [threading.Thread(target=drain, args=(store, extractor, policy))
                   for _ in range(3)]  # fmt: skip
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    assert sorted(seen) == sorted(f"e{n}" for n in range(24))  # each exactly once
    for n in range(24):
        state = store.extraction.state(tenant, f"e{n}")
        assert state is not None
        assert (state.status, state.attempts) == ("done", 1)


def test_the_tenant_wall_holds_for_jobs(store: MemoryStore, tenant: str, conninfo: str) -> None:
    declare(store, tenant, "city", "string")
    _queue(store, tenant, "e1")
    other = f"{tenant}-other"
    store.admin.create_tenant(other)
    assert store.extraction.state(other, "e1") is None
    with pytest.raises(NotFound):
        store.extraction.retry(other, "e1")
    with psycopg.connect(conninfo) as conn:
        conn.execute(f"SET ROLE {APP_ROLE}")
        conn.execute("SELECT set_config('sgam.tenant_id', %s, false)", (other,))
        assert conn.execute("SELECT count(*) FROM extraction_jobs").fetchone() == (0,)
        conn.execute("SELECT set_config('sgam.tenant_id', %s, false)", (tenant,))
        assert conn.execute("SELECT count(*) FROM extraction_jobs").fetchone() == (1,)


def test_episodes_not_sent_are_never_extracted(store: MemoryStore, tenant: str) -> None:
    declare(store, tenant, "city", "string")
    store.episodes.record(tenant, {"id": "e1", "occurred_at": "2026-05-28T09:00:00Z",
                                   "text": TEXT})  # fmt: skip
    assert store.extraction.state(tenant, "e1") is None
    with stand_in(lambda _: updates(_city())) as endpoint:
        assert drain(store, _extractor(endpoint), POLICY) == 0
        assert endpoint.requests == []


def test_erasure_takes_the_jobs_along(store: MemoryStore, tenant: str) -> None:
    declare(store, tenant, "city", "string")
    _queue(store, tenant, "cited")
    _queue(store, tenant, "queued", "Nothing to say.")
    with stand_in(lambda _: updates(_city())) as endpoint:
        work_once(store, _extractor(endpoint), WorkPolicy(batch=1))  # "cited" is the oldest
    assert store.facts.current(tenant, "mira", "city").source_episode_id == "cited"
    store.erasure.erase_episode(tenant, "cited")  # a stub: the fact it sourced is retracted
    store.erasure.erase_episode(tenant, "queued")  # deleted outright, its job by cascade
    assert store.extraction.state(tenant, "cited") is None
    assert store.extraction.state(tenant, "queued") is None
    assert store.extraction.claim(wanted=10, lease=timedelta(seconds=60)) == []


def test_the_freshness_lag_is_a_metric(store: MemoryStore, tenant: str, clock: ManualClock) -> None:
    declare(store, tenant, "city", "string")
    _queue(store, tenant, "e1")
    clock.set(clock() + timedelta(seconds=90))
    with stand_in(lambda _: Reply(status=500)) as endpoint:
        work_once(store, _extractor(endpoint), POLICY, METRICS)  # failed: still waiting
    assert REGISTRY.get_sample_value("sgam_extraction_lag_seconds") == 90.0
    assert (
        REGISTRY.get_sample_value("sgam_extraction_jobs_total", {"outcome": "failed"}) or 0
    ) >= 1
    with stand_in(lambda _: updates(_city())) as endpoint:
        clock.set(clock() + timedelta(seconds=10))
        work_once(store, _extractor(endpoint), POLICY, METRICS)
    assert REGISTRY.get_sample_value("sgam_extraction_lag_seconds") == 0.0
