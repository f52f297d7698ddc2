"""The write path on the real database: validation, the three rules, expiry, conflicts.

Bad candidates, result order, redeclarations, episodes recorded, refused or batched, and
expiries refused or answering unchanged, which every surface answers the same way, are scenarios
of tests/conformance/ (test_write_path.py, test_episodes.py, test_expiry_and_retraction.py)."""

from __future__ import annotations

import psycopg
import pytest

from store.db.clock import ManualClock
from store.errors import NotFound
from store.service import MemoryStore
from tests.conftest import ts
from tests.helpers import assert_value, declare, record


@pytest.fixture
def mira(store: MemoryStore, tenant: str) -> str:
    """A tenant with passport_deadline declared and episodes e1..e5 recorded."""
    declare(store, tenant)
    for number in range(1, 6):
        record(
            store,
            tenant,
            f"e{number}",
            f"2026-06-0{number}T09:00:00Z",
            text=f"Episode {number}: Her passport deadline is 2026-07-1{number}.",
        )
    return tenant


def values(store: MemoryStore, tenant: str) -> list[tuple[str, str, str | None]]:
    """The key's current knowledge as (value, valid_from, valid_to) in valid order."""
    return [
        (str(f.value), f.valid_from.isoformat(), f.valid_to.isoformat() if f.valid_to else None)
        for f in store.facts.history(tenant, "mira", "passport_deadline")
        if f.retired_at is None
    ]


def test_a_candidate_is_written_with_tenant_and_source_from_the_call(
    store: MemoryStore, mira: str
) -> None:
    result = assert_value(
        store,
        mira,
        "e1",
        "2026-07-15",
        "2026-06-01T11:00:00+02:00",
        evidence="Her   passport\ndeadline is 2026-07-11.",
    )
    assert (result.index, result.status, result.reason) == (0, "written", None)
    assert result.fact is not None
    assert result.fact.source_episode_id == "e1"
    assert result.fact.source_kind == "message"
    assert result.fact.valid_from == ts("2026-06-01T09:00:00Z")
    assert result.fact.evidence_verified is True
    assert result.fact.schema_version == 1
    assert store.episodes.get(mira, "e1").subjects == ["mira"]


def test_a_candidate_naming_its_own_tenant_or_source_is_refused(
    store: MemoryStore, mira: str
) -> None:
    for field in ("tenant_id", "source_episode_id"):
        result = assert_value(store, mira, "e1", "2026-07-15", **{field: "other"})
        assert (result.status, result.field) == ("invalid", field)
    assert values(store, mira) == []


def test_valid_from_defaults_to_the_episode_time_and_unquoted_evidence_is_flagged(
    store: MemoryStore, mira: str
) -> None:
    result = assert_value(store, mira, "e2", "2026-07-15", evidence="a quote not in e2")
    assert result.fact is not None
    assert result.fact.valid_from == ts("2026-06-02T09:00:00Z")
    assert result.fact.evidence_verified is False


def test_a_candidate_that_is_not_an_object_is_an_invalid_result_among_the_others(
    store: MemoryStore, mira: str
) -> None:
    # The HTTP routes refuse such a body whole; the store answers it per candidate.
    good = {
        "evidence": "",
        "subject": "mira",
        "attribute": "passport_deadline",
        "change": "new",
        "value": "2026-07-15",
    }
    results = store.facts.apply_candidates(mira, "e1", ["not an object", good])
    assert [(r.index, r.status, r.field) for r in results] == [
        (0, "invalid", None),
        (1, "written", None),
    ]


def test_same_value_repeat_inside_a_window_is_unchanged(store: MemoryStore, mira: str) -> None:
    written = assert_value(store, mira, "e1", "2026-07-15", "2026-06-01T09:00:00Z")
    repeat = assert_value(store, mira, "e2", "2026-07-15", "2026-06-02T09:00:00Z")
    exact = assert_value(store, mira, "e3", "2026-07-15", "2026-06-01T09:00:00Z")
    assert (repeat.status, exact.status) == ("unchanged", "unchanged")
    assert repeat.fact == written.fact == exact.fact
    assert len(store.facts.history(mira, "mira", "passport_deadline")) == 1


def test_equal_start_with_another_value_is_a_logged_conflict_that_changes_no_read(
    store: MemoryStore, mira: str
) -> None:
    assert_value(store, mira, "e1", "2026-07-15", "2026-06-01T09:00:00Z")
    before = store.facts.history(mira, "mira", "passport_deadline")
    first = assert_value(store, mira, "e2", "2026-06-30", "2026-06-01T09:00:00Z")
    again = assert_value(store, mira, "e2", "2026-06-30", "2026-06-01T09:00:00Z")
    assert (first.status, first.fact) == ("conflict", None)
    assert first.conflict_id is not None
    assert again.conflict_id == first.conflict_id  # logged once
    assert store.facts.history(mira, "mira", "passport_deadline") == before
    read = store.facts.at(mira, "mira", "passport_deadline", valid_at="2026-06-02T00:00:00Z")
    assert read.value == "2026-07-15"


