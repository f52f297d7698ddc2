"""The memory-health classifier: the nine fixture cases, each layer, and its priority order."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import get_args
from uuid import UUID

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from retrieval.memory_health.cases import load_cases, run_cases
from retrieval.memory_health.classifier import (
    GREEN_STATES,
    OPERATING_STATES,
    classify,
    operating_state,
)
from store.contract.common import MemoryType
from store.contract.health import Evidence, Expectation, Layer, TaskOutcome, VerdictCode
from tests.health_helpers import (
    BREAKABLE,
    DECIDED_AT,
    DECISION,
    MEMORY_TYPES,
    OTHER_SCOPE,
    TENANT,
    WRITTEN_AT,
    broken,
    code_of,
    healthy,
    memory_of,
    read,
    receipt,
)

NINE_CASES = {
    "healthy_working_memory": [("HEALTHY", "healthy"), ("HEALTHY", "investigate_execution")],
    "continuity_loss": [("CONTINUITY_LOST", "fix_memory_first")],
    "stale_semantic_fact": [("STALE", "degraded_dependency")],
    "scope_violation": [("SCOPE_MISMATCH", "fix_memory_first")],
    "outcomeless_episode": [("OUTCOMELESS_EPISODE", "fix_memory_first")],
    "retrieved_not_activated_episode": [("NOT_ACTIVATED", "degraded_dependency")],
    "unapproved_procedure": [("UNSAFE_PROCEDURE", "degraded_dependency")],
    "read_failure": [("READ_MISSING", "fix_memory_first")],
    "unavailable_evidence": [("UNKNOWN", "uncertain")],
}


def test_the_nine_cases_classify_as_expected() -> None:
    results = run_cases(load_cases())
    got = {r.case.name: [(v.verdict, v.operating_state) for v in r.verdicts] for r in results}
    assert got == NINE_CASES
    assert all(all(result.matches()) for result in results)
    assert [m for result in results for m in result.mismatches()] == []


def test_the_cases_file_carries_the_hashes_its_expectations_imply() -> None:
    for case in load_cases():
        data = case.input
        expected = {
            (e.memory.type, e.memory.memory_key(secret=b"")): e.memory.scope_hash(
                data.tenant_id, e.scope, secret=b""
            )
            for e in data.expectations
        }
        for r in data.receipts:
            scope = expected[(r.memory_type, r.memory_key)]
            if r.action == "read":
                assert r.expected_scope_hash == scope, case.name
            if case.name != "scope_violation":
                assert r.observed_scope_hash == scope, case.name
        decisions = {r.decision_id for r in data.receipts}
        assert all(e.decision_id in decisions for e in data.expectations) == data.available


def test_a_changed_case_is_reported_as_a_mismatch() -> None:
    case = load_cases()[0]
    wrong = case.model_copy(update={"expected": list(reversed(case.expected))})
    (result,) = run_cases([wrong])
    assert result.matches() == [False, False]
    assert result.mismatches()[0].startswith("healthy_working_memory[0]: expected HEALTHY/")


@pytest.mark.parametrize("memory_type", MEMORY_TYPES)
def test_a_healthy_situation_is_healthy(memory_type: MemoryType) -> None:
    situation = healthy(memory_of(memory_type, "name-one", "name-two"), "verified")
    verdict = classify(situation.expectation, situation.evidence(), tenant_id=TENANT)
    assert (verdict.verdict, verdict.layer, verdict.operating_state) == (
        "HEALTHY",
        "healthy",
        "healthy",
    )
    assert verdict.receipt_id == situation.read.receipt_id
    assert verdict.memory_type == memory_type


@pytest.mark.parametrize("memory_type", MEMORY_TYPES)
@pytest.mark.parametrize("layer", BREAKABLE)
def test_each_layer_fails_alone(memory_type: MemoryType, layer: Layer) -> None:
    situation = broken(healthy(memory_of(memory_type, "name-one", "name-two")), [layer])
    verdict = classify(situation.expectation, situation.evidence(), tenant_id=TENANT)
    assert verdict.verdict == code_of(layer, memory_type)
    assert verdict.layer == layer
    assert verdict.operating_state == ("uncertain" if layer == "available" else "fix_memory_first")
    judged_a_read = layer not in ("available", "written", "read")
    assert (verdict.receipt_id is not None) == judged_a_read


names = st.from_regex(r"[a-z]{1,12}", fullmatch=True)


@settings(deadline=None, max_examples=300)
@given(
    memory_type=st.sampled_from(MEMORY_TYPES),
    layers=st.sets(st.sampled_from(BREAKABLE), min_size=1),
    outcome=st.sampled_from([None, "verified", "missing"]),
    first=names,
    second=names,
)
def test_the_earliest_broken_layer_wins(
    memory_type: MemoryType,
    layers: set[Layer],
    outcome: TaskOutcome | None,
    first: str,
    second: str,
) -> None:
    first, second = f"zq-first-{first}", f"zq-second-{second}"
    situation = broken(healthy(memory_of(memory_type, first, second), outcome), layers)
    verdict = classify(situation.expectation, situation.evidence(), tenant_id=TENANT)
    earliest = min(layers, key=BREAKABLE.index)
    assert (verdict.verdict, verdict.layer) == (code_of(earliest, memory_type), earliest)
    assert verdict.operating_state == operating_state(verdict.verdict, outcome)
    assert verdict.operating_state not in GREEN_STATES
    assert first not in verdict.detail
    assert second not in verdict.detail
    assert "zq-" not in verdict.detail


def test_a_decision_no_receipt_names_is_unknown() -> None:
    memory = memory_of("semantic", "subject-a", "attribute-b")
    situation = healthy(memory, "verified")
    # Only a write, and a read made for another decision.
    other = read(memory, 3, decision_id=UUID(int=99))
    evidence = Evidence(available=True, receipts=[receipt(memory, 1), other])
    verdict = classify(situation.expectation, evidence, tenant_id=TENANT)
    assert (verdict.verdict, verdict.operating_state) == ("UNKNOWN", "uncertain")


def test_a_decision_that_never_read_the_memory_is_a_read_failure_not_unactivated() -> None:
    memory = memory_of("episodic", "episode-a", "unused")
    elsewhere = memory_of("episodic", "episode-b", "unused")
    situation = healthy(memory)
    evidence = Evidence(available=True, receipts=[receipt(memory, 1), read(elsewhere, 9)])
    verdict = classify(situation.expectation, evidence, tenant_id=TENANT)
    assert verdict.verdict == "READ_MISSING"


def test_a_write_after_the_decision_does_not_count_as_written() -> None:
    memory = memory_of("semantic", "subject-a", "attribute-b")
    late = receipt(memory, 1, recorded_at=DECIDED_AT + timedelta(seconds=1))
    nothing = read(memory, 2, written_at=None, version=None, invalidation=None, activated=False)
    situation = healthy(memory)
    verdict = classify(situation.expectation, Evidence(True, [late, nothing]), tenant_id=TENANT)
    assert verdict.verdict == "WRITE_MISSING"
    on_time = late.model_copy(update={"recorded_at": DECIDED_AT})
    verdict = classify(situation.expectation, Evidence(True, [on_time, nothing]), tenant_id=TENANT)
    assert verdict.verdict == "READ_MISSING"


def test_a_scope_mismatch_stops_before_activation() -> None:
    memory = memory_of("procedural", "procedure-a", "support")
    situation = broken(healthy(memory), ["scope", "activated", "invariant"])
    verdict = classify(situation.expectation, situation.evidence(), tenant_id=TENANT)
    assert verdict.verdict == "SCOPE_MISMATCH"
    # The caller's scope string is part of the hash: the other scope's read fits that scope.
    elsewhere = situation.expectation.model_copy(update={"scope": OTHER_SCOPE})
    both = Evidence(True, [*situation.evidence().receipts, receipt(memory, 5)])
    assert classify(elsewhere, both, tenant_id=TENANT).verdict == "NOT_ACTIVATED"


def test_an_activated_read_is_judged_before_a_later_unactivated_one() -> None:
    memory = memory_of("semantic", "subject-a", "attribute-b")
    situation = healthy(memory)
    later = read(memory, 3, read_at=DECIDED_AT + timedelta(seconds=5), activated=False)
    verdict = classify(
        situation.expectation,
        Evidence(True, [*situation.evidence().receipts, later]),
        tenant_id=TENANT,
    )
    assert (verdict.verdict, verdict.receipt_id) == ("HEALTHY", situation.read.receipt_id)


def test_the_expectations_budget_overrides_the_reads_own() -> None:
    memory = memory_of("semantic", "subject-a", "attribute-b")
    situation = healthy(memory)
    lenient = situation.expectation.model_copy(update={"freshness_budget_s": None})
    tight = replace(situation, read=situation.read.model_copy(update={"freshness_budget_s": 59}))
    assert classify(lenient, tight.evidence(), tenant_id=TENANT).verdict == "STALE"
    assert classify(situation.expectation, tight.evidence(), tenant_id=TENANT).verdict == (
        "HEALTHY"
    )
    stale = classify(lenient, tight.evidence(), tenant_id=TENANT)
    assert stale.detail == "The version read was 60 s old, over the freshness budget of 59 s."
    assert timedelta(seconds=60) == DECIDED_AT - WRITTEN_AT


def test_a_later_checkpoint_written_before_the_read_loses_continuity() -> None:
    memory = memory_of("working", "thread-a", "unused")
    situation = healthy(memory)
    unpinned = situation.expectation.model_copy(
        update={"memory": memory.model_copy(update={"version": None})}
    )
    newer = receipt(memory, 7, version="3", recorded_at=DECIDED_AT)
    after = newer.model_copy(update={"recorded_at": DECIDED_AT + timedelta(seconds=1)})
    receipts = situation.evidence().receipts
    assert classify(unpinned, Evidence(True, [*receipts, after]), tenant_id=TENANT).verdict == (
        "HEALTHY"
    )
    lost = classify(unpinned, Evidence(True, [*receipts, newer]), tenant_id=TENANT)
    assert (lost.verdict, lost.detail) == (
        "CONTINUITY_LOST",
        "Checkpoint version 3 was written before the read, which restored version 2.",
    )
    pinned = situation.expectation.model_copy(
        update={"memory": memory.model_copy(update={"version": 3})}
    )
    assert classify(pinned, situation.evidence(), tenant_id=TENANT).verdict == "CONTINUITY_LOST"


@pytest.mark.parametrize("outcome", [None, "verified", "missing"])
@pytest.mark.parametrize("code", get_args(VerdictCode))
def test_operating_states_cross_health_with_the_task_outcome(
    code: VerdictCode, outcome: TaskOutcome | None
) -> None:
    state = operating_state(code, outcome)
    if code == "UNKNOWN":
        assert state == "uncertain"
    elif code == "HEALTHY":
        assert state == ("healthy" if outcome == "verified" else "investigate_execution")
    else:
        assert state == ("degraded_dependency" if outcome == "verified" else "fix_memory_first")
    assert (state in GREEN_STATES) == (code == "HEALTHY" and outcome == "verified")


def test_the_operating_table_names_every_state_once() -> None:
    assert sorted(row.state for row in OPERATING_STATES) == sorted(
        ["healthy", "investigate_execution", "degraded_dependency", "fix_memory_first", "uncertain"]
    )
    assert all(row.action.endswith(".") for row in OPERATING_STATES)


def test_expectations_refuse_unknown_fields_and_types() -> None:
    base = {"decision_id": str(DECISION)}
    with pytest.raises(ValidationError) as caught:
        Expectation.model_validate({**base, "memory": {"type": "vector", "key": "k"}})
    assert caught.value.errors()[0]["type"] == "union_tag_invalid"
    with pytest.raises(ValidationError):
        Expectation.model_validate(
            {**base, "memory": {"type": "episodic", "episode_id": "e"}, "colour": "red"}
        )
    with pytest.raises(ValidationError):
        Expectation.model_validate(
            {**base, "memory": {"type": "working", "thread": "t", "version": 0}}
        )
