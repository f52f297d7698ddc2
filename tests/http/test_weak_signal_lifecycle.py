"""Weak signals over their lifecycle: erasure takes them along, the bulk import refuses them,
and over random sequences a fact appears exactly when the quorum rule says; refusals as HTTP
problems. Buffering, promotion, expiry and the buffer's pages are scenarios of
tests/conformance/test_weak_signals.py."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psycopg_pool import ConnectionPool

from store.db.clock import ManualClock
from store.service import MemoryStore
from tests.conftest import ts
from tests.http_helpers import Client, assert_problem, candidate, declare, tenant_rows
from tests.weak_helpers import at, buffer, say, weak, weak_tenant


def test_erasing_the_subject_removes_its_buffered_signals(
    http: Client, pool: ConnectionPool
) -> None:
    tenant = weak_tenant(http)
    declare(http, tenant.headers, "city", "string")
    strong_kai = candidate("kai", "city", "Oslo", evidence="Oslo", change="new")
    # e1 stays cited by Kai's fact: erasing Mira reduces it to a stub, and its signals go,
    # Kai's weak one included (its text is gone).
    say(http, tenant, "e1", "Mira: CSV. Kai: Oslo.", weak("csv"), strong_kai, weak("csv", "kai"))
    say(http, tenant, "e2", "Mira wants JSON.", weak("json", subject="mira"))
    assert len(tenant_rows(pool, tenant.name)["weak_signals"]) == 3
    erased = http.delete("/v1/subjects/mira", headers=at(tenant))
    assert erased.status_code == 200, erased.text
    assert tenant_rows(pool, tenant.name)["weak_signals"] == []
    assert http.get("/v1/episodes/e1", headers=tenant.headers).json()["erased_at"] is not None
    assert http.get("/v1/facts/kai/city", headers=at(tenant)).json()["value"] == "Oslo"

    # A subject held only by buffered signals is still known to erasure.
    say(http, tenant, "e3", "Ana likes CSV.", weak("csv", subject="ana"))
    assert http.delete("/v1/subjects/ana", headers=at(tenant)).status_code == 200
    assert tenant_rows(pool, tenant.name)["weak_signals"] == []


def test_erasing_an_episode_removes_its_buffered_signals(
    http: Client, pool: ConnectionPool
) -> None:
    tenant = weak_tenant(http)
    say(http, tenant, "e1", "Export that as CSV.", weak("csv"))
    say(http, tenant, "e2", "Maybe JSON.", weak("json"))
    erased = http.delete("/v1/episodes/e1", headers=at(tenant))
    assert erased.status_code == 200, erased.text
    assert [s["episode_id"] for s in buffer(http, tenant)] == ["e2"]
    assert [row for row in tenant_rows(pool, tenant.name)["weak_signals"] if '"e1"' in row] == []
    # Without e1 the quorum starts over: one more CSV signal only waits.
    [again] = say(http, tenant, "e3", "CSV again.", weak("csv"))
    assert again["status"] == "buffered", again


def test_the_weak_signal_settings_and_the_buffer_refuse_as_422_problems(http: Client) -> None:
    tenant = weak_tenant(http)
    for field, value in (("weak_quorum", 0), ("weak_window_days", 0)):
        refused = http.put(
            "/v1/attributes/other",
            json={"value_type": "string", field: value},
            headers=tenant.headers,
        )
        assert_problem(refused, 422, "invalid", field=field)
    bad = http.get("/v1/buffer", params={"cursor": "nope"}, headers=at(tenant))
    assert_problem(bad, 422, "invalid", field="cursor")


def test_a_bulk_import_refuses_weak_candidates(store: MemoryStore, tenant: str) -> None:
    store.admin.declare_attribute(tenant, "export_format", {"value_type": "string"})
    line = {
        "tenant": tenant,
        "id": "e1",
        "occurred_at": "2026-06-01T09:00:00Z",
        "text": "Export that as CSV.",
        "updates": [weak("csv")],
    }
    imported = store.episodes.import_lines([json.dumps(line)])
    assert [(r.status, r.field) for r in imported.refused] == [("invalid", "strength")]
    assert store.weak_signals.list(tenant).signals == []


# -- the rule, over random sequences ----------------------------------------------------------

_TEXTS = ("CSV please.", "CSV again.", "CSV please.", "Always CSV.", "CSV, as usual.")
"""Episode n's text: e0 and e2 are copies (another id, the same content hash)."""
_CONFIRMATION = 4
"""Episode e4 is the user's confirmation."""

_steps = st.lists(
    st.tuples(
        st.integers(0, len(_TEXTS) - 1),
        st.sampled_from(["a", "a", "b"]),
        st.sampled_from([0, 0, 3, 20]),
    ),
    min_size=1,
    max_size=8,
)
_tenants = iter(range(1, 10_000))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=_steps, quorum=st.integers(1, 3))
def test_a_fact_appears_exactly_when_the_quorum_rule_says(
    pool: ConnectionPool, steps: list[tuple[int, str, int]], quorum: int
) -> None:
    clock = ManualClock(ts("2026-06-10T00:00:00Z"))
    store = MemoryStore(pool, clock=clock)
    tenant = f"weak-rule-{next(_tenants)}"
    store.admin.create_tenant(tenant)
    store.admin.declare_attribute(
        tenant, "mode", {"value_type": "string", "weak_quorum": quorum, "weak_window_days": 30}
    )
    for n, text in enumerate(_TEXTS):
        store.episodes.record(
            tenant,
            {
                "id": f"e{n}",
                "occurred_at": f"2026-06-0{n + 1}T09:00:00Z",
                "text": text,
                "kind": "user_confirmation" if n == _CONFIRMATION else "message",
            },
        )
    window = timedelta(days=30)
    buffered: list[tuple[str, str, str, Any]] = []  # episode, text, value, buffered at
    promoted: list[str] = []
    for n, value, days in steps:
        clock.set(clock() + timedelta(days=days))
        now = clock()
        buffered = [entry for entry in buffered if entry[3] + window > now]
        same = [entry for entry in buffered if entry[2] == value]
        if all(entry[0] != f"e{n}" for entry in same):
            same.append((f"e{n}", _TEXTS[n], value, now))
            buffered.append(same[-1])
        expected = n == _CONFIRMATION or len({entry[1] for entry in same}) >= quorum
        update = {"evidence": "", "subject": "mira", "attribute": "mode", "change": "new"}
        [result] = store.facts.apply_candidates(
            tenant, f"e{n}", [{**update, "value": value, "strength": "weak"}]
        )
        assert (result.status != "buffered") == expected, (result, buffered)
        assert (result.supporting_episode_ids is not None) == expected
        if expected:
            buffered = [entry for entry in buffered if entry[2] != value]
            if not promoted:
                assert result.status == "written", result
            if result.status == "written":
                promoted.append(value)
        listed = store.weak_signals.list(tenant).signals
        assert sorted((s.episode_id, s.value) for s in listed) == sorted(
            (entry[0], entry[2]) for entry in buffered
        )
        history = store.facts.history(tenant, "mira", "mode")
        assert {fact.value for fact in history} == set(promoted)
