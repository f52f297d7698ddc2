"""The memory-health classifier: pure functions from receipts to one verdict per expectation.

The layers are checked in a fixed order and the first that fails gives the verdict:
available, written, read, scope, freshness, provenance, activated, then the memory type's own
invariant. So a scope mismatch is reported before activation is looked at, and a read that
found nothing is a read failure, never "not activated". Memory health is then crossed with
the task's own outcome: missing evidence is never green.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from store.contract.health import (
    Evidence,
    Expectation,
    Layer,
    OperatingState,
    TaskOutcome,
    Verdict,
    VerdictCode,
    WorkingMemory,
)
from store.contract.receipts import Receipt


class OperatingRow(NamedTuple):
    """One row of the operating-state table."""

    memory_health: str
    task_outcome: str
    state: OperatingState
    action: str


OPERATING_STATES: tuple[OperatingRow, ...] = (
    OperatingRow("healthy", "verified", "healthy", "Close the memory question."),
    OperatingRow(
        "healthy",
        "missing",
        "investigate_execution",
        "Investigate the execution or the verification of its destination.",
    ),
    OperatingRow(
        "failed",
        "verified",
        "degraded_dependency",
        "Record a degraded dependency: the run may have succeeded by a fallback.",
    ),
    OperatingRow(
        "failed",
        "missing",
        "fix_memory_first",
        "Fix the first failed memory layer before trusting a retry.",
    ),
    OperatingRow(
        "unknown", "any", "uncertain", "Stay uncertain: unavailable evidence is never green."
    ),
)
"""Memory health (healthy, failed, unknown) crossed with the task outcome: state, next step."""

GREEN_STATES: frozenset[OperatingState] = frozenset({"healthy"})
"""The states that need no action."""


def operating_state(verdict_code: VerdictCode, task_outcome: TaskOutcome | None) -> OperatingState:
    """The operating state of a verdict given the task's outcome (None counts as missing)."""
    if verdict_code == "UNKNOWN":
        health = "unknown"
    else:
        health = "healthy" if verdict_code == "HEALTHY" else "failed"
    outcome = task_outcome or "missing"
    for row in OPERATING_STATES:
        if row.memory_health == health and row.task_outcome in (outcome, "any"):
            return row.state
    raise AssertionError(f"no operating state for {health} and {outcome}")  # pragma: no cover


def classify_all(
    expectations: Iterable[Expectation], evidence: Evidence, *, tenant_id: str
) -> list[Verdict]:
    """One verdict per expectation, in order."""
    return [classify(expectation, evidence, tenant_id=tenant_id) for expectation in expectations]


def classify(expectation: Expectation, evidence: Evidence, *, tenant_id: str) -> Verdict:
    """Judge one expected memory against the evidence; the first failing layer wins."""
    code, layer, receipt, detail = _judge(expectation, evidence, tenant_id)
    return Verdict(
        decision_id=expectation.decision_id,
        memory_type=expectation.memory.type,
        verdict=code,
        layer=layer,
        receipt_id=None if receipt is None else receipt.receipt_id,
        detail=detail,
        operating_state=operating_state(code, expectation.task_outcome),
    )


_Judgement = tuple[VerdictCode, Layer, Receipt | None, str]
Scoped = Callable[[Receipt], bool]
"""Whether a receipt observed the expected scope (hashed with its own secret version)."""


def _judge(expectation: Expectation, evidence: Evidence, tenant_id: str) -> _Judgement:
    memory = expectation.memory
    # Each receipt's hashes were made with the tenant's secret of its own version.
    keys = {v: memory.memory_key(secret=s) for v, s in evidence.keyring.items()}
    scopes = {
        v: memory.scope_hash(tenant_id, expectation.scope, secret=s)
        for v, s in evidence.keyring.items()
    }

    def scoped(receipt: Receipt) -> bool:
        return receipt.observed_scope_hash == scopes.get(receipt.secret_version)

    if not evidence.available:
        return "UNKNOWN", "available", None, "The memory evidence was not available."
    decision = [r for r in evidence.receipts if r.decision_id == expectation.decision_id]
    if not decision:
        return "UNKNOWN", "available", None, "No receipt names this decision."

    def same_memory(receipt: Receipt) -> bool:
        return receipt.memory_type == memory.type and receipt.memory_key == keys.get(
            receipt.secret_version
        )

    reads = [r for r in decision if r.action == "read" and r.read_at is not None]
    decided_at = min((r.read_at for r in reads if r.read_at is not None), default=None)
    matching = [r for r in reads if same_memory(r)]
    writes = [
        w
        for w in evidence.receipts
        if w.action == "write"
        and same_memory(w)
        and (decided_at is None or w.recorded_at <= decided_at)
    ]
    found = [r for r in matching if r.written_at is not None]
    in_scope = [r for r in found if scoped(r)]
    if not any(scoped(w) for w in writes) and not in_scope:
        return (
            "WRITE_MISSING",
            "written",
            None,
            (
                f"No write of this memory in the expected scope before the decision"
                f" ({len(writes)} write(s) of it in other scopes)."
            ),
        )
    if not found:
        return (
            "READ_MISSING",
            "read",
            None,
            f"The decision made {len(matching)} read(s) of this memory and none found it.",
        )
    if not in_scope:
        return (
            "SCOPE_MISMATCH",
            "scope",
            _pick(found),
            f"{len(found)} read(s) found this memory, none in the expected scope.",
        )
    receipt = _pick(in_scope)
    return _judge_receipt(expectation, receipt, writes, scoped)