def test_conflicts_are_stored_open_with_the_challenger(
    store: MemoryStore, mira: str, conninfo: str
) -> None:
    assert_value(store, mira, "e1", "2026-07-15", "2026-06-01T09:00:00Z")
    result = assert_value(store, mira, "e2", "2026-06-30", "2026-06-01T09:00:00Z")
    with psycopg.connect(conninfo) as conn:
        row = conn.execute(
            "SELECT status, policy, value, source_episode_id FROM conflicts"
            " WHERE tenant_id = %(tenant)s AND conflict_id = %(id)s",
            {"tenant": mira, "id": result.conflict_id},
        ).fetchone()
    assert row == ("open", "reject", "2026-06-30", "e2")


def test_a_future_valid_from_leaves_the_old_value_current_until_then(
    store: MemoryStore, mira: str, clock: ManualClock
) -> None:
    assert_value(store, mira, "e1", "2026-07-15", "2026-06-01T09:00:00Z")
    clock.set(ts("2026-06-02T00:00:00Z"))
    future = assert_value(store, mira, "e2", "2026-06-30", "2026-06-20T00:00:00Z")
    assert future.fact is not None
    assert future.fact.status == "future"
    assert store.facts.current(mira, "mira", "passport_deadline").value == "2026-07-15"
    clock.set(ts("2026-06-21T00:00:00Z"))
    assert store.facts.current(mira, "mira", "passport_deadline").value == "2026-06-30"


def test_rule_3_in_a_gap_left_by_an_expiry(
    store: MemoryStore, mira: str, clock: ManualClock
) -> None:
    assert_value(store, mira, "e1", "2026-07-15", "2026-06-01T09:00:00Z")
    assert_value(store, mira, "e3", "2026-07-31", "2026-06-20T00:00:00Z")
    clock.set(ts("2026-06-01T00:01:00Z"))
    expired = store.facts.expire(
        mira, "mira", "passport_deadline", at="2026-06-05T00:00:00Z", source_episode_id="e2"
    )
    assert expired.status == "expired"
    assert expired.fact is not None
    assert (expired.fact.ended_by, expired.fact.ended_by_kind) == (expired.expiry_id, "expiry")
    clock.set(ts("2026-06-01T00:02:00Z"))
    in_gap = assert_value(store, mira, "e4", "2026-07-01", "2026-06-10T00:00:00Z")
    assert in_gap.fact is not None
    assert in_gap.fact.supersedes is None
    assert values(store, mira) == [
        ("2026-07-15", "2026-06-01T09:00:00+00:00", "2026-06-05T00:00:00+00:00"),
        ("2026-07-01", "2026-06-10T00:00:00+00:00", "2026-06-20T00:00:00+00:00"),
        ("2026-07-31", "2026-06-20T00:00:00+00:00", None),
    ]
    with pytest.raises(NotFound):
        store.facts.at(mira, "mira", "passport_deadline", valid_at="2026-06-07T00:00:00Z")


def test_a_write_that_goes_back_in_system_time_is_invalid(
    store: MemoryStore, mira: str, clock: ManualClock
) -> None:
    clock.set(ts("2026-06-10T00:00:00Z"))
    assert_value(store, mira, "e1", "2026-07-15", "2026-06-01T09:00:00Z")
    clock.set(ts("2026-06-09T00:00:00Z"))
    back = assert_value(store, mira, "e2", "2026-06-30", "2026-06-03T00:00:00Z")
    assert (back.status, back.field) == ("invalid", "now")
    assert values(store, mira) == [("2026-07-15", "2026-06-01T09:00:00+00:00", None)]


def test_the_database_rejects_an_overlapping_version_inserted_with_raw_sql(
    store: MemoryStore, mira: str, conninfo: str
) -> None:
    written = assert_value(store, mira, "e1", "2026-07-15", "2026-06-01T09:00:00Z")
    assert written.fact is not None
    with psycopg.connect(conninfo) as conn, pytest.raises(psycopg.errors.ExclusionViolation):
        conn.execute(
            """
            INSERT INTO fact_versions (tenant_id, version_id, fact_id, subject, attribute, value,
                valid_from, valid_to, recorded_at, source_episode_id, source_kind,
                evidence_verified, schema_version)
            VALUES (%(tenant)s, gen_random_uuid(), gen_random_uuid(), 'mira',
                'passport_deadline', '"2026-06-30"', '2026-06-10T00:00:00Z', NULL,
                '2026-06-02T00:00:00Z', 'e2', 'message', false, 1)
            """,
            {"tenant": mira},
        )


def test_an_episode_recorded_without_an_id_is_given_one(store: MemoryStore, tenant: str) -> None:
    generated = store.episodes.record(
        tenant, {"occurred_at": "2026-06-01T09:00:00Z", "text": "no id given"}
    )
    assert len(generated.id) == 36
    assert store.episodes.get(tenant, generated.id) == generated


def test_typed_values_are_stored_normalized_and_compared_so(
    store: MemoryStore, tenant: str
) -> None:
    declare(store, tenant, "credit_limit", "number")
    record(store, tenant, "e1", "2026-06-01T09:00:00Z")
    written = assert_value(store, tenant, "e1", "1500.50", attribute="credit_limit")
    repeat = assert_value(
        store, tenant, "e1", "1500.5", attribute="credit_limit", valid_from="2026-06-02T00:00:00Z"
    )
    assert written.fact is not None
    assert (written.fact.value, repeat.status) == (1500.5, "unchanged")