def _pick(receipts: Sequence[Receipt]) -> Receipt:
    """The read to judge: an activated one first, then the latest read, deterministically."""
    return max(
        receipts,
        key=lambda r: (r.activated, r.read_at or r.recorded_at, r.recorded_at, str(r.receipt_id)),
    )


def _judge_receipt(
    expectation: Expectation, receipt: Receipt, writes: Sequence[Receipt], scoped: Scoped
) -> _Judgement:
    """Freshness, provenance, activation and the type's invariant for the chosen read."""
    budget = expectation.freshness_budget_s
    if budget is None:
        budget = receipt.freshness_budget_s
    age = _age(receipt)
    if budget is not None and age > budget:
        return (
            "STALE",
            "freshness",
            receipt,
            (
                f"The version read was {_seconds(age)} s old,"
                f" over the freshness budget of {budget} s."
            ),
        )
    if receipt.provenance is None:
        return "NO_PROVENANCE", "provenance", receipt, "The version read has no provenance."
    if not receipt.activated:
        return (
            "NOT_ACTIVATED",
            "activated",
            receipt,
            "The memory was read in scope but did not reach the decision.",
        )
    failure = _invariant_failure(expectation, receipt, writes, scoped)
    if failure is not None:
        return failure[0], "invariant", receipt, failure[1]
    return "HEALTHY", "healthy", receipt, "Every layer and the type's invariant passed."


def _invariant_failure(
    expectation: Expectation, receipt: Receipt, writes: Sequence[Receipt], scoped: Scoped
) -> tuple[VerdictCode, str] | None:
    """The memory type's own rule: its failure code and detail, or None when it holds."""
    memory = expectation.memory
    if isinstance(memory, WorkingMemory):
        return _continuity_failure(memory, receipt, writes, scoped)
    if memory.type == "semantic" and receipt.invalidation != "current":
        return "SUPERSEDED", (
            f"The fact version read was not current at decision time"
            f" (invalidation: {receipt.invalidation or 'none'})."
        )
    if memory.type == "episodic" and receipt.outcome in (None, "unknown"):
        return "OUTCOMELESS_EPISODE", (
            f"The episode read has no observed outcome (outcome: {receipt.outcome or 'none'})."
        )
    if memory.type == "procedural" and receipt.approved is not True:
        return "UNSAFE_PROCEDURE", (
            f"The procedure version served is not an approved one"
            f" (approved: {_flag(receipt.approved)})."
        )
    return None


def _continuity_failure(
    memory: WorkingMemory, receipt: Receipt, writes: Sequence[Receipt], scoped: Scoped
) -> tuple[VerdictCode, str] | None:
    """Continuity: the checkpoint read is current, the one required, and the latest written."""
    if receipt.invalidation != "current":
        return "CONTINUITY_LOST", (
            f"The checkpoint read was not current (invalidation: {receipt.invalidation or 'none'})."
        )
    read_version = _number(receipt.version)
    if memory.version is not None and receipt.version != str(memory.version):
        return "CONTINUITY_LOST", (
            f"The checkpoint read was version {_shown(read_version)},"
            f" the decision needed version {memory.version}."
        )
    if read_version is None:
        return None
    later = [
        number
        for w in writes
        if scoped(w)
        and receipt.read_at is not None
        and w.recorded_at <= receipt.read_at
        and (number := _number(w.version)) is not None
        and number > read_version
    ]
    if later:
        return "CONTINUITY_LOST", (
            f"Checkpoint version {max(later)} was written before the read,"
            f" which restored version {read_version}."
        )
    return None


def _age(receipt: Receipt) -> float:
    """How old, in seconds, the version read was when read (0 for a read that found none)."""
    if receipt.read_at is None or receipt.written_at is None:
        return 0.0
    return (receipt.read_at - receipt.written_at).total_seconds()


def _seconds(value: float) -> str:
    """Seconds as printed in a detail: whole when whole, else to the millisecond."""
    return f"{value:.3f}".rstrip("0").rstrip(".")


def _number(version: str | None) -> int | None:
    """A version as a number, or None when it is not a decimal integer."""
    if version is None or not version.isdecimal():
        return None
    return int(version)


def _shown(version: int | None) -> str:
    return "unnumbered" if version is None else str(version)


def _flag(value: bool | None) -> str:
    return "none" if value is None else str(value).lower()
